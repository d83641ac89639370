"""When each table version was committed and by which operation.

A version appears here only once the write that made it is fully logged: this table is the
commit point that makes a version visible to readers (see docs/ARCHITECTURE.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ragtt.events.time import format_ts

if TYPE_CHECKING:
    import polars as pl

__all__ = ["Versions"]


class Versions:
    """The ``index_versions`` table of one event log, for one chunk table."""

    def __init__(self, conn: Any, table_name: str) -> None:
        self._conn = conn
        self.table_name = table_name

    def record(self, conn: Any, versions: Iterable[int], operation: str, ts: datetime) -> None:
        conn.executemany(
            "INSERT INTO index_versions (table_name, version, committed_at, operation) SELECT ?, ?, ?, ? "
            "WHERE NOT EXISTS (SELECT 1 FROM index_versions WHERE table_name = ? AND version = ?)",
            [(self.table_name, v, format_ts(ts), operation, self.table_name, v) for v in versions],
        )

    def latest(self) -> int | None:
        row = self._conn.execute(
            "SELECT MAX(version) FROM index_versions WHERE table_name = ?", (self.table_name,)
        ).fetchone()
        return None if row[0] is None else int(row[0])

    def at_or_before(self, ts: datetime) -> int | None:
        row = self._conn.execute(
            "SELECT MAX(version) FROM index_versions WHERE table_name = ? AND committed_at <= ?",
            (self.table_name, format_ts(ts)),
        ).fetchone()
        return None if row[0] is None else int(row[0])

    def rows(self) -> list[tuple[int, str, str]]:
        """(version, committed_at, operation) in version order."""
        return [
            (int(v), str(c), str(o))
            for v, c, o in self._conn.execute(
                "SELECT version, committed_at, operation FROM index_versions WHERE table_name = ? ORDER BY version",
                (self.table_name,),
            ).fetchall()
        ]

    def data_versions(self) -> list[int]:
        """Versions that changed what a query can find (not creation, not maintenance)."""
        return [v for v, _, op in self.rows() if op not in ("create", "maintenance")]

    def writes_since_maintenance(self) -> int:
        rows = self.rows()
        last = max((v for v, _, op in rows if op == "maintenance"), default=0)
        return sum(1 for v, _, op in rows if v > last and op not in ("create", "maintenance"))

    def frame(self) -> pl.DataFrame:
        import polars as pl

        frame = pl.DataFrame(
            self.rows(), schema={"version": pl.Int64, "committed_at": pl.String, "operation": pl.String}, orient="row"
        )
        return frame.with_columns(
            pl.col("committed_at").str.strptime(pl.Datetime("us", "UTC"), "%Y-%m-%dT%H:%M:%S%.fZ")
        )
