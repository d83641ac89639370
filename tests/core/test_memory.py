"""release_free_memory: what a phase freed no longer counts in the process's resident set; and
the arena cap, which only ``ragtt.tune_process()`` applies."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from ragtt._memory import release_free_memory

REPO = Path(__file__).resolve().parents[2]

glibc = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's"
)


def _resident_bytes() -> int:
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    import resource

    return pages * resource.getpagesize()


@glibc
def test_freed_heap_in_the_middle_goes_back_to_the_os() -> None:
    # 80 MB of malloc'd (not pymalloc: > 512 bytes) blocks, freed under one that stays: glibc
    # cannot shrink its heap past a block in use, so free() alone leaves them resident.
    blocks = [bytes(2000) + bytes([i % 256]) for i in range(40_000)]
    keep = bytes(2000) + b"top"
    del blocks
    before = _resident_bytes()
    release_free_memory()
    after = _resident_bytes()
    assert keep
    assert before - after > 40_000_000, (before, after)


ARENAS = """
import ctypes, sys, threading
import ragtt
if sys.argv[2] == "tuned":
    ragtt.tune_process()
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


def _arenas(project: Path, mode: str, env: dict[str, str]) -> int:
    clean = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    done = subprocess.run(
        [sys.executable, "-c", ARENAS, str(project), mode],
        env={**clean, "PYTHONPATH": str(REPO), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return sum(line.startswith("Arena ") for line in done.stderr.splitlines())


@glibc
def test_tune_process_caps_the_malloc_arenas_and_a_library_process_keeps_glibcs_own(tmp_path: Path) -> None:
    """Tuned, eight more live threads after a project opened make no new glibc arena: they
    share the ones that exist (the main one, and those pyarrow's and polars' thread pools made
    before Lance loaded). Untuned (ragtt used as a library), or with the deployment's own
    ``MALLOC_ARENA_MAX``, glibc's limit stands and they get one each."""
    assert _arenas(tmp_path / "tuned", "tuned", {}) <= 4
    assert _arenas(tmp_path / "library", "library", {}) >= 9
    assert _arenas(tmp_path / "own", "tuned", {"MALLOC_ARENA_MAX": "64"}) >= 9
