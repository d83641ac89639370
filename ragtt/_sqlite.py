"""SQLite connections: one place that knows which driver can load extensions.

The stdlib ``sqlite3`` of many Python builds cannot load extensions, so sqlite-vec needs
``pysqlite3`` (a drop-in with FTS5 and ``enable_load_extension``). The event log needs no
extension and works with either.
"""

from __future__ import annotations

import contextlib
import sqlite3 as _stdlib_sqlite3
import time
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["connect", "copy_database", "driver", "load_sqlite_vec"]

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
        _enter_wal(conn, db)
        conn.execute("PRAGMA synchronous = NORMAL")
    if foreign_keys:
        conn.execute("PRAGMA foreign_keys = ON")
    return conn


def _enter_wal(conn: Any, db: ModuleType) -> None:
    """Switch a new file to WAL, waiting out a process that is setting it up at the same time.

    The switch reads the header under a shared lock and then upgrades to write it. When
    another connection already holds the write lock, SQLite answers that upgrade with
    "database is locked" at once, without the busy handler (waiting could deadlock). The
    statement has let go of its lock by then, so retrying is safe; once the other process
    commits, the file is in WAL mode and the pragma changes nothing.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except db.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


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


def copy_database(source: str | Path, target: str | Path) -> None:
    """A consistent copy of the database ``source`` at ``target`` through SQLite's online
    backup API: one read transaction, so writers in other processes go on (WAL) and the copy
    is the database as of one commit."""
    db = driver()
    src = db.connect(f"file:{source}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        dst = db.connect(str(target))
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()
