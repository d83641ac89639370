"""Opening a project's stores: the marker says which it has; each must be there and whole.

``open_stores`` reads the marker (or has a project adopted or created: ``adoption.py``),
opens the event log, the chunk table and the embedding cache where ``location.py`` says they
are, checks the SQLite files (``checks.py``), settles a write a dead process left, and has
the files of a table from before ragtt recorded them recorded. The log records the project
id, so a folder and a database of two different projects are never mixed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt._sqlite import driver
from ragtt.commit import recover
from ragtt.config import PipelineConfig
from ragtt.errors import ConfigError, ProjectDamagedError
from ragtt.events.base import EventLog
from ragtt.events.cache import EmbeddingCache
from ragtt.index.table import ChunkTable
from ragtt.marker import MARKER, RESTORING, Marker, unfinished_restore
from ragtt.opening import checks
from ragtt.opening.adoption import (
    add_table,
    adopt_or_create,
    adopt_or_create_shared,
    embedder_for,
    record_adopted_files,
    stored_config,
)
from ragtt.opening.location import EVENTS, EVENTS_URI_ENV, POSTGRES, IndexLocation, events_backend, open_cache, open_log

if TYPE_CHECKING:
    from ragtt.context import Context
    from ragtt.index.embedders import Embedder

__all__ = ["ASSERTIONS", "Stores", "open_assertions", "open_stores"]

ASSERTIONS = "assertions.db"


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
    if marker is None and (path / RESTORING).exists():
        raise unfinished_restore(path, _restored_from(path / RESTORING))
    if marker is None:
        marker = (
            adopt_or_create(path, config, embedder, create, index)
            if uri is None
            else adopt_or_create_shared(path, uri, config, embedder, create, index)
        )
    _check_backend(path, marker, uri)
    index = index.settled(path, marker)
    # The table's name is in the config, which lives in the log: read it without migrating
    # (SQLite) or once connected (Postgres).
    log = open_log(path, uri, (config or stored_config(path) or PipelineConfig()).table_name, create=False)
    cache: EmbeddingCache | None = None
    try:
        if uri is None:
            checks.check_event_log(path / EVENTS)
        if uri is not None and config is None and (stored := log.get_meta("config")):
            log.use_table(PipelineConfig.from_dict(json.loads(stored)).table_name)
        table_name = log.versions.table_name
        owner = log.get_meta("project_id")
        if owner is not None and owner != marker.project_id:
            raise ProjectDamagedError(
                f"the event log {log.location} belongs to project {owner}, but {path / MARKER} is project "
                f"{marker.project_id}: the URI names another project's database"
            )
        if marker.stores.get("assertions"):
            if not (path / ASSERTIONS).exists():
                raise ProjectDamagedError(
                    f"the assertion store {path / ASSERTIONS} is missing; restore it from a "
                    "backup; ragtt never recreates it empty"
                )
            checks.check_assertions(path / ASSERTIONS)
        if table_name in marker.stores.get("tables", []):
            table = index.open(path, table_name)
        elif create:
            table, marker = add_table(path, index, log, marker, table_name, embedder_for(log, config, embedder).dim)
        else:
            raise ProjectDamagedError(
                f"the project {path} has no table {table_name!r} (it has "
                f"{', '.join(marker.stores.get('tables', [])) or 'none'})"
            )
        with log.try_write_lock() as locked:
            if locked:  # else another process is writing; it recovers before it writes
                recover(log, table)
                record_adopted_files(log, table)
        stored = log.get_meta("config")
        if config is None:
            config = PipelineConfig.from_dict(json.loads(stored)) if stored else PipelineConfig()
        embedder = embedder_for(log, config, embedder)
        table.check_dim(embedder.dim, log.versions.latest())
        with log.transaction() as conn:
            log.set_meta("config", json.dumps(config.to_dict()), conn)
            if log.get_meta("embedder_id") is None:  # only a re-embed switches it, under the write lock
                log.set_meta("embedder_id", embedder.model_id, conn)
                log.set_meta("embedder_dim", str(embedder.dim), conn)
        if embedding_cache is not None or uri is None:
            checks.set_aside_damaged_cache(embedding_cache or path / "embeddings.db")
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

    path = ctx.path / ASSERTIONS
    try:
        store = AssertionStore.open(path, embedder=ctx.embedder)
    except driver().DatabaseError as exc:
        raise ProjectDamagedError(f"the assertion store {path} is damaged ({exc}); restore it from a backup") from None
    if not marker.stores.get("assertions"):
        marker = marker.with_store("assertions", True)
        marker.write(ctx.path)
    return store, marker


def _check_backend(path: Path, marker: Marker, uri: str | None) -> None:
    kind = marker.stores.get("events", EVENTS)
    if kind == POSTGRES and uri is None:
        raise ConfigError(
            f"the project in {path} keeps its event log in Postgres: open it with "
            f"events_uri='postgresql://...' (or set ${EVENTS_URI_ENV}; CLI --events-uri)"
        )
    if kind != POSTGRES and uri is not None:
        raise ConfigError(
            f"the project in {path} keeps its event log in {path / EVENTS}, not in Postgres: open it "
            f"without events_uri (and without ${EVENTS_URI_ENV})"
        )


def _restored_from(record: Path) -> str:
    """The project an unfinished restore was restoring, as its in-progress record names it."""
    try:
        return f"project {json.loads(record.read_text(encoding='utf-8'))['project_id']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a backup"
