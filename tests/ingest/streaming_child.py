"""Ingest one file in a fresh process and report its memory, as JSON on stdout.

    python -m tests.ingest.streaming_child ROOT FILE CHUNKS CHARS [KILL_AT [MAINTAIN]]

``CHUNKS``/``CHARS`` are the batch limits (0: unbounded, one batch). ``MAINTAIN`` 0 turns off
the maintenance (compaction, full-text indexing) that follows a large ingest, so the peak
is the ingest's own write. ``KILL_AT`` > 0 kills the
process (SIGKILL) mid-stream: at the KILL_AT-th batch LanceDB pulls (each batch reads its
vectors back from the embedding cache), after printing "table write started" to stderr.
"""

from __future__ import annotations

import functools
import json
import os
import resource
import signal
import sys
import zlib
from pathlib import Path
from typing import Any

import numpy as np

DIM = 64


class CrcEmbedder:
    """Deterministic and cheap, so the memory measured is ragtt's, not a model's."""

    model_id = "test-crc32-v1"
    dim = DIM

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            code = zlib.crc32(text.encode("utf-8"))
            out[row, code % DIM] = 1.0
            out[row, (code >> 8) % DIM] += 0.5
        return out


def peak_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def _kill_mid_stream(kill_at: int) -> None:
    from ragtt.events.cache import EmbeddingCache
    from ragtt.index.table import ChunkTable

    pulled = [-1]  # -1: the table write has not begun
    embed, add_rows = EmbeddingCache.embed, ChunkTable.add_rows

    @functools.wraps(embed)
    def counting_embed(self: Any, *args: Any, **kwargs: Any) -> Any:
        if pulled[0] >= 0:
            pulled[0] += 1
            if pulled[0] == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
        return embed(self, *args, **kwargs)

    @functools.wraps(add_rows)
    def marked_add_rows(self: Any, rows: Any) -> int:
        print("table write started", file=sys.stderr, flush=True)
        pulled[0] = 0
        return add_rows(self, rows)

    EmbeddingCache.embed = counting_embed  # type: ignore[method-assign]
    ChunkTable.add_rows = marked_add_rows  # type: ignore[method-assign]


def main(root: str, file: str, chunks: int, chars: int, kill_at: int = 0, maintain: bool = True) -> dict[str, Any]:
    import ragtt
    from ragtt.index import maintenance
    from ragtt.ingest import pipeline

    if not maintain:
        maintenance.MAINTAIN_ROWS = 10**15

    limits = pipeline.BatchLimits(chunks or 10**12, chars or 10**15)
    pipeline.DEFAULT_BATCH = limits  # what Project.ingest reads at call time
    if kill_at:
        _kill_mid_stream(kill_at)
    proj = ragtt.Project.open(root, embedder=CrcEmbedder(), progress=False)
    baseline = peak_bytes()
    report = proj.ingest([file])
    peak = peak_bytes()
    [completed] = proj.events.query(types="ingest.completed")[-1:]
    return {
        "input_bytes": Path(file).stat().st_size,
        "baseline_bytes": baseline,
        "peak_bytes": peak,
        "versions": completed.payload["versions"],
        "chunks": report.chunks_added,
        "failed": report.failed,
        "seconds": report.elapsed_s,
    }


if __name__ == "__main__":
    root, file, chunks, chars, *rest = sys.argv[1:]
    kill_at, maintain = (int(rest[0]) if rest else 0), (rest[1:] or ["1"])[0] != "0"
    print(json.dumps(main(root, file, int(chunks), int(chars), kill_at, maintain)))
