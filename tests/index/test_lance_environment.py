"""ragtt's defaults for Lance's environment (``ragtt._lazy.lance_environment``): set before Lance
first reads it, on every path that loads Lance, and never over a deployment's own value."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NAMES = ("RUST_LOG", "LANCE_DEFAULT_BATCH_SIZE", "LANCE_DEFAULT_IO_BUFFER_SIZE")
CHILD = """
import json, os, sys
import ragtt
with ragtt.Project.open(sys.argv[1], embedder=ragtt.HashEmbedder(), progress=False) as proj:
    proj.ingest_texts({"a.txt": "shock waves on a cone"})
print(json.dumps({name: os.environ.get(name) for name in sys.argv[2:]}))
"""


def _child(tmp_path: Path, env: dict[str, str]) -> dict[str, str | None]:
    clean = {k: v for k, v in os.environ.items() if k not in NAMES}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "p"), *NAMES],
        env={**clean, "PYTHONPATH": str(REPO), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_project_runs_lance_with_ragtts_defaults(tmp_path: Path) -> None:
    assert _child(tmp_path, {}) == {
        "RUST_LOG": "error",
        "LANCE_DEFAULT_BATCH_SIZE": "1024",
        "LANCE_DEFAULT_IO_BUFFER_SIZE": str(32 << 20),
    }


def test_a_deployments_own_values_win(tmp_path: Path) -> None:
    own = {"RUST_LOG": "warn", "LANCE_DEFAULT_BATCH_SIZE": "4096", "LANCE_DEFAULT_IO_BUFFER_SIZE": str(64 << 20)}
    assert _child(tmp_path, own) == own


ARENAS = """
import ctypes, sys, threading
import ragtt
ragtt.Project.open(sys.argv[1], embedder=ragtt.HashEmbedder(), progress=False).ingest_texts({"a.txt": "a cone"})
held, barrier = [], threading.Barrier(8)
def work():
    held.append(bytearray(100_000))  # a thread's first malloc picks its arena
    barrier.wait()
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
ctypes.CDLL(None).malloc_stats()  # one "Arena N:" block per glibc arena, on stderr
"""


def _arenas(project: str, env: dict[str, str]) -> int:
    clean = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    done = subprocess.run(
        [sys.executable, "-c", ARENAS, project],
        env={**clean, "PYTHONPATH": str(REPO), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return sum(line.startswith("Arena ") for line in done.stderr.splitlines())


def test_native_threads_share_a_few_malloc_arenas_unless_the_deployment_says(tmp_path: Path) -> None:
    """After a project opened, eight more live threads make no new glibc arena: they share
    the ones that exist (the main one, and those pyarrow's and polars' thread pools made
    before Lance loaded). With the deployment's own ``MALLOC_ARENA_MAX`` they get one each."""
    assert _arenas(str(tmp_path / "capped"), {}) <= 4
    assert _arenas(str(tmp_path / "own"), {"MALLOC_ARENA_MAX": "64"}) >= 9
