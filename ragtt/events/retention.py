"""Retention's SQL: the runs (queries and replays) the log holds, and the one audited way to
blank their events. The guard that allows it lives in the schema (``migrations.py`` 3,
``pg_schema.py`` 2); the policy (what to keep) lives in ``ragtt/retention.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragtt.events.sql import sql_in
from ragtt.events.types import PRUNABLE

__all__ = ["LoggedRunRow", "Retention"]

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
        """Every run (query or replay) whose events are still whole, oldest first."""
        rows = self._conn.execute(
            f"SELECT query_id, MIN(ts), MAX(index_version) FROM events WHERE query_id IS NOT NULL "
            f"AND pruned_by IS NULL AND type IN ({sql_in(_TYPES)}) GROUP BY query_id",
            _TYPES,
        ).fetchall()
        found = [LoggedRunRow(str(q), str(ts), None if v is None else int(v)) for q, ts, v in rows]
        return sorted(found, key=lambda r: (r.started, r.query_id))

    def run_events(self, conn: Any, query_ids: Sequence[str]) -> list[tuple[Any, ...]]:
        """(seq, event_id, ts, type, query_id, index_version, doc_id, hash) of the whole events
        of ``query_ids``, in log order: what ``tombstones_digest`` covers."""
        out: list[tuple[Any, ...]] = []
        ids = list(query_ids)
        for start in range(0, len(ids), _BATCH):
            batch = ids[start : start + _BATCH]
            out.extend(
                tuple(r)
                for r in conn.execute(
                    "SELECT seq, event_id, ts, type, query_id, index_version, doc_id, hash FROM events "
                    f"WHERE pruned_by IS NULL AND type IN ({sql_in(_TYPES)}) AND query_id IN ({sql_in(batch)})",
                    [*_TYPES, *batch],
                ).fetchall()
            )
        return sorted(out, key=lambda r: int(r[0]))

    def blank(self, conn: Any, seqs: Sequence[int], prune_seq: int) -> None:
        """Blank the payloads of events ``seqs`` in the caller's transaction, after the
        ``history.pruned`` event ``prune_seq`` that accounts for them was appended in it."""
        ids = [int(s) for s in seqs]
        for start in range(0, len(ids), _BATCH):
            batch = ids[start : start + _BATCH]
            conn.execute(
                f"UPDATE events SET payload = '{{}}', pruned_by = ? WHERE seq IN ({sql_in(batch)})",
                [prune_seq, *batch],
            )

    def seq_of(self, conn: Any, event_id: str) -> int:
        return int(conn.execute("SELECT seq FROM events WHERE event_id = ?", (event_id,)).fetchone()[0])

    def pruned_by(self, query_id: str) -> int | None:
        """The seq of the ``history.pruned`` event that blanked ``query_id``'s run (None: not pruned)."""
        row = self._conn.execute(
            "SELECT pruned_by FROM events WHERE query_id = ? AND pruned_by IS NOT NULL LIMIT 1", (query_id,)
        ).fetchone()
        return None if row is None else int(row[0])
