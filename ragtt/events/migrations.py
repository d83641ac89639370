"""Numbered schema migrations of ``events.db`` (``PRAGMA user_version`` is the number).

A migration is SQL, or a function of the connection when it must compute (the hash chain
of a log written before it existed). Each runs in one transaction under the write lock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragtt.errors import StoreError
from ragtt.events.chain import GENESIS, event_hash
from ragtt.events.types import HISTORY_PRUNED, ONCE_PER_QUERY, PRUNABLE

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "migrate"]

_IMMUTABLE = "BEGIN SELECT RAISE(ABORT, 'ragtt {what} are immutable'); END"


def _guards(table: str, what: str, same_row: str) -> str:
    """Triggers that refuse UPDATE, DELETE and any INSERT that would replace a row.

    ``INSERT OR REPLACE`` and ``REPLACE INTO`` delete the old row without firing a DELETE
    trigger (unless recursive_triggers is on in the writer's connection, which a tamperer
    controls), so a BEFORE INSERT trigger refuses an insert that collides with a row.
    """
    body = _IMMUTABLE.format(what=what)
    return f"""
    CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table} {body};
    CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table} {body};
    CREATE TRIGGER {table}_no_replace BEFORE INSERT ON {table} WHEN EXISTS (
        SELECT 1 FROM {table} WHERE {same_row}) {body};
    """


_ONCE = ", ".join(f"'{t}'" for t in sorted(ONCE_PER_QUERY))

_V1 = """
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
"""


def _v2(conn: Any) -> None:
    """The hash chain, history guards on every history table, and the write intents."""
    from ragtt.events.sql import run_script

    conn.execute("DROP TRIGGER events_no_update")
    conn.execute("ALTER TABLE events ADD COLUMN hash TEXT NOT NULL DEFAULT ''")
    prev = GENESIS
    rows = conn.execute(
        "SELECT seq, event_id, ts, type, query_id, index_version, doc_id, payload FROM events ORDER BY seq"
    ).fetchall()
    for row in rows:
        prev = event_hash(prev, row[1:])
        conn.execute("UPDATE events SET hash = ? WHERE seq = ?", (prev, row[0]))
    conn.execute("DROP TRIGGER events_no_delete")
    conn.execute("DROP TABLE configs")  # written, never read: the config lives in meta and in every plan
    run_script(
        conn,
        f"""
    {
            _guards(
                "events",
                "events",
                f"event_id = NEW.event_id OR seq = NEW.seq OR (NEW.query_id IS NOT NULL "
                f"AND NEW.type IN ({_ONCE}) AND query_id = NEW.query_id AND type = NEW.type)",
            )
        }
    CREATE UNIQUE INDEX events_once_per_query ON events (query_id, type)
        WHERE query_id IS NOT NULL AND type IN ({_ONCE});
    {_guards("documents", "documents", "doc_key = NEW.doc_key")}
    {_guards("index_versions", "index versions", "table_name = NEW.table_name AND version = NEW.version")}
    -- A write in flight: recorded before the index commit, removed when its events are
    -- logged. Work state, not history: recovery reads it after a crash.
    CREATE TABLE intents (
        intent_id TEXT PRIMARY KEY,
        operation TEXT NOT NULL,
        base_version INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        body TEXT NOT NULL
    );
    """,
    )


_PRUNABLE = ", ".join(f"'{t}'" for t in sorted(PRUNABLE))
# Retention's one exception to "never DELETE": an event of a run (a query's or a replay's) may
# be deleted while the log's newest event is a ``history.pruned`` event, i.e. in the prune's
# own transaction, which lists what it deletes; verify() reports any gap no prune lists.
# Nothing else is ever deleted: document, index, snapshot and prune events stay.
_NEWEST_IS_A_PRUNE = f"(SELECT type FROM events WHERE seq = (SELECT MAX(seq) FROM events)) = '{HISTORY_PRUNED}'"
_V3 = f"""
    DROP TRIGGER events_no_delete;
    CREATE TRIGGER events_no_delete BEFORE DELETE ON events
        WHEN NOT (OLD.type IN ({_PRUNABLE}) AND {_NEWEST_IS_A_PRUNE})
        {_IMMUTABLE.format(what="events")};
"""

# A long document text in parts (ragtt/events/documents.py): ``documents.parts`` counts them,
# 0 for a text stored whole in ``documents.text`` (every text stored before). History, so
# guarded like the documents themselves.
_V4 = f"""
    ALTER TABLE documents ADD COLUMN parts INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE document_text_parts (
        doc_key TEXT NOT NULL,
        part INTEGER NOT NULL,
        text TEXT NOT NULL,
        PRIMARY KEY (doc_key, part)
    );
    {_guards("document_text_parts", "documents", "doc_key = NEW.doc_key AND part = NEW.part")}
"""

MIGRATIONS: tuple[str | Callable[[Any], None], ...] = (_V1, _v2, _V3, _V4)
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: Any, name: str = "events.db") -> int:
    """Bring ``conn`` to the newest schema; refuse a database from a newer ragtt."""
    from ragtt.events.sql import run_script

    current = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if current > SCHEMA_VERSION:
        raise StoreError(
            f"{name} has schema version {current}, newer than this ragtt knows ({SCHEMA_VERSION}); upgrade ragtt"
        )
    for number in range(current, SCHEMA_VERSION):
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-check under the write lock: another process may have migrated meanwhile.
            if int(conn.execute("PRAGMA user_version").fetchone()[0]) == number:
                step = MIGRATIONS[number]
                if callable(step):
                    step(conn)
                else:
                    run_script(conn, step)
                conn.execute(f"PRAGMA user_version = {number + 1}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    return SCHEMA_VERSION
