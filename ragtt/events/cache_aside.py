"""Moving a damaged embedding cache aside safely while other connections may hold it open.

The cache is not history: a damaged ``embeddings.db`` is moved aside (``<name>.damaged``,
with its ``-wal`` and ``-shm``) and a new one started. Renaming SQLite files under a live
connection is not safe: that connection goes on with the old files, and when it closes
SQLite checkpoints and deletes ``<name>-wal`` by name, which by then is the new cache's log.
So every connection holds a shared ``flock`` on ``<name>.lock`` while it is open, and the
files are moved only under the exclusive lock, taken without waiting: when another
connection (this process's or another's) has the file open, nothing is moved and the caller
goes on without the cache (texts are embedded again) until the last one lets go. Under the
exclusive lock the file is moved only if it is still the one found damaged (the same inode):
a process that comes second finds the new cache in its place and simply reconnects.
Without ``fcntl`` (not POSIX) there is no lock, and the files are moved at once.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None  # type: ignore[assignment]

__all__ = ["CacheFileLock", "file_identity"]


def file_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at ``path``; None when there is none."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


class CacheFileLock:
    """The lock beside the cache file ``db``: shared while a connection is open, exclusive
    (never waited for) to move the file aside."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self._fd: int | None = None
        if fcntl is not None:
            self._fd = os.open(db.with_name(db.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)

    def share(self) -> None:
        """Hold the lock shared (waits only for a move aside in progress, which is quick)."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_SH)

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # lets go of the lock too
            self._fd = None

    def set_aside(self, problem: str, found: tuple[int, int] | None) -> bool:
        """Move the damaged ``db`` (and its WAL) aside, with a warning, when no connection has
        it open: True when the caller may open a new cache at ``db`` (moved now, or already
        replaced by another process), False when others still use it. ``found``: the file the
        caller found damaged (its identity), None for whatever is at ``db`` now. The caller
        holds no shared lock of its own."""
        db = self.db
        if self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                warnings.warn(
                    f"ragtt: the embedding cache {db} {problem}; another connection has it open, so it is left in "
                    "place and this one goes on without the cache (texts are embedded again) until the project "
                    "is opened again after the others have closed it",
                    RuntimeWarning,
                    stacklevel=4,
                )
                return False
        try:
            now = file_identity(db)
            if now is None or (found is not None and now != found):
                return True  # another process moved it aside already: the file there is a new cache
            aside = db.with_name(db.name + ".damaged")
            for suffix in ("", "-wal", "-shm"):
                source = db.with_name(db.name + suffix)
                if source.exists():
                    os.replace(source, aside.with_name(aside.name + suffix))
                else:  # no stale log of an older aside copy beside the new one
                    aside.with_name(aside.name + suffix).unlink(missing_ok=True)
        finally:
            self.release()
        warnings.warn(
            f"ragtt: the embedding cache {db} {problem}; it is only a cache, so it was moved aside to {aside.name} "
            "and texts are embedded again as they are needed",
            RuntimeWarning,
            stacklevel=4,
        )
        return True
