"""The event log's schema on Postgres: the same tables as ``events.db``, the same guards.

Numbered migrations (the number is ``ragtt_schema.version``), each in one transaction under
an advisory transaction lock, so processes opening one database at once migrate it once.
Timestamps stay fixed-width text (``COLLATE "C"``, so they sort as strings whatever the
database's locale) and payloads stay JSON text: the hash chain covers exactly the stored
text, on either backend.
"""

from __future__ import annotations

from typing import Any

from ragtt.errors import StoreError
from ragtt.events.types import HISTORY_PRUNED, ONCE_PER_QUERY, PRUNABLE

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "migrate"]

_ONCE = ", ".join(f"'{t}'" for t in sorted(ONCE_PER_QUERY))
# 23000 (integrity_constraint_violation) makes psycopg raise an IntegrityError, as SQLite's
# RAISE(ABORT) does, so the store turns it into a HistoryError in one place.
_REFUSE = "RAISE EXCEPTION 'ragtt % are immutable', {what} USING ERRCODE = '23000'"


def _guards(table: str, what: str, same_row: str) -> str:
    """UPDATE, DELETE, TRUNCATE and an INSERT that collides with a row (what ``ON CONFLICT DO
    UPDATE`` would turn into a rewrite) are refused by the database itself."""
    return f"""
    CREATE FUNCTION ragtt_{table}_no_replace() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF EXISTS (SELECT 1 FROM {table} WHERE {same_row}) THEN {_REFUSE.format(what=repr(what))}; END IF;
        RETURN NEW;
    END $$;
    CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table} FOR EACH ROW EXECUTE FUNCTION ragtt_refuse('{what}');
    CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table} FOR EACH ROW EXECUTE FUNCTION ragtt_refuse('{what}');
    CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} FOR EACH STATEMENT
        EXECUTE FUNCTION ragtt_refuse('{what}');
    CREATE TRIGGER {table}_no_replace BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION ragtt_{table}_no_replace();
    """


_V1 = f"""
    CREATE FUNCTION ragtt_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN {_REFUSE.format(what="TG_ARGV[0]")}; END $$;

    CREATE TABLE events (
        seq BIGINT PRIMARY KEY,
        event_id TEXT NOT NULL UNIQUE,
        ts TEXT COLLATE "C" NOT NULL,
        type TEXT NOT NULL,
        query_id TEXT,
        index_version BIGINT,
        doc_id TEXT,
        payload TEXT NOT NULL,
        hash TEXT NOT NULL
    );
    CREATE INDEX events_type ON events (type, seq);
    CREATE INDEX events_query ON events (query_id) WHERE query_id IS NOT NULL;
    CREATE INDEX events_doc ON events (doc_id) WHERE doc_id IS NOT NULL;
    CREATE INDEX events_ts ON events (ts);
    CREATE UNIQUE INDEX events_once_per_query ON events (query_id, type)
        WHERE query_id IS NOT NULL AND type IN ({_ONCE});
    {
    _guards(
        "events",
        "events",
        f"event_id = NEW.event_id OR seq = NEW.seq OR (NEW.query_id IS NOT NULL "
        f"AND NEW.type IN ({_ONCE}) AND query_id = NEW.query_id AND type = NEW.type)",
    )
}

    -- The highest event number ever committed (SQLite's sqlite_sequence): deleting the
    -- newest events leaves it ahead of them, which verify() reports. It only moves forward.
    CREATE TABLE events_head (one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one), seq BIGINT NOT NULL);
    CREATE FUNCTION ragtt_events_head_forward() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'DELETE' OR NEW.seq < OLD.seq THEN {_REFUSE.format(what="'event numbers'")}; END IF;
        RETURN NEW;
    END $$;
    CREATE TRIGGER events_head_forward BEFORE UPDATE OR DELETE ON events_head FOR EACH ROW
        EXECUTE FUNCTION ragtt_events_head_forward();

    CREATE TABLE documents (
        doc_key TEXT PRIMARY KEY,
        doc_id TEXT NOT NULL,
        source TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        text TEXT NOT NULL,
        routes TEXT NOT NULL DEFAULT '[]',
        created_at TEXT COLLATE "C" NOT NULL
    );
    {_guards("documents", "documents", "doc_key = NEW.doc_key")}

    CREATE TABLE index_versions (
        table_name TEXT NOT NULL,
        version BIGINT NOT NULL,
        committed_at TEXT COLLATE "C" NOT NULL,
        operation TEXT NOT NULL,
        PRIMARY KEY (table_name, version)
    );
    {_guards("index_versions", "index versions", "table_name = NEW.table_name AND version = NEW.version")}

    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    -- A write in flight (work state, not history): see docs/ARCHITECTURE.md.
    CREATE TABLE intents (
        intent_id TEXT PRIMARY KEY,
        operation TEXT NOT NULL,
        base_version BIGINT NOT NULL,
        created_at TEXT COLLATE "C" NOT NULL,
        body TEXT NOT NULL
    );
"""

_PRUNABLE = ", ".join(f"'{t}'" for t in sorted(PRUNABLE))
# Retention's one exception to "never DELETE" (the same rule as events.db's migration 3): a
# run's event may be deleted while the log's newest event is a ``history.pruned`` event, i.e.
# in the prune's own transaction, which lists what it deletes.
_V2 = f"""
    CREATE FUNCTION ragtt_events_prune_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF OLD.type IN ({_PRUNABLE})
            AND (SELECT type FROM events ORDER BY seq DESC LIMIT 1) = '{HISTORY_PRUNED}' THEN
            RETURN OLD;
        END IF;
        {_REFUSE.format(what="'events'")};
    END $$;
    DROP TRIGGER events_no_delete ON events;
    CREATE TRIGGER events_no_delete BEFORE DELETE ON events FOR EACH ROW EXECUTE FUNCTION ragtt_events_prune_only();
"""


# The embedding cache, in the log's database so every machine of a team shares it (cache, not
# history: no guards; a row is only ever inserted, ON CONFLICT DO NOTHING). float32 bytes.
_V3 = """
    CREATE TABLE embeddings (
        model_id TEXT NOT NULL,
        text_sha256 TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BYTEA NOT NULL,
        PRIMARY KEY (model_id, text_sha256)
    );
"""

# The guards probe the table by indexed columns. PL/pgSQL caches the plan, and one made while
# the table was small (or before autovacuum's first ANALYZE) is a sequential scan: each append
# then read the whole log, quadratic in its size (measured: 26 s per 4,000 events at 10,000;
# 1 s per 10,000 with this, flat). The guards always use the index.
_V4 = """
    ALTER FUNCTION ragtt_events_prune_only() SET enable_seqscan = off;
    ALTER FUNCTION ragtt_events_no_replace() SET enable_seqscan = off;
    ALTER FUNCTION ragtt_documents_no_replace() SET enable_seqscan = off;
    ALTER FUNCTION ragtt_index_versions_no_replace() SET enable_seqscan = off;
"""

# A long document text in parts (ragtt/events/documents.py), as in events.db's migration 4.
_V5 = f"""
    ALTER TABLE documents ADD COLUMN parts INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE document_text_parts (
        doc_key TEXT NOT NULL,
        part INTEGER NOT NULL,
        text TEXT NOT NULL,
        PRIMARY KEY (doc_key, part)
    );
    {_guards("document_text_parts", "documents", "doc_key = NEW.doc_key AND part = NEW.part")}
    ALTER FUNCTION ragtt_document_text_parts_no_replace() SET enable_seqscan = off;
"""

MIGRATIONS: tuple[str, ...] = (_V1, _V2, _V3, _V4, _V5)
SCHEMA_VERSION = len(MIGRATIONS)
# pg_advisory_xact_lock key of schema changes (any constant unique to ragtt).
MIGRATION_LOCK = 0x7261677474_01


def schema_version(conn: Any) -> int:
    """0 for a database ragtt never wrote to."""
    row = conn.execute("SELECT to_regclass('ragtt_schema') IS NOT NULL").fetchone()
    if not row[0]:
        return 0
    row = conn.execute("SELECT version FROM ragtt_schema").fetchone()
    return 0 if row is None else int(row[0])


def migrate(conn: Any, name: str) -> int:
    """Bring the database of a psycopg (autocommit) connection to the newest schema."""
    current = schema_version(conn)
    if current > SCHEMA_VERSION:
        raise StoreError(
            f"{name} has schema version {current}, newer than this ragtt knows ({SCHEMA_VERSION}); upgrade ragtt"
        )
    while current < SCHEMA_VERSION:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            current = schema_version(conn)  # another process may have migrated meanwhile
            if current < SCHEMA_VERSION:
                conn.execute("CREATE TABLE IF NOT EXISTS ragtt_schema (version INTEGER NOT NULL)")
                conn.execute(MIGRATIONS[current])
                conn.execute("DELETE FROM ragtt_schema")
                conn.execute("INSERT INTO ragtt_schema (version) VALUES (%s)", (current + 1,))
                current += 1
    return SCHEMA_VERSION
