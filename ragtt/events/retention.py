"""Retention's SQL: the runs (queries and replays) the log holds, and the one audited way to
delete their events. The guard that allows it lives in the schema (``migrations.py`` 3,
``pg_schema.py`` 2); the policy (what to keep) lives in ``ragtt/retention.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragtt.events.sql import sql_in
from ragtt.events.types import HISTORY_PRUNED, PRUNABLE

__all__ = ["LoggedRunRow", "Retention", "spans"]

_TYPES = sorted(PRUNABLE)
_BATCH = 500


@dataclass(frozen=True)
class LoggedRunRow:
    query_id: str
    started: str  # the stored UTC timestamp of its first event
    index_version: int | None


class Retention:
    """The prunable part of one event log."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def runs(self) -> list[LoggedRunRow]:
        """Every run (query or replay) the log holds, oldest first."""
        rows = self._conn.execute(
            f"SELECT query_id, MIN(ts), MAX(index_version) FROM events WHERE query_id IS NOT NULL "
            f"AND type IN ({sql_in(_TYPES)}) GROUP BY query_id",
            _TYPES,
        ).fetchall()
        found = [LoggedRunRow(str(q), str(ts), None if v is None else int(v)) for q, ts, v in rows]
        return sorted(found, key=lambda r: (r.started, r.query_id))

    def run_events(self, conn: Any, query_ids: Sequence[str]) -> list[tuple[int, str]]:
        """(seq, hash) of every event of the runs ``query_ids``, in log order."""
        out: list[tuple[int, str]] = []
        ids = list(query_ids)
        for start in range(0, len(ids), _BATCH):
            batch = ids[start : start + _BATCH]
            out.extend(
                (int(seq), str(h))
                for seq, h in conn.execute(
                    f"SELECT seq, hash FROM events WHERE type IN ({sql_in(_TYPES)}) AND query_id IN ({sql_in(batch)})",
                    [*_TYPES, *batch],
                ).fetchall()
            )
        return sorted(out)

    def delete(self, conn: Any, seqs: Sequence[int]) -> None:
        """Delete events ``seqs`` in the caller's transaction, right after the ``history.pruned``
        event that lists them was appended in it (the log's guard allows nothing else)."""
        ids = [int(s) for s in seqs]
        for start in range(0, len(ids), _BATCH):
            batch = ids[start : start + _BATCH]
            conn.execute(f"DELETE FROM events WHERE seq IN ({sql_in(batch)})", batch)

    def pruned_in(self, query_id: str) -> int | None:
        """The seq of the ``history.pruned`` event that lists ``query_id`` (None: not pruned)."""
        row = self._conn.execute(
            "SELECT seq FROM events WHERE type = ? AND payload LIKE ? ORDER BY seq LIMIT 1",
            (HISTORY_PRUNED, f'%"{query_id}"%'),
        ).fetchone()
        return None if row is None else int(row[0])


def spans(rows: Sequence[tuple[int, str]]) -> list[list[Any]]:
    """Runs of consecutive event numbers among ``rows`` (seq, hash) as [first, last, hash of last]:
    what verify() needs to chain across a gap."""
    out: list[list[Any]] = []
    for seq, h in rows:
        if out and out[-1][1] == seq - 1:
            out[-1][1:] = [seq, h]
        else:
            out.append([seq, seq, h])
    return out
