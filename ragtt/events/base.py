"""The event log's seam: one abstract base that the SQLite and the Postgres stores implement.

Callers (``commit.py``, ``ingest/``, ``index/``, ``timetravel/``, ``verify.py``) see only
``EventLog``: events with their hash chain, the ``documents``, ``versions`` and ``intents``
repositories, ``meta``, ``transaction()`` and ``write_lock()``. Everything that reads or
appends events is written once, here, against a DB-API connection that takes ``?``
placeholders; a backend supplies only what its database does differently (how a
transaction serializes, how the lock is held, where the guards and the chain's high-water
mark live). ``ragtt.opening.open_log`` picks the backend from the URI, in one place.

    EventLog (abstract)
    ├── EventStore           ragtt/events/store.py     SQLite file (WAL), file lock
    └── PostgresEventStore   ragtt/events/postgres.py  one database, advisory locks
"""

from __future__ import annotations

import contextlib
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ragtt._hashing import time_ordered_id
from ragtt.errors import HistoryError, ProjectBusyError, StoreError
from ragtt.events.chain import GENESIS, event_hash
from ragtt.events.sql import dump_json
from ragtt.events.time import format_ts, parse_ts, utc_now
from ragtt.events.types import (
    DOCUMENT_INGESTED,
    DOCUMENT_REMOVED,
    HISTORY_PRUNED,
    ONCE_PER_QUERY,
    QUERY_RECEIVED,
    REPLAY_PREFIX,
)

if TYPE_CHECKING:
    import polars as pl

    from ragtt.events.documents import Documents
    from ragtt.events.intents import Intents
    from ragtt.events.retention import Retention
    from ragtt.events.versions import Versions

__all__ = ["EVENT_COLUMNS", "LOCK_TIMEOUT_S", "Event", "EventLog", "frame_schema", "typed_frame"]

EVENT_COLUMNS = ("seq", "event_id", "ts", "type", "query_id", "index_version", "doc_id", "payload")
# How long a writer waits for another process's write to finish before giving up.
LOCK_TIMEOUT_S = 600.0
_IDS_PER_READ = 500  # query ids per IN (...) list: far below any driver's parameter limit


@dataclass(frozen=True)
class Event:
    type: str
    payload: dict[str, Any] = field(default_factory=dict)
    query_id: str | None = None
    index_version: int | None = None
    doc_id: str | None = None
    ts: datetime = field(default_factory=utc_now)
    event_id: str = field(default_factory=time_ordered_id)
    seq: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "event_id": self.event_id,
            "ts": format_ts(self.ts),
            "type": self.type,
            "query_id": self.query_id,
            "index_version": self.index_version,
            "doc_id": self.doc_id,
            "payload": self.payload,
        }


class EventLog(ABC):
    """One project's event log with its documents, version history and write intents."""

    documents: Documents
    versions: Versions
    intents: Intents
    retention: Retention
    #: Where the log lives, for messages (a file path, or a URI without its password).
    location: str
    #: The log's own file, when it is one (SQLite): what a check of it names.
    file: Path | None = None
    #: The SQL expression of a document event's source, read from the JSON payload text.
    _SOURCE_SQL: ClassVar[str]

    def __init__(self) -> None:
        self._lock_depth = 0

    # -- what a backend provides ----------------------------------------------------------

    @property
    @abstractmethod
    def _conn(self) -> Any:
        """The connection reads run on (``execute(sql, params)`` with ``?`` placeholders)."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def transaction(self) -> contextlib.AbstractContextManager[Any]:
        """One write transaction, serialized with every other writer of this log (readers
        are never blocked); yields the connection to write on."""

    @abstractmethod
    def _try_lock(self) -> bool:
        """Take the cross-process write lock if it is free now. It must be released by the
        system when its holder dies (a file lock, a database session's advisory lock)."""

    @abstractmethod
    def _unlock(self) -> None: ...

    @abstractmethod
    def snapshot(self) -> contextlib.AbstractContextManager[Any]:
        """A read-only connection of its own (``?`` placeholders) on the log as of one moment,
        held while the block runs: writers go on, and what it reads is one consistent state
        (what a copy of the log needs)."""

    @abstractmethod
    def compact(self) -> None:
        """Give the space of pruned events back (outside any transaction): VACUUM."""

    @abstractmethod
    def size_bytes(self) -> int:
        """The disk the log takes (its database file, or its tables with their indexes)."""

    @abstractmethod
    def guards(self) -> list[str]:
        """The history guards (triggers) that are in place."""

    def integrity_problems(self, deep: bool = False) -> list[str]:
        """What the database's own check finds wrong with the log's storage ([]: whole, or a
        server that checks its own pages)."""
        return []

    @abstractmethod
    def _top_seq(self) -> int | None:
        """The highest event number ever committed, kept beside the events (None: unknown)."""

    @property
    @abstractmethod
    def _integrity_error(self) -> type[Exception]:
        """What the driver raises when a guard or a unique index refuses an insert."""

    def _chain_advanced(self, conn: Any, seq: int) -> None:  # noqa: B027 - a hook, empty for SQLite
        """Called inside the append's transaction with the new top event number."""

    def advance_head(self, conn: Any, seq: int) -> None:
        """Inside a transaction that inserted events with their own numbers (a copied log): the
        chain's high-water mark moves to ``seq``, as an append would have moved it."""
        self._chain_advanced(conn, seq)

    def _savepoint(self, conn: Any) -> contextlib.AbstractContextManager[Any]:
        """Where a refused insert can fail and leave the transaction usable (Postgres aborts
        the whole transaction on an error; SQLite undoes only the statement)."""
        return contextlib.nullcontext()

    def use_table(self, table_name: str) -> None:
        """Point ``versions`` at ``table_name``'s history (known only once the config is read)."""
        from ragtt.events.versions import Versions

        self.versions = Versions(self._conn, table_name)

    def table_names(self) -> list[str]:
        """The chunk tables this log holds a history of."""
        return sorted(str(r[0]) for r in self._conn.execute("SELECT DISTINCT table_name FROM index_versions"))

    # -- the write lock -------------------------------------------------------------------

    @contextlib.contextmanager
    def write_lock(self, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
        """Serialize the writers of the chunk table across processes and machines
        (re-entrant in one store); a crashed writer never blocks the next one."""
        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        deadline = time.monotonic() + timeout_s
        while not self._try_lock():
            if time.monotonic() >= deadline:
                raise ProjectBusyError(
                    f"another process has been writing to {self.location} for over "
                    f"{timeout_s:.0f} s; try again when it is done"
                ) from None
            time.sleep(0.05)
        self._lock_depth = 1
        try:
            yield
        finally:
            self._lock_depth = 0
            self._unlock()

    def try_write_lock(self) -> contextlib.AbstractContextManager[bool]:
        """The write lock if it is free now (yields True), else nothing (yields False)."""
        return _TryLock(self)

    # -- events ---------------------------------------------------------------------------

    def append(self, event: Event) -> Event:
        return self.append_many([event])[0]

    def append_many(self, events: Sequence[Event], conn: Any = None) -> list[Event]:
        """Append events atomically (inside the caller's transaction when ``conn`` is given),
        each hash-chained to the one before it."""
        if conn is None:
            with self.transaction() as c:
                return self.append_many(events, conn=c)
        # Numbered here, not by the database: a Postgres sequence is not transactional, and a
        # refused append would leave a gap that verify() must read as a deleted event.
        row = conn.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        seq, prev = (int(row[0]), str(row[1])) if row else (0, GENESIS)
        rows = []
        for e in events:
            fields = (e.event_id, format_ts(e.ts), e.type, e.query_id, e.index_version, e.doc_id, dump_json(e.payload))
            prev = event_hash(prev, fields)
            seq += 1
            rows.append((seq, *fields, prev))
        try:
            with self._savepoint(conn):
                conn.executemany(
                    "INSERT INTO events (seq, event_id, ts, type, query_id, index_version, doc_id, "
                    "payload, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
        except self._integrity_error as exc:
            raise HistoryError(self._refusal(conn, events, exc)) from None
        if rows:
            self._chain_advanced(conn, seq)
        return list(events)

    def _refusal(self, conn: Any, events: Sequence[Event], exc: Exception) -> str:
        for e in events:
            if (
                e.query_id is not None
                and e.type in ONCE_PER_QUERY
                and conn.execute(
                    "SELECT 1 FROM events WHERE query_id = ? AND type = ?", (e.query_id, e.type)
                ).fetchone()
            ):
                return (
                    f"query {e.query_id} already has a {e.type} event: a run's events are written once "
                    "and never replaced"
                )
        return f"the event log refused the append ({str(exc).strip()}): events are immutable"

    def query(
        self,
        *,
        types: Iterable[str] | str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        query_id: str | None = None,
        doc_id: str | None = None,
        version_range: tuple[int, int] | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> list[Event]:
        """Events in log order; ``version_range=(low, high)`` keeps low < index_version <= high."""
        sql, params = self._select(types, since, until, query_id, doc_id, version_range)
        sql += " ORDER BY seq DESC" if newest_first else " ORDER BY seq"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [_row_to_event(r) for r in self._conn.execute(sql, params).fetchall()]

    def payloads(self, types: Iterable[str] | str) -> list[dict[str, Any]]:
        """The payloads of the events of ``types``, in log order: only the payload column is
        read and no ``Event`` is built (a check that walks thousands of events needs no more)."""
        clauses, params = self._where(types, None, None, None, None, None)
        sql = f"SELECT payload FROM events WHERE {' AND '.join(clauses)} ORDER BY seq"
        try:
            return [json.loads(payload) for (payload,) in self._conn.execute(sql, params).fetchall()]
        except json.JSONDecodeError as exc:
            raise StoreError(f"an event of type {', '.join(map(str, params))} has a corrupt payload: {exc}") from None

    def runs(self, query_ids: Sequence[str], types: Iterable[str] | None = None) -> dict[str, list[Event]]:
        """The events of many queries or replays (only ``types``, if given), in log order, read
        in a few statements (exporting thousands of traces must not cost one round trip each)."""
        found: dict[str, list[Event]] = {q: [] for q in query_ids}
        wanted = list(found)
        kinds = sorted(types) if types is not None else []
        type_sql = f" AND type IN ({','.join('?' * len(kinds))})" if kinds else ""
        for start in range(0, len(wanted), _IDS_PER_READ):
            batch = wanted[start : start + _IDS_PER_READ]
            sql = (
                f"SELECT {', '.join(EVENT_COLUMNS)} FROM events WHERE query_id IN ({','.join('?' * len(batch))})"
                f"{type_sql} ORDER BY seq"
            )
            for row in self._conn.execute(sql, [*batch, *kinds]).fetchall():
                event = _row_to_event(row)
                found[event.query_id or ""].append(event)
        return found

    def query_ids_starting(self, prefix: str, limit: int) -> list[str]:
        """The ids of logged queries and replays that begin with ``prefix``, sorted, at most
        ``limit`` of them (the caller resolves a unique prefix, as git does a commit's)."""
        sql = (
            f"SELECT DISTINCT query_id FROM events WHERE type IN (?, ?) AND substr(query_id, 1, {len(prefix)}) = ? "
            f"ORDER BY query_id LIMIT {int(limit)}"
        )
        params = [QUERY_RECEIVED, REPLAY_PREFIX + QUERY_RECEIVED, prefix]
        return [str(row[0]) for row in self._conn.execute(sql, params).fetchall()]

    def last(self, type_: str | Iterable[str], **filters: Any) -> Event | None:
        found = self.query(types=type_, limit=1, newest_first=True, **filters)
        return found[0] if found else None

    def exists(self, type_: str | Iterable[str], *, query_id: str | None = None, doc_id: str | None = None) -> bool:
        """Whether the log holds an event of ``type_`` (of that query or document): one indexed
        lookup that reads no payload."""
        clauses, params = self._where(type_, None, None, query_id, doc_id, None)
        sql = f"SELECT 1 FROM events WHERE {' AND '.join(clauses)} LIMIT 1"
        return self._conn.execute(sql, params).fetchone() is not None

    def as_of_times(self) -> dict[int, datetime]:
        """Index version -> the ``as_of`` time its ingest carried (a release date: ``ingest(...,
        as_of=...)``), for the versions whose ingest had one."""
        from ragtt.events.types import INGEST_COMPLETED

        found = {}
        for event in self.query(types=INGEST_COMPLETED):
            when = event.payload.get("as_of")
            if when and event.index_version is not None:
                found[int(event.index_version)] = parse_ts(when)
        return found

    def version_times(self) -> dict[int, datetime]:
        """Index version -> its time on the history's axis: the ``as_of`` its ingest carried
        (a release date) where it had one, else when it was committed, and never later than a
        later version's. A table created or compacted today before or between dated ingests
        sits with the dated version after it, so times and versions run in one order (the
        timeline's axis, and ``resolve_version(datetime)``'s latest version at or before)."""
        as_of = self.as_of_times()
        times = {v: as_of.get(v) or parse_ts(committed) for v, committed, _ in self.versions.rows()}
        later: datetime | None = None
        for v in sorted(times, reverse=True):
            if later is not None and times[v] > later:
                times[v] = later
            later = times[v]
        return times

    def last_ingest_of(self, source: str) -> Event | None:
        """The newest ``document.ingested`` event of ``source``."""
        row = self._conn.execute(
            f"SELECT {', '.join(EVENT_COLUMNS)} FROM events WHERE type = 'document.ingested' "
            f"AND {self._SOURCE_SQL} = ? ORDER BY seq DESC LIMIT 1",
            (source,),
        ).fetchone()
        return None if row is None else _row_to_event(row)

    def frame(
        self,
        *,
        types: Iterable[str] | str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        query_id: str | None = None,
    ) -> pl.DataFrame:
        """The log as a Polars frame: hot fields as typed columns, ``payload`` as JSON text, and
        ``source`` (of document events) pulled out of the payload.

        The database extracts ``source`` from the few document events (no JSON parsing of
        every payload) and reads in its storage order (no ``ORDER BY``: Postgres would walk
        the primary key index, about twice a sequential scan); the frame is sorted here, when
        it is not already. Each backend reads the columns its fastest way (``_read_frame``).
        """

        clauses, params = self._where(types, since, until, query_id, None, None)
        frame = self._read_frame(clauses, params)
        return frame if frame["seq"].is_sorted() else frame.sort("seq")

    def _read_frame(self, clauses: Sequence[str], params: Sequence[Any]) -> pl.DataFrame:
        """The events the ``WHERE`` ``clauses`` (``?`` placeholders) keep, in any order, as a
        frame (``typed_frame``): row by row through the log's connection."""
        import polars as pl

        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        sql = f"SELECT {', '.join(EVENT_COLUMNS)}, {self._source_sql()} AS source FROM events{where}"
        rows = self._conn.execute(sql, params).fetchall()
        return typed_frame(pl.DataFrame(rows, schema=frame_schema(), orient="row"))

    def _source_sql(self) -> str:
        """The frame's ``source`` column: the source of a document event, NULL for the others."""
        kinds = f"'{DOCUMENT_INGESTED}', '{DOCUMENT_REMOVED}'"  # ragtt's own names: no quote to escape
        return f"CASE WHEN type IN ({kinds}) THEN {self._SOURCE_SQL} END"

    def _select(
        self,
        types: Iterable[str] | str | None,
        since: datetime | None,
        until: datetime | None,
        query_id: str | None,
        doc_id: str | None,
        version_range: tuple[int, int] | None,
    ) -> tuple[str, list[Any]]:
        clauses, params = self._where(types, since, until, query_id, doc_id, version_range)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        return f"SELECT {', '.join(EVENT_COLUMNS)} FROM events{where}", params

    @staticmethod
    def _where(
        types: Iterable[str] | str | None,
        since: datetime | None,
        until: datetime | None,
        query_id: str | None,
        doc_id: str | None,
        version_range: tuple[int, int] | None,
    ) -> tuple[list[str], list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        if types is not None:
            wanted = [types] if isinstance(types, str) else list(types)
            clauses.append(f"type IN ({','.join('?' * len(wanted))})")
            params.extend(wanted)
        if since is not None:
            clauses.append("ts >= ?")
            params.append(format_ts(since))
        if until is not None:
            clauses.append("ts <= ?")
            params.append(format_ts(until))
        if query_id is not None:
            clauses.append("query_id = ?")
            params.append(query_id)
        if doc_id is not None:
            clauses.append("doc_id = ?")
            params.append(doc_id)
        if version_range is not None:
            clauses.append("index_version > ? AND index_version <= ?")
            params.extend(version_range)
        return clauses, params

    def verify_chain(self) -> tuple[int, list[str]]:
        """Re-walk the hash chain: (events checked, problems).

        A gap in the event numbers must be spans that ``history.pruned`` events list (each
        with the hash of its last deleted event, which the next event chains to); any other
        gap is reported as deleted events.
        """
        problems: list[str] = []
        spans: dict[int, tuple[int, str]] = {}  # first deleted seq -> (last deleted seq, its hash)
        for (payload,) in self._conn.execute("SELECT payload FROM events WHERE type = ?", (HISTORY_PRUNED,)):
            spans.update({int(f): (int(last), str(h)) for f, last, h in json.loads(payload).get("spans", [])})
        prev, checked, last_seq = GENESIS, 0, 0
        cursor = self._conn.execute(f"SELECT {', '.join(EVENT_COLUMNS)}, hash FROM events ORDER BY seq")
        for row in cursor:
            seq, stored = int(row[0]), row[-1]
            while last_seq + 1 < seq and last_seq + 1 in spans:  # pruned runs: chain across them
                last_seq, prev = spans.pop(last_seq + 1)
            if seq != last_seq + 1 and not problems:
                problems.append(f"event log: events {last_seq + 1}..{seq - 1} are missing (deleted?)")
            expected = event_hash(prev, row[1:8])
            if stored != expected and len(problems) < 20:
                problems.append(
                    f"event log: event #{seq} ({row[3]}, {row[1]}) does not match its hash: "
                    "it was rewritten, or an event before it was"
                )
            prev, checked, last_seq = stored, checked + 1, seq
        for first, (last, _) in sorted(spans.items()):
            problems.append(f"event log: a prune lists events {first}..{last} as deleted, but they are not a gap")
        top = self._top_seq()
        if top is not None and top > last_seq:
            problems.append(f"event log: the newest events (#{last_seq + 1}..#{top}) are missing (deleted?)")
        return checked, problems

    # -- small key/value state beside the log (project settings, never history) --

    def get_meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str, conn: Any = None) -> None:
        (conn or self._conn).execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def delete_meta(self, key: str, conn: Any = None) -> None:
        (conn or self._conn).execute("DELETE FROM meta WHERE key = ?", (key,))


def frame_schema() -> pl.Schema:
    """The columns ``EventLog.frame()`` reads, in its order (``ts`` as the log's text)."""
    import polars as pl

    numbers = {"seq", "index_version"}
    return pl.Schema({name: pl.Int64 if name in numbers else pl.String for name in (*EVENT_COLUMNS, "source")})


def typed_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """A frame read as ``frame_schema`` with ``ts`` parsed (UTC, microseconds): the frame's types."""
    import polars as pl

    return frame.with_columns(pl.col("ts").str.strptime(pl.Datetime("us", "UTC"), "%Y-%m-%dT%H:%M:%S%.fZ", cache=False))


class _TryLock:
    def __init__(self, store: EventLog) -> None:
        self._store = store
        self._held: contextlib.ExitStack | None = None

    def __enter__(self) -> bool:
        stack = contextlib.ExitStack()
        try:
            stack.enter_context(self._store.write_lock(timeout_s=0))
        except ProjectBusyError:
            return False
        self._held = stack
        return True

    def __exit__(self, *exc: object) -> None:
        if self._held is not None:
            self._held.close()


def _row_to_event(row: Sequence[Any]) -> Event:
    seq, event_id, ts, type_, query_id, version, doc_id, payload = row[:8]
    try:
        data = json.loads(payload)
    except json.JSONDecodeError as exc:
        raise StoreError(f"event {event_id} has a corrupt payload: {exc}") from None
    return Event(
        type=type_,
        payload=data,
        query_id=query_id,
        index_version=version,
        doc_id=doc_id,
        ts=parse_ts(ts),
        event_id=event_id,
        seq=seq,
    )
