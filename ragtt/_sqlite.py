"""SQLite connections: one place that knows which driver can load extensions.

The stdlib ``sqlite3`` of many Python builds cannot load extensions, so sqlite-vec needs
``pysqlite3`` (a drop-in with FTS5 and ``enable_load_extension``). The event log needs no
extension and works with either.
"""

from __future__ import annotations

import contextlib
import sqlite3 as _stdlib_sqlite3
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["connect", "driver", "load_sqlite_vec"]

BUSY_TIMEOUT_MS = 30_000


def driver() -> ModuleType:
    """The DB-API module to use: pysqlite3 when installed (extensions), else the stdlib."""
    try:
        import pysqlite3.dbapi2 as pysqlite3  # type: ignore[import-not-found]
    except ImportError:
        return _stdlib_sqlite3
    return pysqlite3


def connect(path: str | Path, *, wal: bool = True, foreign_keys: bool = False) -> Any:
    """Open ``path`` with WAL, a busy timeout and autocommit off (explicit transactions)."""
    db = driver()
    conn = db.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if wal and str(path) != ":memory:":
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    if foreign_keys:
        conn.execute("PRAGMA foreign_keys = ON")
    return conn


def load_sqlite_vec(conn: Any) -> bool:
    """Load sqlite-vec into ``conn``; False when the driver or the package cannot."""
    if not hasattr(conn, "enable_load_extension"):
        return False
    try:
        import sqlite_vec  # type: ignore[import-untyped]
    except ImportError:
        return False
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
    except Exception:
        return False
    finally:
        with contextlib.suppress(Exception):
            conn.enable_load_extension(False)
    return True
