"""The assertion store's schema: numbered migrations, pragmas and validated extensions.

Every identifier that reaches DDL is either ours or checked against ``IDENTIFIER``; the
vec0 table of a namespace is named from a hash of the namespace, never from its text.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragtt._hashing import sha256_hex, stable_json
from ragtt.errors import ConfigError, StoreError
from ragtt.temporal.rows import ASSERTION_COLUMNS, quoted

__all__ = [
    "DEFAULT_TOKENIZER",
    "SCHEMA_VERSION",
    "ExtensionColumn",
    "ExtensionTable",
    "SchemaExtensions",
    "apply_extensions",
    "migrate",
    "prepare_connection",
    "vec_table_name",
]

DEFAULT_TOKENIZER = "unicode61 remove_diacritics 2"
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
SQL_TYPES = ("TEXT", "INTEGER", "REAL", "BLOB", "NUMERIC")
CACHE_BYTES = 64 * 1024 * 1024  # the page cache a store's connection gets at least
OPEN_END = 1e308  # vec0 metadata cannot be NULL: an open validity end is stored as this sentinel


def fts_ddl(tokenizer: str) -> list[str]:
    """The FTS5 index over assertion content (external content).

    Deletes and content updates are mirrored by triggers. Inserts are indexed by
    ``writes.insert_assertions``, one ``INSERT ... SELECT`` per batch in the batch's
    transaction: a per-row trigger cost about half of a bulk write's insert time.
    """
    quoted = tokenizer.replace("'", "''")
    return [
        "CREATE VIRTUAL TABLE assertions_fts USING fts5("
        f"content, content='assertions', content_rowid='seq', tokenize='{quoted}')",
        "CREATE TRIGGER assertions_fts_ad AFTER DELETE ON assertions BEGIN "
        "INSERT INTO assertions_fts(assertions_fts, rowid, content) VALUES ('delete', old.seq, old.content); END",
        "CREATE TRIGGER assertions_fts_au AFTER UPDATE OF content ON assertions BEGIN "
        "INSERT INTO assertions_fts(assertions_fts, rowid, content) VALUES ('delete', old.seq, old.content); "
        "INSERT INTO assertions_fts(rowid, content) VALUES (new.seq, new.content); END",
    ]


_V1 = [
    """CREATE TABLE namespaces (
        name TEXT PRIMARY KEY,
        embedding_dimension INTEGER CHECK (embedding_dimension IS NULL OR embedding_dimension > 0),
        embedding_model TEXT,
        vec_table TEXT,
        index_generation INTEGER NOT NULL DEFAULT 0,
        change_seq INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL)""",
    """CREATE TABLE namespace_locks (
        namespace TEXT PRIMARY KEY REFERENCES namespaces(name),
        owner TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL, acquired_at REAL NOT NULL)""",
    """CREATE TABLE episodes (
        id TEXT PRIMARY KEY,
        namespace TEXT NOT NULL REFERENCES namespaces(name),
        position REAL NOT NULL, occurred_at TEXT NOT NULL, type TEXT NOT NULL,
        content TEXT NOT NULL, metadata TEXT)""",
    "CREATE INDEX episodes_ns_position ON episodes(namespace, position)",
    """CREATE TABLE assertions (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        namespace TEXT NOT NULL REFERENCES namespaces(name),
        type TEXT NOT NULL, content TEXT NOT NULL,
        valid_from REAL NOT NULL, valid_until REAL,
        confidence REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
        source_episode_id TEXT NOT NULL REFERENCES episodes(id),
        supersedes_id TEXT UNIQUE REFERENCES assertions(id),
        entity_id TEXT, entity_type TEXT, metadata TEXT,
        change_seq INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL,
        CHECK (valid_until IS NULL OR valid_until > valid_from))""",
    "CREATE INDEX assertions_ns_from ON assertions(namespace, valid_from)",
    "CREATE INDEX assertions_ns_entity ON assertions(namespace, entity_id, valid_from)",
    "CREATE INDEX assertions_ns_change ON assertions(namespace, change_seq)",
    """CREATE TABLE citations (
        id TEXT PRIMARY KEY,
        assertion_id TEXT NOT NULL REFERENCES assertions(id),
        episode_id TEXT NOT NULL REFERENCES episodes(id),
        source_ref TEXT NOT NULL, excerpt TEXT, excerpt_start INTEGER, excerpt_end INTEGER,
        metadata TEXT)""",
    "CREATE INDEX citations_assertion ON citations(assertion_id)",
    """CREATE TABLE links (
        id TEXT PRIMARY KEY,
        namespace TEXT NOT NULL REFERENCES namespaces(name),
        from_id TEXT NOT NULL REFERENCES assertions(id),
        to_id TEXT NOT NULL REFERENCES assertions(id),
        link_type TEXT NOT NULL, valid_from REAL NOT NULL, valid_until REAL, metadata TEXT,
        CHECK (valid_until IS NULL OR valid_until > valid_from))""",
    "CREATE INDEX links_from ON links(namespace, from_id)",
    "CREATE INDEX links_to ON links(namespace, to_id)",
    "CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    f"INSERT INTO settings VALUES ('fts_tokenizer', '{DEFAULT_TOKENIZER}')",
    """CREATE TABLE schema_extensions (
        kind TEXT NOT NULL, name TEXT NOT NULL, definition TEXT NOT NULL, PRIMARY KEY (kind, name))""",
    *fts_ddl(DEFAULT_TOKENIZER),
    "CREATE TRIGGER assertions_fts_ai AFTER INSERT ON assertions BEGIN "
    "INSERT INTO assertions_fts(rowid, content) VALUES (new.seq, new.content); END",
]

# 2: inserts are indexed per batch by the writer (see fts_ddl), not row by row by a trigger
_V2 = ["DROP TRIGGER IF EXISTS assertions_fts_ai"]

MIGRATIONS: list[tuple[int, list[str]]] = [(1, _V1), (2, _V2)]
SCHEMA_VERSION = MIGRATIONS[-1][0]


def prepare_connection(conn: Any) -> None:
    """WAL, busy timeout, foreign keys ON (verified) and a page cache of at least ``CACHE_BYTES``
    (a connection mid-transaction cannot be prepared)."""
    if conn.in_transaction:
        raise StoreError("the connection is inside a transaction; commit or roll back before opening a store")
    conn.execute("PRAGMA busy_timeout = 30000")
    conn.execute("PRAGMA foreign_keys = ON")
    if conn.execute("PRAGMA foreign_keys").fetchone()[0] != 1:
        raise StoreError("could not turn foreign keys on for this connection")
    _raise_cache(conn)
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    if str(mode).lower() not in ("wal", "memory"):
        conn.execute("PRAGMA journal_mode = WAL")


def _raise_cache(conn: Any) -> None:
    """A page cache of at least ``CACHE_BYTES``, never lowering a larger one the caller set.

    SQLite's default (2 MiB) is smaller than the B-tree pages one bulk write touches (the
    id indexes, the FTS5 segments, the vec0 chunks): with it a 10,000-row batch re-reads
    evicted pages, and writes run about half as fast.
    """
    current = int(conn.execute("PRAGMA cache_size").fetchone()[0])
    size = -current * 1024 if current < 0 else current * int(conn.execute("PRAGMA page_size").fetchone()[0])
    if size < CACHE_BYTES:
        conn.execute(f"PRAGMA cache_size = -{CACHE_BYTES // 1024}")


def migrate(conn: Any) -> int:
    """Apply pending migrations under one write lock; refuse a schema newer than this code."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL)")
        current = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0]
        if current > SCHEMA_VERSION:
            raise StoreError(
                f"assertion store schema version {current} is newer than this ragtt understands "
                f"({SCHEMA_VERSION}); upgrade ragtt"
            )
        for version, statements in MIGRATIONS:
            if version <= current:
                continue
            for sql in statements:
                conn.execute(sql)
            conn.execute("INSERT INTO schema_migrations VALUES (?, ?)", (version, time.time()))
            current = version
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return int(current)


def vec_table_name(namespace: str, generation: int) -> str:
    digest = sha256_hex("ns\0" + namespace)[:16]
    return f"vec_{digest}_g{generation}"


def vec_ddl(table: str, dimension: int) -> str:
    if isinstance(dimension, bool) or not isinstance(dimension, int) or not 0 < dimension <= 65536:
        raise ConfigError(f"embedding_dimension must be an int in 1..65536; got {dimension!r}")
    return (
        f"CREATE VIRTUAL TABLE {table} USING vec0(embedding float[{dimension}] distance_metric=cosine, "
        "valid_from float, valid_until float, confidence float, type text, entity_type text)"
    )


# --- schema extensions ------------------------------------------------------------------

EXTENSIBLE_TABLES = {
    "assertions": {"seq", *ASSERTION_COLUMNS, "change_seq", "created_at"},
    "episodes": {"id", "namespace", "position", "occurred_at", "type", "content", "metadata"},
}


def _identifier(value: object, what: str) -> str:
    if not isinstance(value, str) or not IDENTIFIER.match(value):
        raise ConfigError(f"{what} must be a letter or _ followed by letters, digits or _; got {value!r}")
    return value


def _sql_type(value: object) -> str:
    if not isinstance(value, str) or value.upper() not in SQL_TYPES:
        raise ConfigError(f"column type must be one of {', '.join(SQL_TYPES)}; got {value!r}")
    return value.upper()


def _literal(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ConfigError(f"a column default must be None, int, float or str; got {value!r}")
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


@dataclass(frozen=True)
class ExtensionColumn:
    """An extra column on ``assertions`` or ``episodes``, filled from the record's ``extensions``."""

    table: str
    name: str
    type: str = "TEXT"
    default: str | int | float | None = None

    def __post_init__(self) -> None:
        if self.table not in EXTENSIBLE_TABLES:
            raise ConfigError(f"extension columns go on {sorted(EXTENSIBLE_TABLES)}; got table {self.table!r}")
        _identifier(self.name, "extension column name")
        if self.name in EXTENSIBLE_TABLES[self.table]:
            raise ConfigError(f"column {self.name!r} already exists on {self.table}; choose another name")
        object.__setattr__(self, "type", _sql_type(self.type))
        _literal(self.default)

    def ddl(self) -> str:
        return f"ALTER TABLE {self.table} ADD COLUMN {quoted(self.name)} {self.type} DEFAULT {_literal(self.default)}"


@dataclass(frozen=True)
class ExtensionTable:
    """An extra table ``ext_<name>`` with an integer key and, optionally, an assertion reference."""

    name: str
    columns: Sequence[tuple[str, str]] = ()
    references_assertions: bool = True

    def __post_init__(self) -> None:
        _identifier(self.name, "extension table name")
        cols = tuple((_identifier(n, "extension table column"), _sql_type(t)) for n, t in self.columns)
        names = [n for n, _ in cols]
        if len(set(names)) != len(names) or {"id", "assertion_id"} & set(names):
            raise ConfigError(f"extension table {self.name!r}: column names must be unique, not id/assertion_id")
        object.__setattr__(self, "columns", cols)

    @property
    def table(self) -> str:
        return f"ext_{self.name}"

    def ddl(self) -> str:
        parts = ["id INTEGER PRIMARY KEY"]
        if self.references_assertions:
            parts.append("assertion_id TEXT NOT NULL REFERENCES assertions(id)")
        parts += [f"{quoted(n)} {t}" for n, t in self.columns]
        return f"CREATE TABLE IF NOT EXISTS {quoted(self.table)} ({', '.join(parts)})"


@dataclass(frozen=True)
class SchemaExtensions:
    """Extra columns and tables, validated here and applied idempotently at open."""

    columns: Sequence[ExtensionColumn] = ()
    tables: Sequence[ExtensionTable] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(self.columns))
        object.__setattr__(self, "tables", tuple(self.tables))
        for item in (*self.columns, *self.tables):
            if not isinstance(item, ExtensionColumn | ExtensionTable):
                raise ConfigError(f"schema extensions take ExtensionColumn / ExtensionTable; got {item!r}")
        keys = [(c.table, c.name) for c in self.columns] + [("table", t.name) for t in self.tables]
        if len(set(keys)) != len(keys):
            raise ConfigError("schema extensions name the same column or table twice")


def _definition(item: ExtensionColumn | ExtensionTable) -> tuple[str, str, str]:
    if isinstance(item, ExtensionColumn):
        return "column", f"{item.table}.{item.name}", stable_json([item.type, item.default])
    return "table", item.name, stable_json([list(map(list, item.columns)), item.references_assertions])


def apply_extensions(conn: Any, extensions: SchemaExtensions | None) -> dict[str, dict[str, Any]]:
    """Create what is missing; refuse a name already applied with a different definition.

    Returns every applied extension column (this store's and earlier ones): ``{table: {column: default}}``.
    """
    applied: dict[str, dict[str, Any]] = {table: {} for table in EXTENSIBLE_TABLES}
    conn.execute("BEGIN IMMEDIATE")
    try:
        items: list[ExtensionColumn | ExtensionTable] = [*extensions.columns, *extensions.tables] if extensions else []
        for item in items:
            kind, name, definition = _definition(item)
            row = conn.execute(
                "SELECT definition FROM schema_extensions WHERE kind = ? AND name = ?", (kind, name)
            ).fetchone()
            if row is not None and row[0] != definition:
                raise ConfigError(
                    f"extension {kind} {name!r} exists with definition {row[0]}, not {definition}; "
                    "extensions cannot be changed in place"
                )
            if row is None:
                conn.execute(item.ddl())
                conn.execute("INSERT INTO schema_extensions VALUES (?, ?, ?)", (kind, name, definition))
        for name, definition in conn.execute(
            "SELECT name, definition FROM schema_extensions WHERE kind = 'column' ORDER BY name"
        ).fetchall():
            table, column = name.split(".", 1)
            applied.setdefault(table, {})[column] = json.loads(definition)[1]
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return applied
