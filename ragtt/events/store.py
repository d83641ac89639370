"""The append-only event log on SQLite (WAL mode): hot fields as columns beside JSON.

The log is history: events, documents and version records refuse UPDATE, DELETE and
REPLACE (triggers), every event's hash chains to the one before it (``verify_chain``), and
a run's once-only events (its retrieval, its answer) cannot be appended twice. Writers of
the chunk table serialize on ``write_lock()``, a file lock beside the database. Schema
changes are numbered migrations. What every backend shares is in ``ragtt/events/base.py``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from ragtt._sqlite import connect, driver
from ragtt.errors import ProjectDamagedError
from ragtt.events.base import LOCK_TIMEOUT_S, Event, EventLog
from ragtt.events.documents import Documents
from ragtt.events.intents import Intents
from ragtt.events.migrations import migrate
from ragtt.events.retention import Retention
from ragtt.events.time import format_ts, parse_ts, utc_now
from ragtt.events.versions import Versions

__all__ = ["LOCK_TIMEOUT_S", "Event", "EventLog", "EventStore", "format_ts", "parse_ts", "utc_now"]


class EventStore(EventLog):
    """One project's ``events.db``: the event log with its documents, version history and
    write intents (repositories ``documents``, ``versions``, ``intents``)."""

    _SOURCE_SQL: ClassVar[str] = "json_extract(payload, '$.source')"

    def __init__(self, path: str | Path, *, table_name: str = "chunks", create: bool = True) -> None:
        super().__init__()
        self.path = Path(path)
        self.location = str(self.path.parent)
        if not create and not self.path.exists():
            raise ProjectDamagedError(
                f"the event log {self.path} is missing: this project's history is gone. "
                "Restore the file from a backup; ragtt never recreates it empty"
            )
        try:
            self._db: Any = connect(self.path)
            migrate(self._db, str(self.path))
        except driver().DatabaseError as exc:
            with contextlib.suppress(Exception):
                self._db.close()
            raise ProjectDamagedError(
                f"the event log {self.path} is damaged ({exc}); restore it from a backup"
            ) from None
        self.documents = Documents(self._db)
        self.versions = Versions(self._db, table_name)
        self.intents = Intents(self._db)
        self.retention = Retention(self._db)
        self._lock_fd: int | None = None

    @property
    def _conn(self) -> Any:
        return self._db

    @property
    def _integrity_error(self) -> type[Exception]:
        return driver().IntegrityError  # type: ignore[no-any-return]

    def close(self) -> None:
        self._db.close()
        self._unlock()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        """BEGIN IMMEDIATE ... COMMIT: writers queue on the busy timeout instead of failing."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _try_lock(self) -> bool:
        # A file lock beside the log: the kernel releases it when its process dies.
        fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._lock_fd = fd
        return True

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            fd, self._lock_fd = self._lock_fd, None
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def compact(self) -> None:
        # VACUUM rewrites the file without the freed pages; the checkpoint empties the WAL.
        self._db.execute("VACUUM")
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def size_bytes(self) -> int:
        files = [self.path, self.path.with_name(self.path.name + "-wal")]
        return sum(f.stat().st_size for f in files if f.exists())

    def guards(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall()]

    def _top_seq(self) -> int | None:
        row = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()
        return None if row is None else int(row[0])
