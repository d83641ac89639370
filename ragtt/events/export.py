"""Copying an event log, as of one moment, into another, empty one.

How a project whose log is in Postgres is backed up (``ragtt/backup.py``), and how a backup
is restored into a new Postgres database or ``events.db`` (``ragtt/restore.py``): every row
of the history tables is read in one read-only snapshot (``EventLog.snapshot``) and written,
as it was stored, in ONE transaction of the target, which has the same schema and the same
guards on either backend. The events keep their numbers, their stored text and their hashes,
so the copy's hash chain is the original's and ``verify()`` walks it alike; the copy holds
all of the history or none of it. The embedding cache can be copied too (``copy_vectors``),
so replays in the copy search with the bit-identical query vectors.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt.events.base import EVENT_COLUMNS

if TYPE_CHECKING:
    from ragtt.events.base import EventLog
    from ragtt.events.cache import VectorStore

__all__ = ["copy_cache", "copy_log", "copy_vectors", "holds_history", "newest_hash"]

# Every table of the log's history and work state, with its columns (the same on either backend).
_TABLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("events", (*EVENT_COLUMNS, "hash")),
    ("documents", ("doc_key", "doc_id", "source", "content_hash", "text", "routes", "created_at", "parts")),
    ("document_text_parts", ("doc_key", "part", "text")),
    ("index_versions", ("table_name", "version", "committed_at", "operation")),
    ("intents", ("intent_id", "operation", "base_version", "created_at", "body")),
)
_ROWS_PER_READ = 2_000


def copy_log(
    source: EventLog,
    target: EventLog,
    *,
    meta: dict[str, str],
    embeddings: VectorStore | None = None,
    drop_meta: Sequence[str] = (),
) -> int:
    """Copy ``source`` into the empty log ``target`` in one transaction: its rows and meta
    (``meta`` keys replaced, e.g. where the copy's index is; ``drop_meta`` keys of the
    target removed). With ``embeddings``, the cache table in the source's own database is
    copied into that store. Returns the number of events copied."""
    copied = top = 0
    with source.snapshot() as src:
        with target.transaction() as dst:
            for table, columns in _TABLES:
                names, marks = ", ".join(columns), ", ".join("?" * len(columns))
                cursor = src.execute(f"SELECT {names} FROM {table} ORDER BY 1")
                while rows := cursor.fetchmany(_ROWS_PER_READ):
                    dst.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", [tuple(r) for r in rows])
                    if table == "events":
                        copied, top = copied + len(rows), max(top, int(rows[-1][0]))
            if top:
                target.advance_head(dst, top)
            for key, value in src.execute("SELECT key, value FROM meta ORDER BY 1").fetchall():
                target.set_meta(str(key), str(value), dst)
            for key in drop_meta:
                target.delete_meta(key, dst)
            for key, value in meta.items():
                target.set_meta(key, value, dst)
        if embeddings is not None:
            copy_vectors(src, embeddings)
    return copied


def copy_vectors(conn: Any, target: VectorStore) -> int:
    """Every row of the embedding cache table that ``conn`` reads (an ``embeddings.db``, or the
    log's own Postgres database) into ``target``, one batch per transaction (a row already
    there is kept: equal keys hold equal vectors). Returns the rows copied."""
    cursor = conn.execute("SELECT model_id, dim, text_sha256, vector FROM embeddings ORDER BY 1, 2")
    copied = 0
    while rows := cursor.fetchmany(_ROWS_PER_READ):
        by_model: dict[tuple[str, int], list[tuple[str, bytes]]] = {}
        for model_id, dim, key, vector in rows:
            by_model.setdefault((str(model_id), int(dim)), []).append((str(key), bytes(vector)))
        for (model_id, dim), found in by_model.items():
            target.store(model_id, dim, found)
        copied += len(rows)
    return copied


def holds_history(log: EventLog) -> bool:
    """Whether ``log`` holds anything of a project: an event, a document, a version, a write in
    flight or the id of the project it belongs to (a restore writes only into a log without)."""
    with log.snapshot() as conn:
        for table in ("events", "documents", "index_versions", "intents"):
            if conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None:
                return True
        return conn.execute("SELECT 1 FROM meta WHERE key = 'project_id'").fetchone() is not None


def copy_cache(source: EventLog, cache_file: Path | None, target: VectorStore) -> int:
    """The embedding cache of a project into ``target``: its file ``cache_file`` (none there:
    nothing to copy), or, when None, the cache table in ``source``'s own database."""
    if cache_file is None:
        with source.snapshot() as conn:
            return copy_vectors(conn, target)
    if not cache_file.exists():
        return 0
    from ragtt._sqlite import connect

    with contextlib.closing(connect(cache_file)) as conn:
        return copy_vectors(conn, target)


def newest_hash(log: EventLog) -> str | None:
    """The hash of ``log``'s newest event (the whole chain's proof), None when it has none."""
    with log.snapshot() as conn:
        row = conn.execute("SELECT hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    return None if row is None else str(row[0])
