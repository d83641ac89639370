"""When each table version was committed, by which operation, and what ``at`` means.

Kept in ``events.db`` (``index_versions``) so "as of <datetime>" needs no manifest scan,
and so maintenance knows how many writes happened since it last ran.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ragtt.errors import ConfigError, NotFoundError
from ragtt.events.store import format_ts

if TYPE_CHECKING:
    import polars as pl

    from ragtt.index.table import ChunkTable

__all__ = ["MAINTAIN_EVERY", "MAINTAIN_ROWS", "At", "VersionLog"]

At = int | str | datetime
# Maintenance (compaction, full-text indexing) after this many writes, or a write this large.
MAINTAIN_EVERY = 32
MAINTAIN_ROWS = 256


class VersionLog:
    """The version history of one table, recorded beside the event log."""

    def __init__(self, conn: Any, table: ChunkTable) -> None:
        self._conn = conn
        self._table = table

    def record(self, conn: Any, version: int, operation: str, ts: datetime) -> None:
        conn.execute("INSERT OR IGNORE INTO index_versions (table_name, version, committed_at, operation) "
                     "VALUES (?, ?, ?, ?)", (self._table.table_name, version, format_ts(ts), operation))

    def frame(self) -> pl.DataFrame:
        import polars as pl

        rows = self._conn.execute(
            "SELECT version, committed_at, operation FROM index_versions WHERE table_name = ? ORDER BY version",
            (self._table.table_name,)).fetchall()
        frame = pl.DataFrame(rows, schema={"version": pl.Int64, "committed_at": pl.String,
                                           "operation": pl.String}, orient="row")
        return frame.with_columns(pl.col("committed_at").str.strptime(pl.Datetime("us", "UTC"),
                                                                      "%Y-%m-%dT%H:%M:%S%.fZ"))

    def maintenance_due(self, rows_written: int) -> bool:
        if rows_written >= MAINTAIN_ROWS:
            return True
        name = self._table.table_name
        row = self._conn.execute(
            "SELECT COUNT(*) FROM index_versions WHERE table_name = ? AND operation NOT IN ('create', 'maintenance') "
            "AND version > COALESCE((SELECT MAX(version) FROM index_versions WHERE table_name = ? "
            "AND operation = 'maintenance'), 0)", (name, name)).fetchone()
        return int(row[0]) >= MAINTAIN_EVERY

    def resolve(self, at: At) -> int:
        """A version number from a version, a snapshot label, or a datetime (latest at or before)."""
        if isinstance(at, bool):
            raise TypeError("at must be a version int, a snapshot label or a datetime; got a bool")
        if isinstance(at, int):
            latest = self._table.latest_version()
            if not 1 <= at <= latest:
                raise NotFoundError(f"index version {at} does not exist (versions are 1..{latest})")
            return at
        if isinstance(at, datetime):
            if at.tzinfo is None:
                raise ConfigError(f"at must be a timezone-aware datetime (e.g. UTC); got naive {at}")
            row = self._conn.execute(
                "SELECT MAX(version) FROM index_versions WHERE table_name = ? AND committed_at <= ?",
                (self._table.table_name, format_ts(at))).fetchone()
            if row is None or row[0] is None:
                raise NotFoundError(f"the index did not exist yet at {at.isoformat()}")
            return int(row[0])
        if isinstance(at, str):
            tags = self._table.tags()
            if at in tags:
                return tags[at]
            if at.isdigit():
                return self.resolve(int(at))
            try:
                parsed = datetime.fromisoformat(at.replace("Z", "+00:00"))
            except ValueError:
                raise NotFoundError(
                    f"no snapshot labelled {at!r} (known: {', '.join(sorted(tags)) or 'none'}); "
                    "at may also be a version number or an ISO datetime") from None
            return self.resolve(parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC))
        raise TypeError(f"at must be a version int, a snapshot label or a datetime; got {type(at).__name__}")
