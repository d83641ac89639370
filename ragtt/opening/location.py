"""Where a project's stores are: the one place that picks them from their URIs.

The event log (``open_log``: none, the SQLite ``events.db`` in the folder; ``postgresql://...``,
a Postgres database), the chunk table (``IndexLocation``: none, ``lancedb/`` in the folder;
``s3://``, ``gs://``, ``az://``, LanceDB on object storage) and the embedding cache
(``open_cache``: beside the log). The marker records which (never a Postgres URI: it may hold
a password; an object-store URI holds none, credentials travel in ``storage_options`` and the
environment).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from ragtt.errors import ConfigError, ProjectDamagedError
from ragtt.events.base import EventLog
from ragtt.events.cache import EmbeddingCache
from ragtt.events.store import EventStore
from ragtt.index.cache import IndexCache
from ragtt.index.table import ChunkTable, is_remote
from ragtt.marker import Marker

__all__ = [
    "EVENTS",
    "EVENTS_URI_ENV",
    "INDEX",
    "INDEX_URI_ENV",
    "POSTGRES",
    "IndexLocation",
    "events_backend",
    "open_cache",
    "open_log",
]

EVENTS = "events.db"
INDEX = "lancedb"
POSTGRES = "postgresql"  # the marker's name for a log in Postgres
EVENTS_URI_ENV = "RAGTT_EVENTS_URI"
INDEX_URI_ENV = "RAGTT_INDEX_URI"
_PG_SCHEMES = ("postgresql://", "postgres://")


@dataclass(frozen=True)
class IndexLocation:
    """Where a project's chunk table lives: ``uri`` None is ``lancedb/`` in the folder; ``cache``
    mirrors the versions it reads when it is on object storage (ragtt/index/cache.py)."""

    uri: str | None = None
    storage_options: dict[str, str] | None = None
    cache: IndexCache | None = None

    @classmethod
    def choose(
        cls,
        index_uri: str | None,
        storage_options: dict[str, str] | None,
        index_cache: str | Path | bool | None = None,
        index_cache_bytes: int | None = None,
    ) -> IndexLocation:
        """The arguments, else ``$RAGTT_INDEX_URI`` (and ``$RAGTT_INDEX_CACHE``), checked."""
        uri = index_uri if index_uri is not None else os.environ.get(INDEX_URI_ENV) or None
        if uri is not None and not is_remote(uri):
            raise ConfigError(
                f"index_uri must be an object-store URI (s3://bucket/prefix, gs://..., az://...), or "
                f"None for the project's own lancedb/ folder; got {uri!r}"
            )
        if storage_options is not None and not isinstance(storage_options, dict):
            raise ConfigError(f"storage_options must be a dict of str -> str; got {type(storage_options).__name__}")
        return cls(
            uri.rstrip("/") if uri else None,
            {str(k): str(v) for k, v in (storage_options or {}).items()},
            IndexCache.choose(index_cache, index_cache_bytes),
        )

    def at(self, path: Path) -> str | Path:
        return self.uri or path / INDEX

    def marker_value(self) -> str:
        return self.uri or INDEX

    def settled(self, path: Path, marker: Marker) -> IndexLocation:
        """This location checked against the one the project was made with (an index URI in
        the marker is used when none is given)."""
        kept = marker.stores.get("index", INDEX)
        if self.uri is None and kept != INDEX:
            return replace(self, uri=kept)
        if (self.uri or INDEX) != kept:
            raise ConfigError(
                f"the project in {path} keeps its index in {kept}, not {self.uri or INDEX}: open it "
                f"without index_uri (and without ${INDEX_URI_ENV}), or with index_uri={kept!r}"
            )
        return self

    def open(self, path: Path, table_name: str) -> ChunkTable:
        return ChunkTable(self.at(path), table_name, storage_options=self.storage_options, cache=self.cache)

    def clear_leftovers(self, path: Path, table_name: str) -> None:
        """Before a creation: a local index without a marker is what a dead creation left;
        a table at an object-store URI may be anyone's, so it is refused, never deleted."""
        if self.uri is None:
            shutil.rmtree(path / INDEX, ignore_errors=True)
        elif ChunkTable.exists(self.uri, table_name, storage_options=self.storage_options):
            raise ProjectDamagedError(
                f"{self.uri} already holds a table {table_name!r} that no project here accounts for (another "
                "project's index, or what a creation that died left): pick an empty prefix, or delete it yourself"
            )

    def clear_leftover_table(self, path: Path, table_name: str) -> None:
        """Before a further table of an existing project: a local table the log never recorded
        is what a dead creation left; at an object-store URI it is refused, as above."""
        if not ChunkTable.exists(self.at(path), table_name, storage_options=self.storage_options):
            return
        if self.uri is not None:
            self.clear_leftovers(path, table_name)
        ChunkTable.drop(self.at(path), table_name)


def events_backend(events_uri: str | None) -> str | None:
    """The URI of the log to use (the argument, else ``$RAGTT_EVENTS_URI``), checked; None
    for the SQLite file in the project folder."""
    uri = events_uri if events_uri is not None else os.environ.get(EVENTS_URI_ENV) or None
    if uri is not None and not uri.startswith(_PG_SCHEMES):
        raise ConfigError(
            f"events_uri must be a postgresql://user@host/database URI (or None for the project's "
            f"own events.db); got {uri.split('@')[-1]!r}"
        )
    return uri


def open_log(path: Path, events_uri: str | None, table_name: str, *, create: bool) -> EventLog:
    """The event log of the project in ``path``: SQLite in the folder, or Postgres at ``events_uri``."""
    if events_uri is None:
        return EventStore(path / EVENTS, table_name=table_name, create=create)
    from ragtt.events.postgres import PostgresEventStore

    return PostgresEventStore(events_uri, table_name=table_name, create=create)


def open_cache(path: Path, events_uri: str | None, embedding_cache: Path | None) -> EmbeddingCache:
    """The embedding cache: the file ``embedding_cache`` names if given; else beside the log,
    the project's Postgres database (shared by every machine) or ``embeddings.db`` in the folder."""
    if embedding_cache is None and events_uri is not None:
        from ragtt.events.pg_cache import PostgresVectors

        return EmbeddingCache(PostgresVectors(events_uri))
    return EmbeddingCache(embedding_cache or path / "embeddings.db")
