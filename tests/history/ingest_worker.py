"""One of several processes writing to one project: ingests new and changed documents
until a deadline, and prints what it added (one JSON line per ingest)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import ragtt


def main() -> None:
    path, name, seconds = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    deadline = time.monotonic() + seconds
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        for i in range(10_000):
            if time.monotonic() > deadline:
                break
            texts = {f"{name}-{i:04d}.md": f"# {name} note {i}\n\nWorker {name} wrote note {i} about topic {i % 5}.\n"}
            if i % 4 == 3:  # and now and then change a document it wrote before
                texts[f"{name}-{i - 3:04d}.md"] = f"# {name} note {i - 3}\n\nRevised by {name} at step {i}.\n"
            report = proj.ingest_texts(texts)
            print(
                json.dumps(
                    {
                        "added": report.documents_added,
                        "version": report.index_version_after,
                        "failed": report.failed,
                        "warnings": report.warnings,
                    }
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
