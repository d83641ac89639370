"""The append-only event log: SQLite in WAL mode, hot fields as columns beside JSON.

Events are immutable: triggers refuse UPDATE and DELETE. The events of one query are
written in one transaction (``append_many``). Schema changes are numbered migrations.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt._hashing import time_ordered_id
from ragtt._sqlite import connect
from ragtt.errors import StoreError
from ragtt.events.migrations import migrate

if TYPE_CHECKING:
    import polars as pl

__all__ = ["Event", "EventStore", "parse_ts", "utc_now"]

_COLUMNS = ("seq", "event_id", "ts", "type", "query_id", "index_version", "doc_id", "payload")


def utc_now() -> datetime:
    return datetime.now(UTC)


def format_ts(ts: datetime) -> str:
    """Fixed-width ISO 8601 UTC, so timestamps sort as strings."""
    if ts.tzinfo is None:
        raise ValueError(f"timestamps must be timezone-aware; got naive {ts!r}")
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_ts(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


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
            "seq": self.seq, "event_id": self.event_id, "ts": format_ts(self.ts), "type": self.type,
            "query_id": self.query_id, "index_version": self.index_version, "doc_id": self.doc_id,
            "payload": self.payload,
        }


class EventStore:
    """Reads and appends events of one project's ``events.db``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn: Any = connect(self.path)
        migrate(self._conn)

    @property
    def connection(self) -> Any:
        return self._conn

    def close(self) -> None:
        self._conn.close()

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """BEGIN IMMEDIATE ... COMMIT: writers queue on the busy timeout instead of failing."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def append(self, event: Event) -> Event:
        return self.append_many([event])[0]

    def append_many(self, events: Sequence[Event], conn: Any = None) -> list[Event]:
        """Append events atomically (inside the caller's transaction when ``conn`` is given)."""
        rows = [
            (e.event_id, format_ts(e.ts), e.type, e.query_id, e.index_version, e.doc_id,
             json.dumps(e.payload, ensure_ascii=False, default=_json_default))
            for e in events
        ]
        sql = ("INSERT INTO events (event_id, ts, type, query_id, index_version, doc_id, payload) "
               "VALUES (?, ?, ?, ?, ?, ?, ?)")
        if conn is not None:
            conn.executemany(sql, rows)
        else:
            with self.transaction() as c:
                c.executemany(sql, rows)
        return list(events)

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

    def last(self, type_: str, **filters: Any) -> Event | None:
        found = self.query(types=type_, limit=1, newest_first=True, **filters)
        return found[0] if found else None

    def frame(
        self,
        types: Iterable[str] | str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        query_id: str | None = None,
    ) -> pl.DataFrame:
        """The log as a Polars frame: hot fields as typed columns, ``payload`` as JSON text, and
        ``source`` (of document events) pulled out of the payload."""
        import polars as pl

        sql, params = self._select(types, since, until, query_id, None, None)
        rows = self._conn.execute(sql + " ORDER BY seq", params).fetchall()
        schema = {
            "seq": pl.Int64, "event_id": pl.String, "ts": pl.String, "type": pl.String,
            "query_id": pl.String, "index_version": pl.Int64, "doc_id": pl.String, "payload": pl.String,
        }
        frame = pl.DataFrame(rows, schema=schema, orient="row")
        return frame.with_columns(
            pl.col("ts").str.strptime(pl.Datetime("us", "UTC"), "%Y-%m-%dT%H:%M:%S%.fZ"),
            pl.when(pl.col("type").str.starts_with("document."))
            .then(pl.col("payload").str.json_path_match("$.source"))
            .alias("source"),
        )

    def _select(self, types: Iterable[str] | str | None, since: datetime | None, until: datetime | None,
                query_id: str | None, doc_id: str | None,
                version_range: tuple[int, int] | None) -> tuple[str, list[Any]]:
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
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        return f"SELECT {', '.join(_COLUMNS)} FROM events{where}", params

    # -- small key/value state beside the log (project settings, never history) --

    def get_meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str, conn: Any = None) -> None:
        (conn or self._conn).execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )


def _row_to_event(row: Sequence[Any]) -> Event:
    seq, event_id, ts, type_, query_id, version, doc_id, payload = row
    try:
        data = json.loads(payload)
    except json.JSONDecodeError as exc:
        raise StoreError(f"event {event_id} has a corrupt payload: {exc}") from None
    return Event(type=type_, payload=data, query_id=query_id, index_version=version, doc_id=doc_id,
                 ts=parse_ts(ts), event_id=event_id, seq=seq)


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, datetime):
        return format_ts(obj)
    if isinstance(obj, tuple | set | frozenset):
        return list(obj)
    raise TypeError(f"cannot store {type(obj).__name__} in an event payload")
