"""One of several processes writing to one project: ingests new and changed documents
until a deadline or a count, and prints what it added (one JSON line per ingest).

    python -m tests.history.ingest_worker PROJECT NAME SECONDS [--count N] [--gate DIR --peers A,B]

With a gate, after its first ingest (which pays the seconds of LanceDB imports and first
writes on busy cores) it writes ``DIR/NAME.ready`` and waits (bounded) until every peer has
written its own: the workers run their other ingests from the same moment, and each line
says when this one passed the gate (``gate_t``, the system-wide monotonic clock).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import ragtt

GATE_WAIT_S = 300.0


def wait_at_gate(gate: Path, name: str, peers: list[str]) -> float:
    (gate / f"{name}.ready").touch()
    deadline = time.monotonic() + GATE_WAIT_S
    while not all((gate / f"{peer}.ready").exists() for peer in peers):
        if time.monotonic() > deadline:
            raise SystemExit(f"{name}: the peers {peers} were not all ready after {GATE_WAIT_S} s")
        time.sleep(0.02)
    return time.monotonic()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path", type=Path)
    parser.add_argument("name")
    parser.add_argument("seconds", type=float)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--gate", type=Path)
    parser.add_argument("--peers", default="", help="comma-separated names of the workers at the gate")
    args = parser.parse_args()
    name = args.name
    deadline = time.monotonic() + args.seconds
    gate_t: float | None = None
    with ragtt.Project.open(args.path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        for i in range(args.count):
            if time.monotonic() > deadline:
                break
            if i == 1 and args.gate is not None:
                gate_t = wait_at_gate(args.gate, name, args.peers.split(","))
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
                        "t": time.monotonic(),
                        "gate_t": gate_t,
                    }
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
