"""Giving freed memory back to the operating system, and keeping native threads from
hoarding it.

The full-text index update and the ANN index training run in Lance's native threads, each
of which allocates from its own glibc arena. What the first frees stays in its arena,
resident, and the training allocates beside it: the peaks add up. Measured on a 200 MB text
file: 136 MiB free but resident after the full-text update; with it returned
(``malloc_trim``) the training peaked at 901 MiB instead of 1,101.

glibc makes up to 8 arenas per core as threads contend for one; every Lance reader, writer
and index builder thread that gets its own keeps what it freed for itself. With at most two
(``cap_malloc_arenas``, what ``MALLOC_ARENA_MAX=2`` does at start; applied by ``tune_process``) the same 200 MB ingest
peaked at 520 MiB instead of 605-665 (four runs of each, 2026-12-02).
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from typing import Any

__all__ = ["MALLOC_ARENAS", "cap_malloc_arenas", "release_free_memory"]

MALLOC_ARENAS = 2
_M_ARENA_MAX = -8  # mallopt's parameter number for the arena cap (glibc's malloc.h)


@functools.cache
def _glibc(name: str) -> Any:
    """A glibc malloc function (None on other platforms, or a C library without it: musl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)  # the C library this process already runs on
    except OSError:
        return None
    return getattr(libc, name, None)


@functools.cache
def cap_malloc_arenas() -> None:
    """Let threads made from now on share the glibc arenas that exist once there are
    ``MALLOC_ARENAS``, unless the deployment chose its own cap (``MALLOC_ARENA_MAX``, which
    glibc read at start). Process-wide, so only ``ragtt.tune_process()`` calls it (the CLI and
    servers do, before Lance starts its threads); arenas that already exist stay. Best effort:
    glibc fixes its limit (8 per core) once a process has had more than 8 arenas, and then
    ignores this."""
    mallopt = _glibc("mallopt")
    if mallopt is not None and "MALLOC_ARENA_MAX" not in os.environ:
        mallopt(_M_ARENA_MAX, MALLOC_ARENAS)


def release_free_memory() -> None:
    """Hand the pages the allocator holds free back to the OS (glibc; elsewhere nothing)."""
    trim = _glibc("malloc_trim")
    if trim is not None:
        trim(0)
