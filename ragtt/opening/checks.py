"""The cheap check an opening makes of a project's SQLite files (their header, and the
tables the marker promises), so a damaged file is a named error at once rather than a
traceback at the first read, or worse, appends onto a broken file. ``verify()`` runs
SQLite's full page checks; this reads a few pages.

The embedding cache is not history: a damaged one is moved aside (``embeddings.db.damaged``)
with a warning, and ragtt embeds again into a new one.
"""

from __future__ import annotations

from pathlib import Path

from ragtt._sqlite import driver
from ragtt.errors import ProjectDamagedError
from ragtt.events import probe
from ragtt.events.cache import set_aside

__all__ = ["ASSERTION_TABLES", "check_assertions", "check_event_log", "set_aside_damaged_cache"]

# What an assertion store holds from its first migration (ragtt/temporal/schema.py).
ASSERTION_TABLES = ("namespaces", "episodes", "assertions", "citations")
_CACHE_TABLES = ("embeddings",)
_RESTORE = "restore it from a backup of the project folder (`ragtt verify` lists what is affected)"


def check_event_log(db: Path) -> None:
    """``events.db`` (already migrated) must be a SQLite file with the log's tables."""
    _check(db, "the event log", probe.EVENT_LOG_TABLES)


def check_assertions(db: Path) -> None:
    """``assertions.db``, which the marker says exists, must be a SQLite file with its tables."""
    _check(db, "the assertion store", ASSERTION_TABLES)


def _check(db: Path, what: str, tables: tuple[str, ...]) -> None:
    problem = _problem(db, tables)
    if problem is not None:
        raise ProjectDamagedError(f"{what} {db} {problem}: the file is damaged; {_RESTORE}")


def _problem(db: Path, tables: tuple[str, ...]) -> str | None:
    """What is wrong with ``db``'s header or schema (None: it has its header and ``tables``)."""
    problem = probe.header_problem(db)
    if problem is not None:
        return problem
    try:
        missing = probe.missing_schema(db, tables)
    except driver().DatabaseError as exc:
        return f"cannot be read ({exc})"
    return f"has lost its {', '.join(missing)}" if missing else None


def set_aside_damaged_cache(db: Path) -> None:
    """Move a damaged embedding cache aside (with a warning) so a new one is made; a cache
    that is whole, or absent, is left alone."""
    if not db.exists() or db.stat().st_size == 0:
        return
    problem = _problem(db, _CACHE_TABLES)
    if problem is not None:
        set_aside(db, problem)
