"""Copying an event log, as of one moment, into a new SQLite ``events.db``.

How a project whose log is in Postgres is backed up (``ragtt/backup.py``): every row of the
history tables is read in one read-only snapshot (``EventLog.snapshot``) and written, as it
was stored, into a new file with the same schema and the same guards. The events keep their
numbers, their stored text and their hashes, so the copy's hash chain is the original's and
``verify()`` walks it alike. With ``embeddings`` the embedding cache kept in the same database
is copied too, so replays in the copy search with the bit-identical query vectors.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ragtt.events.base import EVENT_COLUMNS

if TYPE_CHECKING:
    from ragtt.events.base import EventLog

__all__ = ["copy_log"]

# Every table of the log's history and work state, with its columns (the same on either backend).
_TABLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("events", (*EVENT_COLUMNS, "hash")),
    ("documents", ("doc_key", "doc_id", "source", "content_hash", "text", "routes", "created_at", "parts")),
    ("document_text_parts", ("doc_key", "part", "text")),
    ("index_versions", ("table_name", "version", "committed_at", "operation")),
    ("intents", ("intent_id", "operation", "base_version", "created_at", "body")),
    ("meta", ("key", "value")),
)
_ROWS_PER_READ = 2_000


def copy_log(
    source: EventLog, target: Path, table_name: str, *, meta: dict[str, str], embeddings: Path | None = None
) -> int:
    """Copy ``source`` into the new SQLite file ``target`` (``meta`` keys replaced, e.g. where
    the copy's index is); with ``embeddings``, the cache table beside the log into that
    SQLite cache file. Returns the number of events copied."""
    from ragtt.events.cache import SQLiteVectors
    from ragtt.events.store import EventStore

    copy = EventStore(target, table_name=table_name, create=True)
    copied = 0
    try:
        with source.snapshot() as src:
            with copy.transaction() as dst:
                for table, columns in _TABLES:
                    names, marks = ", ".join(columns), ", ".join("?" * len(columns))
                    insert = "INSERT OR REPLACE" if table == "meta" else "INSERT"  # meta: the new file's own keys
                    cursor = src.execute(f"SELECT {names} FROM {table} ORDER BY 1")
                    while rows := cursor.fetchmany(_ROWS_PER_READ):
                        dst.executemany(f"{insert} INTO {table} ({names}) VALUES ({marks})", [tuple(r) for r in rows])
                        copied += len(rows) if table == "events" else 0
                for key, value in meta.items():
                    copy.set_meta(key, value, dst)
            if embeddings is not None:
                cache = SQLiteVectors(embeddings)
                try:
                    cursor = src.execute("SELECT model_id, dim, text_sha256, vector FROM embeddings ORDER BY 1, 2")
                    while rows := cursor.fetchmany(_ROWS_PER_READ):
                        by_model: dict[tuple[str, int], list[tuple[str, bytes]]] = {}
                        for model_id, dim, key, vector in rows:
                            by_model.setdefault((str(model_id), int(dim)), []).append((str(key), bytes(vector)))
                        for (model_id, dim), found in by_model.items():
                            cache.store(model_id, dim, found)
                finally:
                    cache.close()
    finally:
        copy.close()
    return copied
