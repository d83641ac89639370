"""Giving freed memory back to the operating system between the phases of maintenance.

The full-text index update and the ANN index training run in Lance's native threads, each
of which allocates from its own glibc arena. What the first frees stays in its arena,
resident, and the training allocates beside it: the peaks add up. Measured on a 200 MB text
file: 136 MiB free but resident after the full-text update; with it returned
(``malloc_trim``) the training peaked at 901 MiB instead of 1,101.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from collections.abc import Callable

__all__ = ["release_free_memory"]


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)  # the C library this process already runs on
    except OSError:
        return None
    trim: Callable[[int], int] | None = getattr(libc, "malloc_trim", None)  # glibc; musl has none
    return trim


def release_free_memory() -> None:
    """Hand the pages the allocator holds free back to the OS (glibc; elsewhere nothing)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
