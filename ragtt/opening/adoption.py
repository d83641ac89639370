"""Making a project, and taking on one that has no marker yet.

Creation writes ``ragtt.json`` last, so a folder without it holds at most the leftovers of
an interrupted creation (which are cleared and made again), an older ragtt's project
(schema 1: adopted), or something that is not ragtt's (refused). A folder with no marker
and a log in Postgres joins the project that database holds, or makes a new one. A table
whose files the log never recorded (made before ragtt recorded them) has them recorded on
its first open, as adopted: from then on they are proven, but not before.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ragtt.commit import files_event
from ragtt.config import PipelineConfig
from ragtt.errors import ConfigError, ProjectDamagedError
from ragtt.events import probe
from ragtt.events import types as ev
from ragtt.events.base import Event, EventLog
from ragtt.events.store import EventStore
from ragtt.events.time import utc_now
from ragtt.index.embedders import resolve_embedder
from ragtt.index.table import ChunkTable
from ragtt.marker import MARKER, RESTORING_META, Marker, not_a_project, unfinished_restore
from ragtt.opening.location import EVENTS, INDEX, POSTGRES, IndexLocation, open_log

if TYPE_CHECKING:
    from ragtt.index.embedders import Embedder

__all__ = [
    "add_table",
    "adopt_or_create",
    "adopt_or_create_shared",
    "create_table",
    "embedder_for",
    "record_adopted_files",
    "stored_config",
]

# meta: the tables whose every file the log records (set with the first record of them)
_FILES_RECORDED = "files_recorded:{table}"


def embedder_for(log: EventLog, config: PipelineConfig | None, embedder: Embedder | None) -> Embedder:
    config = config or PipelineConfig()
    return resolve_embedder(
        log.get_meta("embedder_id"),
        log.get_meta("embedder_dim"),
        config.embedder_model,
        embedder,
        config.embedder_backend,
    )


def stored_config(path: Path) -> PipelineConfig | None:
    """The config a project last ran with, read without migrating anything."""
    import json

    text = probe.stored_config(path / EVENTS)
    return PipelineConfig.from_dict(json.loads(text)) if text else None


def adopt_or_create(
    path: Path, config: PipelineConfig | None, embedder: Embedder | None, create: bool, index: IndexLocation
) -> Marker:
    events = path / EVENTS
    schema = _schema_version(events)
    if schema == 1:  # a project from before the marker: it has its stores, it gains the marker
        with _creation_lock(path):
            existing = Marker.read(path)  # another process may have adopted it meanwhile: one id
            if existing is not None:
                return existing
            table = (config or stored_config(path) or PipelineConfig()).table_name
            marker = Marker.new(table).with_store("tables", [table])
            if not (path / INDEX).is_dir():
                raise ProjectDamagedError(
                    f"the index {path / INDEX} of the project in {path} is missing; restore it "
                    "from a backup; ragtt never recreates it empty"
                )
            marker.write(path)
            return marker
    if schema is None and (path / INDEX).is_dir() and any((path / INDEX).iterdir()):
        raise ProjectDamagedError(
            f"the event log {events} of the project in {path} is missing (its index "
            f"{path / INDEX} is there); restore it from a backup; ragtt never recreates it"
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
        for name in (EVENTS, f"{EVENTS}-wal", f"{EVENTS}-shm"):
            with contextlib.suppress(FileNotFoundError):
                (path / name).unlink()
        table_name = (config or PipelineConfig()).table_name
        index.clear_leftovers(path, table_name)
        marker = Marker.new(table_name).with_store("tables", [table_name]).with_store("index", index.marker_value())
        log = EventStore(events, table_name=table_name)
        try:
            create_table(path, index, log, table_name, embedder_for(log, config, embedder).dim, marker.project_id)
        finally:
            log.close()
        marker.write(path)
        return marker


def adopt_or_create_shared(
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
        restoring = log.get_meta(RESTORING_META)
        if owner is None and restoring is not None:  # its history is not there yet: never a new project
            raise unfinished_restore(log.location, f"project {restoring}")
        if owner is not None:
            kept = log.get_meta("index") or INDEX
            if kept == INDEX and not (path / INDEX).is_dir():
                raise ConfigError(
                    f"the project in {log.location} keeps its index in the folder of the workspace "
                    f"that created it, not in {path}: open it from that folder, or give the project "
                    "an index on object storage (index_uri) so other folders can join it"
                )
            marker = Marker(
                owner, stores={"events": POSTGRES, "index": kept, "table": table_name, "tables": log.table_names()}
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
                    return adopt_or_create_shared(path, uri, config, embedder, create, index)
                index.clear_leftovers(path, table_name)
                marker = (
                    Marker.new(table_name)
                    .with_store("events", POSTGRES)  # the URI is never written: it may
                    .with_store("tables", [table_name])  # hold a password
                    .with_store("index", index.marker_value())
                )
                create_table(path, index, log, table_name, embedder_for(log, config, embedder).dim, marker.project_id)
        path.mkdir(parents=True, exist_ok=True)
        marker.write(path)
        return marker
    finally:
        log.close()


def add_table(
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
            table = create_table(path, index, log, table_name, dim)
        marker = marker.with_store("tables", [*tables, table_name])
        marker.write(path)
        return table, marker


def create_table(
    path: Path, index: IndexLocation, log: EventLog, table_name: str, dim: int, project_id: str | None = None
) -> ChunkTable:
    table, made = ChunkTable.create(
        index.at(path), table_name, dim, storage_options=index.storage_options, cache=index.cache
    )
    now = utc_now()
    files = table.added_files(0, made)
    with log.transaction() as conn:
        if project_id is not None:  # a new project: the log learns whose it is, and where its index is
            log.set_meta("project_id", project_id, conn)
            log.set_meta("index", index.marker_value(), conn)
        log.set_meta(_FILES_RECORDED.format(table=table_name), "1", conn)
        log.versions.record(conn, made, "create", now)
        created = Event(
            ev.INDEX_CREATED, {"table": table_name, "dim": dim, "versions": made}, index_version=made[-1], ts=now
        )
        log.append_many([created, files_event(table_name, made, files, now)], conn=conn)
    return table


def record_adopted_files(log: EventLog, table: ChunkTable) -> int:
    """Record every file of ``table``'s retained versions when the log has never recorded
    them (a project made before ragtt did); the caller holds the write lock. Returns how
    many were recorded (0: the log had them)."""
    key = _FILES_RECORDED.format(table=table.table_name)
    if log.get_meta(key) is not None:
        return 0
    tracked = table.tracked_files()
    records = table.records_of(sorted(tracked), tracked)
    with log.transaction() as conn:
        if log.get_meta(key) is None:  # another process may have recorded them meanwhile
            log.set_meta(key, "adopted", conn)
            log.append_many([files_event(table.table_name, [], records, utc_now(), adopted=True)], conn=conn)
    return len(records)


def _schema_version(db: Path) -> int | None:
    """``events.db``'s schema version; None when there is no file; 0 for an empty one."""
    from ragtt._sqlite import driver

    try:
        return probe.schema_version(db)
    except driver().DatabaseError as exc:
        raise ProjectDamagedError(
            f"{db} is not a ragtt event log ({exc}) and the folder has no {MARKER}; "
            "move it aside or pick another folder"
        ) from None


def _refuse_a_log_with_history(db: Path) -> None:
    count = probe.history_events(db)
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
