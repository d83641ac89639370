"""release_free_memory: what a phase freed no longer counts in the process's resident set."""

from __future__ import annotations

import platform
import sys

import pytest

from ragtt._memory import release_free_memory

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
