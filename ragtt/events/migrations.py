"""Numbered schema migrations of ``events.db`` (``PRAGMA user_version`` is the number)."""

from __future__ import annotations

from typing import Any

from ragtt.errors import StoreError

__all__ = ["MIGRATIONS", "migrate"]

MIGRATIONS: tuple[str, ...] = (
    # 1: the event log, immutable by trigger, and the project's small state tables.
    """
    CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        event_id TEXT NOT NULL UNIQUE,
        ts TEXT NOT NULL,
        type TEXT NOT NULL,
        query_id TEXT,
        index_version INTEGER,
        doc_id TEXT,
        payload TEXT NOT NULL
    );
    CREATE INDEX events_type ON events (type, seq);
    CREATE INDEX events_query ON events (query_id) WHERE query_id IS NOT NULL;
    CREATE INDEX events_doc ON events (doc_id) WHERE doc_id IS NOT NULL;
    CREATE INDEX events_ts ON events (ts);
    CREATE TRIGGER events_no_update BEFORE UPDATE ON events
        BEGIN SELECT RAISE(ABORT, 'ragtt events are immutable'); END;
    CREATE TRIGGER events_no_delete BEFORE DELETE ON events
        BEGIN SELECT RAISE(ABORT, 'ragtt events are immutable'); END;

    -- Parsed documents, content-addressed: a version's chunks point here by doc_key.
    CREATE TABLE documents (
        doc_key TEXT PRIMARY KEY,
        doc_id TEXT NOT NULL,
        source TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        text TEXT NOT NULL,
        routes TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL
    );
    CREATE TABLE configs (config_id TEXT PRIMARY KEY, config TEXT NOT NULL, created_at TEXT NOT NULL);
    -- When each table version was committed, so "as of <datetime>" needs no manifest scan.
    CREATE TABLE index_versions (
        table_name TEXT NOT NULL,
        version INTEGER NOT NULL,
        committed_at TEXT NOT NULL,
        operation TEXT NOT NULL,
        PRIMARY KEY (table_name, version)
    );
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    """,
)


def migrate(conn: Any) -> int:
    """Bring ``conn`` to the newest schema; refuse a database from a newer ragtt."""
    current = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if current > len(MIGRATIONS):
        raise StoreError(
            f"events.db has schema version {current}, newer than this ragtt knows ({len(MIGRATIONS)}); "
            "upgrade ragtt"
        )
    for number in range(current, len(MIGRATIONS)):
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-check under the write lock: another process may have migrated meanwhile.
            if int(conn.execute("PRAGMA user_version").fetchone()[0]) == number:
                for statement in _statements(MIGRATIONS[number]):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return len(MIGRATIONS)


def _statements(script: str) -> list[str]:
    """Split a migration into statements; ``complete_statement`` knows trigger bodies."""
    import sqlite3

    out: list[str] = []
    buf = ""
    for part in script.split(";"):
        buf += part + ";"
        if sqlite3.complete_statement(buf):
            if buf.strip(" \n\t;"):
                out.append(buf.strip())
            buf = ""
    return out
