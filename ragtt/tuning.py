"""Process-wide tuning, for programs whose main job is ragtt: ``tune_process()``.

Importing or opening ragtt changes nothing outside ragtt: a program that uses it as a library
keeps its environment and its allocator as they were. The ``ragtt`` CLI and the servers
(``ragtt serve``, ``ragtt mcp``) call ``tune_process()`` first, and so can any program that
wants the same settings; a variable the deployment already set is left alone.

What it sets, before Lance's native threads start:

- ``RUST_LOG=error``: Lance's native logs stay quiet.
- ``LANCE_DEFAULT_BATCH_SIZE`` (1,024 rows instead of 8,192) and
  ``LANCE_DEFAULT_IO_BUFFER_SIZE`` (32 MiB of reads buffered ahead instead of 2 GiB): index
  builds read the whole table ahead, and take these only from the environment. ragtt's own
  scans pass the same two values as parameters (``SCAN_BATCH_ROWS``, ``SCAN_IO_BUFFER_BYTES``),
  tuned or not.
- ``TOKENIZERS_PARALLELISM=false``: the tokenizers library stops warning when a process forks.
- glibc's arena cap (``ragtt._memory.cap_malloc_arenas``), unless ``MALLOC_ARENA_MAX`` is set.
"""

from __future__ import annotations

import os
import threading

__all__ = ["SCAN_BATCH_ROWS", "SCAN_IO_BUFFER_BYTES", "tune_process"]

SCAN_BATCH_ROWS = 1024
SCAN_IO_BUFFER_BYTES = 32 << 20

# On a 200 MB ingest (343k rows) the full-text update's peak fell from +307 MiB over the
# process's baseline to +197 with the batch size, and the IVF-PQ build's from +591 to +321
# with the buffer (+416 at 64 MiB); flat vector searches and column scans at that size ran
# no slower.
_ENVIRONMENT = {
    "RUST_LOG": "error",
    "LANCE_DEFAULT_BATCH_SIZE": str(SCAN_BATCH_ROWS),
    "LANCE_DEFAULT_IO_BUFFER_SIZE": str(SCAN_IO_BUFFER_BYTES),
    "TOKENIZERS_PARALLELISM": "false",
}
_lock = threading.Lock()


def tune_process() -> dict[str, str]:
    """Apply ragtt's process-wide settings (see the module's docstring); returns the
    environment variables it set. Call it early, before Lance has started (a value Lance
    already read stays as it was). Idempotent; a variable already set is never changed."""
    from ragtt._memory import cap_malloc_arenas

    with _lock:
        applied = {}
        for name, value in _ENVIRONMENT.items():
            if name not in os.environ:
                os.environ[name] = value
                applied[name] = value
        cap_malloc_arenas()
    return applied
