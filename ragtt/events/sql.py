"""Small helpers shared by the repositories of the event log (both backends: their SQL uses ``?``)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

__all__ = ["dump_json", "run_script", "sql_in"]


def dump_json(obj: Any) -> str:
    """JSON for a payload column: numpy arrays, tuples, sets and datetimes included."""
    return json.dumps(obj, ensure_ascii=False, default=_json_default)


def _json_default(obj: Any) -> Any:
    from ragtt.events.time import format_ts

    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, datetime):
        return format_ts(obj)
    if isinstance(obj, tuple | set | frozenset):
        return list(obj)
    raise TypeError(f"cannot store {type(obj).__name__} in an event payload")


def run_script(conn: Any, script: str) -> None:
    """Run a multi-statement script inside the caller's transaction (``executescript`` would
    commit first); ``complete_statement`` knows trigger bodies."""
    import sqlite3

    buf = ""
    for part in script.split(";"):
        buf += part + ";"
        if sqlite3.complete_statement(buf):
            if buf.strip(" \n\t;"):
                conn.execute(buf.strip())
            buf = ""


def sql_in(values: list[Any]) -> str:
    """``?, ?, ?`` for an ``IN`` list of ``values`` (bound, never interpolated)."""
    return ",".join("?" * len(values))
