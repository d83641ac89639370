"""Read-only looks at a project's SQLite files, without migrating or changing them: what an
opening decides with (the log's schema version, its stored config, whether it holds
history) and SQLite's own checks of a file (its header, its schema, ``quick_check``).

Every statement a caller outside the log needs on these files is here, so SQL stays in
``ragtt/events``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ragtt._sqlite import driver
from ragtt.events.types import INDEX_CREATED, INDEX_FILES_RECORDED

__all__ = [
    "EVENT_LOG_GUARDS",
    "EVENT_LOG_TABLES",
    "header_problem",
    "history_events",
    "integrity_problems",
    "missing_schema",
    "schema_version",
    "stored_config",
]

_HEADER = b"SQLite format 3\x00"
# What a migrated events.db holds (the marker promises a log with its history guards).
EVENT_LOG_TABLES = ("events", "documents", "document_text_parts", "index_versions", "meta", "intents")
EVENT_LOG_GUARDS = tuple(
    f"{t}_no_{op}"
    for t in ("events", "documents", "document_text_parts", "index_versions")
    for op in ("update", "delete", "replace")
)
_PROBLEMS_SHOWN = 5


@contextlib.contextmanager
def _read_only(db: Path) -> Iterator[Any]:
    conn = driver().connect(f"file:{db}?mode=ro", uri=True)
    try:
        yield conn
    finally:
        conn.close()


def schema_version(db: Path) -> int | None:
    """``events.db``'s schema version (``PRAGMA user_version``); None when there is no file.
    A file that is not a database raises the driver's DatabaseError."""
    if not db.exists():
        return None
    with _read_only(db) as conn:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])


def stored_config(db: Path) -> str | None:
    """The config (JSON text) a project last ran with, from its log's ``meta``; None when
    the file, the table or the row is not there."""
    if not db.exists():
        return None
    try:
        with _read_only(db) as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()
    except driver().DatabaseError:
        return None
    return None if row is None else str(row[0])


def history_events(db: Path) -> int:
    """How many events beyond a creation's the log holds (0: none, or no events table yet)."""
    if not db.exists():
        return 0
    try:
        with _read_only(db) as conn:
            sql = "SELECT COUNT(*) FROM events WHERE type NOT IN (?, ?)"
            return int(conn.execute(sql, (INDEX_CREATED, INDEX_FILES_RECORDED)).fetchone()[0])
    except driver().DatabaseError:
        return 0  # no events table yet: a creation that died before it migrated


def header_problem(db: Path) -> str | None:
    """What is wrong with the file's SQLite header (None: it is a SQLite database)."""
    try:
        with db.open("rb") as fh:
            head = fh.read(len(_HEADER))
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if head != _HEADER:
        return "is not a SQLite database (its header is overwritten)"
    return None


def missing_schema(db: Path, tables: Iterable[str], triggers: Iterable[str] = ()) -> list[str]:
    """The tables and triggers of ``tables``/``triggers`` that ``db`` lacks (a damaged
    schema page raises the driver's DatabaseError)."""
    with _read_only(db) as conn:
        have = {(str(t), str(n)) for t, n in conn.execute("SELECT type, name FROM sqlite_master")}
    missing = [f"table {t}" for t in tables if ("table", t) not in have]
    return missing + [f"guard {g}" for g in triggers if ("trigger", g) not in have]


def integrity_problems(db: Path, *, deep: bool = False) -> list[str]:
    """SQLite's own check of ``db``: ``quick_check`` (``integrity_check`` when ``deep``, which
    also compares every index with its table); [] when it is whole."""
    pragma = "integrity_check" if deep else "quick_check"
    try:
        with _read_only(db) as conn:
            rows = [line for r in conn.execute(f"PRAGMA {pragma}").fetchall() for line in str(r[0]).splitlines()]
    except driver().DatabaseError as exc:
        return [str(exc)]
    if rows == ["ok"]:
        return []
    more = f" (and {len(rows) - _PROBLEMS_SHOWN} more)" if len(rows) > _PROBLEMS_SHOWN else ""
    return ["; ".join(rows[:_PROBLEMS_SHOWN]) + more]
