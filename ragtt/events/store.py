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
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ragtt._sqlite import connect, driver
from ragtt.errors import ProjectDamagedError
from ragtt.events.base import LOCK_TIMEOUT_S, Event, EventLog, frame_schema, typed_frame
from ragtt.events.documents import Documents
from ragtt.events.intents import Intents
from ragtt.events.migrations import migrate
from ragtt.events.retention import Retention
from ragtt.events.time import format_ts, parse_ts, utc_now
from ragtt.events.versions import Versions

if TYPE_CHECKING:
    import polars as pl

__all__ = ["LOCK_TIMEOUT_S", "Event", "EventLog", "EventStore", "format_ts", "parse_ts", "utc_now"]

# events.frame() has SQLite pack each event into one line of text and the lines of each span
# of _SEQS_PER_READ event numbers into one string (group_concat), which Polars splits as
# CSV: a Python object per span instead of nine per event, and Polars splits one span while
# SQLite packs the next. The separators are the ASCII unit and record separators; JSON
# payloads never hold them raw, and a span whose text does (an odd doc_id) is read row by
# row instead. Polars takes a "\r" off the end of a field, so free text ends with a "+" that
# is dropped again (NULL: no "+"); the JSON payload never ends with "\r". seq comes first:
# Polars would take a byte order mark off the first field. Each field is its SQL (NULL for
# a NULL value) and the text after it; the line is one concat() where SQLite has it (3.44:
# one string per event, NULL as empty text), else || with ifnull (printf's %s would stop at
# a NUL character, which SQLite text can hold). The timestamps are a second string, laid
# end to end (format_ts is fixed-width), that NumPy parses.
_FIELD, _LINE = "\x1f", "\x1e"
_PACKED = {
    "seq": ("seq", ""),
    "event_id": ("event_id", "+"),
    "type": ("type", "+"),
    "query_id": ("query_id || '+'", ""),
    "index_version": ("index_version", ""),
    "doc_id": ("doc_id || '+'", ""),
    "payload": ("payload", ""),
    "source": ("{source} || '+'", ""),
}
_SEQS_PER_READ = 20_000


class EventStore(EventLog):
    """One project's ``events.db``: the event log with its documents, version history and
    write intents (repositories ``documents``, ``versions``, ``intents``)."""

    _SOURCE_SQL: ClassVar[str] = "json_extract(payload, '$.source')"

    def __init__(self, path: str | Path, *, table_name: str = "chunks", create: bool = True) -> None:
        super().__init__()
        self.path = Path(path)
        self.file = self.path
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

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[Any]:
        conn = connect(self.path)
        try:
            conn.execute("BEGIN")  # WAL: a read transaction sees one commit, writers go on
            conn.execute("SELECT 1 FROM events LIMIT 1").fetchall()  # the snapshot starts at the first read
            yield conn
        finally:
            conn.close()

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

    def _read_frame(self, clauses: Sequence[str], params: Sequence[Any]) -> pl.DataFrame:
        """Packed spans (see ``_PACKED``) on the log's own connection: an Arrow-native reader
        (ADBC, DuckDB) links a second copy of the SQLite library, and closing its file
        descriptor drops the POSIX locks the log's copy holds on the same file
        (https://sqlite.org/howtocorrupt.html, 2.2.1)."""
        from concurrent.futures import Future, ThreadPoolExecutor

        import polars as pl

        line = _packed_line(self._source_sql())
        span = [*clauses, "seq > ? AND seq <= ?"]
        packed = (
            f"SELECT count(*), CAST(group_concat({line}, '{_LINE}') AS BLOB), CAST(group_concat(ts, '') AS BLOB) "
            f"FROM events WHERE {' AND '.join(span)}"
        )
        spans: list[tuple[list[Any], Future[pl.DataFrame | None] | None]] = []
        # Polars splits one span while SQLite packs the next (both let go of the GIL).
        with self._read_transaction(), ThreadPoolExecutor(max_workers=1) as splitter:
            top = self._top_seq() or 0
            for low in range(0, top, _SEQS_PER_READ):
                args = [*params, low, low + _SEQS_PER_READ]
                try:
                    count, text, stamps = self._db.execute(packed, args).fetchone()
                except driver().DataError:  # the span's text is over SQLite's string limit
                    spans.append((args, None))
                    continue
                if count:
                    spans.append((args, splitter.submit(_unpack, count, text, stamps)))
            # A span whose text holds a separator (or was too long to pack) is read row by row.
            parts = []
            for args, unpacked in spans:
                part = None if unpacked is None else unpacked.result()
                parts.append(super()._read_frame(span, args) if part is None else part)
        return pl.concat(parts) if parts else typed_frame(frame_schema().to_frame())

    @contextlib.contextmanager
    def _read_transaction(self) -> Iterator[None]:
        """One snapshot for a read of several statements (or the caller's transaction)."""
        if self._db.in_transaction:
            yield
            return
        self._db.execute("BEGIN")
        try:
            yield
        finally:
            self._db.execute("COMMIT")

    def compact(self) -> None:
        # VACUUM rewrites the file without the freed pages; the checkpoint empties the WAL.
        self._db.execute("VACUUM")
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def size_bytes(self) -> int:
        files = [self.path, self.path.with_name(self.path.name + "-wal")]
        return sum(f.stat().st_size for f in files if f.exists())

    def integrity_problems(self, deep: bool = False) -> list[str]:
        from ragtt.events.probe import integrity_problems

        return integrity_problems(self.path, deep=deep)

    def guards(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall()]

    def _top_seq(self) -> int | None:
        row = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()
        return None if row is None else int(row[0])


def _packed_line(source_sql: str) -> str:
    """The SQL of one event's packed line (``_PACKED``; the last field has nothing after it)."""
    concat = driver().sqlite_version_info >= (3, 44)
    parts = []
    for name, (sql, after) in _PACKED.items():
        value = sql.format(source=source_sql)
        parts.append(value if concat else f"ifnull({value}, '')")
        if name != "source":
            parts.append(f"'{after}{_FIELD}'")
    return f"concat({', '.join(parts)})" if concat else " || ".join(parts)


def _unpack(count: int, text: bytes, stamps: bytes) -> pl.DataFrame | None:
    """The frame of ``count`` packed lines and their timestamps; None when a value holds a
    separator or a timestamp is not in ``format_ts``'s form."""
    import numpy as np
    import polars as pl

    ts = _parse_stamps(stamps, count)
    if ts is None:
        return None
    chars = np.frombuffer(text, np.uint8)  # NumPy counts a byte about four times faster than bytes.count
    lines, fields = (int(np.count_nonzero(chars == ord(c))) for c in (_LINE, _FIELD))
    if lines != count - 1 or fields != count * (len(_PACKED) - 1):
        return None
    schema = frame_schema()
    frame = pl.read_csv(
        text,
        has_header=False,
        separator=_FIELD,
        eol_char=_LINE,
        quote_char=None,
        empty_string_is_null=False,
        schema={name: schema[name] for name in _PACKED},
    )
    ends = [pl.col("event_id", "type").str.head(-1)]
    ends += [pl.when(pl.col(c) != "").then(pl.col(c).str.head(-1)).alias(c) for c in ("query_id", "doc_id", "source")]
    return frame.with_columns(*ends, ts).select(schema.names())


# format_ts: "2025-01-01T12:00:00.123456Z", 27 characters, the punctuation at fixed places.
_STAMP = b"0000-00-00T00:00:00.000000Z"
_PUNCT_AT = [i for i, c in enumerate(_STAMP) if c != ord("0")]
_DIGITS_AT = [i for i, c in enumerate(_STAMP) if c == ord("0")]


def _parse_stamps(stamps: bytes, count: int) -> pl.Series | None:
    """``count`` timestamps laid end to end, as ``typed_frame`` parses them (NumPy's ISO 8601
    reader, about seven times Polars' strptime); None when one is not in ``format_ts``'s
    form or is out of range (a second of 60: strptime decides, on the row path)."""
    import numpy as np
    import polars as pl

    if len(stamps) != count * len(_STAMP):
        return None
    chars = np.frombuffer(stamps, np.uint8).reshape(count, len(_STAMP))
    punct = np.frombuffer(_STAMP, np.uint8)[_PUNCT_AT]
    if not (chars[:, _PUNCT_AT] == punct).all() or not (chars[:, _DIGITS_AT] - ord("0") < 10).all():
        return None
    try:
        parsed = np.ascontiguousarray(chars[:, :-1]).view(f"S{len(_STAMP) - 1}").ravel().astype("datetime64[us]")
    except ValueError:
        return None
    return pl.Series("ts", parsed).dt.replace_time_zone("UTC")
