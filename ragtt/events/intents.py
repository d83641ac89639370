"""Write intents: what a write will log, recorded before it touches the chunk table.

An intent is work state, not history: it is removed in the same transaction that logs the
write's events, and read back by recovery when a process died in between.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ragtt.events.sql import dump_json
from ragtt.events.time import format_ts

__all__ = ["Intent", "Intents"]


@dataclass(frozen=True)
class Intent:
    intent_id: str
    operation: str
    base_version: int
    created_at: str
    body: dict[str, Any]


class Intents:
    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def add(
        self, conn: Any, intent_id: str, operation: str, base_version: int, ts: datetime, body: dict[str, Any]
    ) -> None:
        conn.execute(
            "INSERT INTO intents (intent_id, operation, base_version, created_at, body) VALUES (?, ?, ?, ?, ?)",
            (intent_id, operation, base_version, format_ts(ts), dump_json(body)),
        )

    def remove(self, conn: Any, intent_id: str) -> None:
        conn.execute("DELETE FROM intents WHERE intent_id = ?", (intent_id,))

    def pending(self) -> list[Intent]:
        rows = self._conn.execute(
            "SELECT intent_id, operation, base_version, created_at, body FROM intents ORDER BY created_at"
        ).fetchall()
        return [Intent(r[0], r[1], int(r[2]), r[3], json.loads(r[4])) for r in rows]
