"""Opening a project folder: create it, adopt one from before the marker, or open it,
refusing any store that is missing or damaged.

Creation writes ``ragtt.json`` last, so a folder without it holds at most the leftovers of
an interrupted creation (which are cleared and made again), an older ragtt's project
(schema 1: adopted), or something that is not ragtt's (refused).

This is also the one place that picks the stores from their URIs: the event log
(``open_log``: none, the SQLite ``events.db`` in the folder; ``postgresql://...``, a Postgres
database) and the chunk table (``IndexLocation``: none, ``lancedb/`` in the folder;
``s3://``, ``gs://``, ``az://``, LanceDB on object storage). The marker records which (never
a Postgres URI: it may hold a password; an object-store URI holds none, credentials travel
in ``storage_options`` and the environment), and the log records the project id, so a
folder and a database of two different projects are never mixed.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt._sqlite import driver
from ragtt.commit import recover
from ragtt.config import PipelineConfig
from ragtt.errors import ConfigError, ProjectDamagedError
from ragtt.events import types as ev
from ragtt.events.base import Event, EventLog
from ragtt.events.cache import EmbeddingCache
from ragtt.events.store import EventStore
from ragtt.events.time import utc_now
from ragtt.index.cache import IndexCache
from ragtt.index.embedders import resolve_embedder
from ragtt.index.table import ChunkTable, is_remote
from ragtt.marker import MARKER, Marker, not_a_project

if TYPE_CHECKING:
    from ragtt.context import Context
    from ragtt.index.embedders import Embedder

__all__ = [
    "EVENTS_URI_ENV",
    "INDEX_URI_ENV",
    "IndexLocation",
    "Stores",
    "events_backend",
    "open_assertions",
    "open_cache",
    "open_log",
    "open_stores",
]

_EVENTS = "events.db"
_INDEX = "lancedb"
_POSTGRES = "postgresql"  # the marker's name for a log in Postgres
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
        return self.uri or path / _INDEX

    def marker_value(self) -> str:
        return self.uri or _INDEX

    def settled(self, path: Path, marker: Marker) -> IndexLocation:
        """This location checked against the one the project was made with (an index URI in
        the marker is used when none is given)."""
        kept = marker.stores.get("index", _INDEX)
        if self.uri is None and kept != _INDEX:
            return replace(self, uri=kept)
        if (self.uri or _INDEX) != kept:
            raise ConfigError(
                f"the project in {path} keeps its index in {kept}, not {self.uri or _INDEX}: open it "
                f"without index_uri (and without ${INDEX_URI_ENV}), or with index_uri={kept!r}"
            )
        return self

    def open(self, path: Path, table_name: str) -> ChunkTable:
        return ChunkTable(self.at(path), table_name, storage_options=self.storage_options, cache=self.cache)

    def clear_leftovers(self, path: Path, table_name: str) -> None:
        """Before a creation: a local index without a marker is what a dead creation left;
        a table at an object-store URI may be anyone's, so it is refused, never deleted."""
        if self.uri is None:
            shutil.rmtree(path / _INDEX, ignore_errors=True)
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


@dataclass
class Stores:
    path: Path
    marker: Marker
    config: PipelineConfig
    embedder: Embedder
    log: EventLog
    table: ChunkTable
    cache: EmbeddingCache

    def close(self) -> None:
        self.cache.close()
        self.log.close()


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
        return EventStore(path / _EVENTS, table_name=table_name, create=create)
    from ragtt.events.postgres import PostgresEventStore

    return PostgresEventStore(events_uri, table_name=table_name, create=create)


def open_cache(path: Path, events_uri: str | None, embedding_cache: Path | None) -> EmbeddingCache:
    """The embedding cache: the file ``embedding_cache`` names if given; else beside the log,
    the project's Postgres database (shared by every machine) or ``embeddings.db`` in the folder."""
    if embedding_cache is None and events_uri is not None:
        from ragtt.events.pg_cache import PostgresVectors

        return EmbeddingCache(PostgresVectors(events_uri))
    return EmbeddingCache(embedding_cache or path / "embeddings.db")


def open_stores(
    path: Path,
    config: PipelineConfig | None,
    embedder: Embedder | None,
    *,
    create: bool,
    embedding_cache: Path | None,
    events_uri: str | None = None,
    index: IndexLocation | None = None,
) -> Stores:
    uri = events_backend(events_uri)
    index = index or IndexLocation.choose(None, None)
    marker = Marker.read(path)
    if marker is None:
        marker = (
            _adopt_or_create(path, config, embedder, create, index)
            if uri is None
            else _adopt_or_create_shared(path, uri, config, embedder, create, index)
        )
    _check_backend(path, marker, uri)
    index = index.settled(path, marker)
    # The table's name is in the config, which lives in the log: read it without migrating
    # (SQLite) or once connected (Postgres).
    log = open_log(path, uri, (config or _stored_config(path) or PipelineConfig()).table_name, create=False)
    cache: EmbeddingCache | None = None
    try:
        if uri is not None and config is None and (stored_config := log.get_meta("config")):
            log.use_table(PipelineConfig.from_dict(json.loads(stored_config)).table_name)
        table_name = log.versions.table_name
        owner = log.get_meta("project_id")
        if owner is not None and owner != marker.project_id:
            raise ProjectDamagedError(
                f"the event log {log.location} belongs to project {owner}, but {path / MARKER} is project "
                f"{marker.project_id}: the URI names another project's database"
            )
        if marker.stores.get("assertions") and not (path / "assertions.db").exists():
            raise ProjectDamagedError(
                f"the assertion store {path / 'assertions.db'} is missing; restore it from a "
                "backup; ragtt never recreates it empty"
            )
        if table_name in marker.stores.get("tables", []):
            table = index.open(path, table_name)
        elif create:
            table, marker = _add_table(path, index, log, marker, table_name, _embedder_for(log, config, embedder).dim)
        else:
            raise ProjectDamagedError(
                f"the project {path} has no table {table_name!r} (it has "
                f"{', '.join(marker.stores.get('tables', [])) or 'none'})"
            )
        with log.try_write_lock() as locked:
            if locked:  # else another process is writing; it recovers before it writes
                recover(log, table)
        stored = log.get_meta("config")
        if config is None:
            config = PipelineConfig.from_dict(json.loads(stored)) if stored else PipelineConfig()
        embedder = _embedder_for(log, config, embedder)
        table.check_dim(embedder.dim, log.versions.latest())
        with log.transaction() as conn:
            log.set_meta("config", json.dumps(config.to_dict()), conn)
            if log.get_meta("embedder_id") is None:  # only a re-embed switches it, under the write lock
                log.set_meta("embedder_id", embedder.model_id, conn)
                log.set_meta("embedder_dim", str(embedder.dim), conn)
        cache = open_cache(path, uri, embedding_cache)
        return Stores(path, marker, config, embedder, log, table, cache)
    except BaseException:
        if cache is not None:
            cache.close()
        log.close()
        raise


def open_assertions(ctx: Context, marker: Marker) -> tuple[Any, Marker]:
    """The assertion store, created on first use; the marker learns of it once it exists."""
    from ragtt.temporal import AssertionStore

    path = ctx.path / "assertions.db"
    try:
        store = AssertionStore.open(path, embedder=ctx.embedder)
    except driver().DatabaseError as exc:
        raise ProjectDamagedError(f"the assertion store {path} is damaged ({exc}); restore it from a backup") from None
    if not marker.stores.get("assertions"):
        marker = marker.with_store("assertions", True)
        marker.write(ctx.path)
    return store, marker


def _check_backend(path: Path, marker: Marker, uri: str | None) -> None:
    kind = marker.stores.get("events", _EVENTS)
    if kind == _POSTGRES and uri is None:
        raise ConfigError(
            f"the project in {path} keeps its event log in Postgres: open it with "
            f"events_uri='postgresql://...' (or set ${EVENTS_URI_ENV}; CLI --events-uri)"
        )
    if kind != _POSTGRES and uri is not None:
        raise ConfigError(
            f"the project in {path} keeps its event log in {path / _EVENTS}, not in Postgres: open it "
            f"without events_uri (and without ${EVENTS_URI_ENV})"
        )


def _embedder_for(log: EventLog, config: PipelineConfig | None, embedder: Embedder | None) -> Embedder:
    config = config or PipelineConfig()
    return resolve_embedder(
        log.get_meta("embedder_id"),
        log.get_meta("embedder_dim"),
        config.embedder_model,
        embedder,
        config.embedder_backend,
    )


def _stored_config(path: Path) -> PipelineConfig | None:
    """The config a project last ran with, read without migrating anything."""
    db = path / _EVENTS
    if not db.exists():
        return None
    conn = driver().connect(f"file:{db}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()
    except driver().DatabaseError:
        return None
    finally:
        conn.close()
    return PipelineConfig.from_dict(json.loads(row[0])) if row else None


def _adopt_or_create(
    path: Path, config: PipelineConfig | None, embedder: Embedder | None, create: bool, index: IndexLocation
) -> Marker:
    events = path / _EVENTS
    schema = _schema_version(events)
    if schema == 1:  # a project from before the marker: it has its stores, it gains the marker
        with _creation_lock(path):
            existing = Marker.read(path)  # another process may have adopted it meanwhile: one id
            if existing is not None:
                return existing
            table = (config or _stored_config(path) or PipelineConfig()).table_name
            marker = Marker.new(table).with_store("tables", [table])
            if not (path / _INDEX).is_dir():
                raise ProjectDamagedError(
                    f"the index {path / _INDEX} of the project in {path} is missing; restore it "
                    "from a backup; ragtt never recreates it empty"
                )
            marker.write(path)
            return marker
    if schema is None and (path / _INDEX).is_dir() and any((path / _INDEX).iterdir()):
        raise ProjectDamagedError(
            f"the event log {events} of the project in {path} is missing (its index "
            f"{path / _INDEX} is there); restore it from a backup; ragtt never recreates it"
        )
    if not create:
        raise not_a_project(path)
    path.mkdir(parents=True, exist_ok=True)
    with _creation_lock(path):
        existing = Marker.read(path)  # another process may have created it meanwhile
        if existing is not None:
            return existing
        # No marker: anything of ours here is the leftover of a creation that died, unless the
        # log holds more than a creation writes (then the marker was lost: never wipe history).
        _refuse_a_log_with_history(events)
        for name in (_EVENTS, f"{_EVENTS}-wal", f"{_EVENTS}-shm"):
            with contextlib.suppress(FileNotFoundError):
                (path / name).unlink()
        table_name = (config or PipelineConfig()).table_name
        index.clear_leftovers(path, table_name)
        marker = Marker.new(table_name).with_store("tables", [table_name]).with_store("index", index.marker_value())
        log = EventStore(events, table_name=table_name)
        try:
            _create_table(path, index, log, table_name, _embedder_for(log, config, embedder).dim, marker.project_id)
        finally:
            log.close()
        marker.write(path)
        return marker


def _adopt_or_create_shared(
    path: Path, uri: str, config: PipelineConfig | None, embedder: Embedder | None, create: bool, index: IndexLocation
) -> Marker:
    """A folder with no marker and a log in Postgres. A database that holds a project makes
    this folder one more workspace of it (the marker gains the project's id); an empty one
    is a new project when ``create``. The project id is logged in the transaction that
    records the table's creation, so a database without one holds no history."""
    table_name = (config or PipelineConfig()).table_name
    try:
        log = open_log(path, uri, table_name, create=create)
    except ProjectDamagedError:
        if create:
            raise
        raise not_a_project(path) from None  # an empty database, left as it was found
    try:
        owner = log.get_meta("project_id")
        if owner is not None:
            kept = log.get_meta("index") or _INDEX
            if kept == _INDEX and not (path / _INDEX).is_dir():
                raise ConfigError(
                    f"the project in {log.location} keeps its index in the folder of the workspace "
                    f"that created it, not in {path}: open it from that folder, or give the project "
                    "an index on object storage (index_uri) so other folders can join it"
                )
            marker = Marker(
                owner, stores={"events": _POSTGRES, "index": kept, "table": table_name, "tables": log.table_names()}
            )
        elif not create:
            raise not_a_project(path)
        else:
            path.mkdir(parents=True, exist_ok=True)
            with _creation_lock(path), log.write_lock():
                existing = Marker.read(path)
                if existing is not None:
                    return existing
                owner = log.get_meta("project_id")  # another machine may have created it meanwhile
                if owner is not None:
                    log.close()
                    return _adopt_or_create_shared(path, uri, config, embedder, create, index)
                index.clear_leftovers(path, table_name)
                marker = (
                    Marker.new(table_name)
                    .with_store("events", _POSTGRES)  # the URI is never written: it may
                    .with_store("tables", [table_name])  # hold a password
                    .with_store("index", index.marker_value())
                )
                _create_table(path, index, log, table_name, _embedder_for(log, config, embedder).dim, marker.project_id)
        path.mkdir(parents=True, exist_ok=True)
        marker.write(path)
        return marker
    finally:
        log.close()


def _add_table(
    path: Path, index: IndexLocation, log: EventLog, marker: Marker, table_name: str, dim: int
) -> tuple[ChunkTable, Marker]:
    """A further table of an existing project, made under the write lock so two processes
    never both create it. The log is the record: a table it holds versions of (the process
    that made it died before the marker learnt of it) is adopted; one it has never heard of
    is what a creation that died before its log transaction left, and is made again."""
    with log.write_lock():
        marker = Marker.read(path) or marker
        tables = marker.stores.get("tables", [])
        if table_name in tables:
            return index.open(path, table_name), marker
        if table_name in log.table_names():
            table = index.open(path, table_name)
        else:
            index.clear_leftover_table(path, table_name)
            table = _create_table(path, index, log, table_name, dim)
        marker = marker.with_store("tables", [*tables, table_name])
        marker.write(path)
        return table, marker


def _create_table(
    path: Path, index: IndexLocation, log: EventLog, table_name: str, dim: int, project_id: str | None = None
) -> ChunkTable:
    table, made = ChunkTable.create(
        index.at(path), table_name, dim, storage_options=index.storage_options, cache=index.cache
    )
    now = utc_now()
    with log.transaction() as conn:
        if project_id is not None:  # a new project: the log learns whose it is, and where its index is
            log.set_meta("project_id", project_id, conn)
            log.set_meta("index", index.marker_value(), conn)
        log.versions.record(conn, made, "create", now)
        log.append_many(
            [
                Event(
                    ev.INDEX_CREATED,
                    {"table": table_name, "dim": dim, "versions": made},
                    index_version=made[-1],
                    ts=now,
                )
            ],
            conn=conn,
        )
    return table


def _schema_version(db: Path) -> int | None:
    """``events.db``'s schema version; None when there is no file; 0 for an empty one."""
    if not db.exists():
        return None
    try:
        conn = driver().connect(f"file:{db}?mode=ro", uri=True)
        try:
            return int(conn.execute("PRAGMA user_version").fetchone()[0])
        finally:
            conn.close()
    except driver().DatabaseError as exc:
        raise ProjectDamagedError(
            f"{db} is not a ragtt event log ({exc}) and the folder has no {MARKER}; "
            "move it aside or pick another folder"
        ) from None


def _refuse_a_log_with_history(db: Path) -> None:
    if not db.exists():
        return
    conn = driver().connect(f"file:{db}?mode=ro", uri=True)
    try:
        count = int(conn.execute("SELECT COUNT(*) FROM events WHERE type != ?", (ev.INDEX_CREATED,)).fetchone()[0])
    except driver().DatabaseError:
        count = 0  # no events table yet: a creation that died before it migrated
    finally:
        conn.close()
    if count:
        raise ProjectDamagedError(
            f"{db.parent / MARKER} is missing but {db} holds {count} events: this is a project that lost its "
            f"marker, not a leftover. Restore {MARKER} from a backup; ragtt will not clear it"
        )


@contextlib.contextmanager
def _creation_lock(path: Path) -> Iterator[None]:
    fd = os.open(path / f".{MARKER}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
