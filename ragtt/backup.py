"""``proj.backup(dest)``: a consistent copy of a project while writers may be running.

The SQLite stores are copied with SQLite's online backup API (each the database as of one
commit). The event log is copied first; it decides what the copy holds: the versions it
records, no newer. Each table's files are then copied for those versions only (their
manifests, the data, deletion and index files they read, and the tags its snapshot events
name), each hashed as it is copied and checked against the size and SHA-256 the log
recorded when it was written, so a damaged source file is never carried into a backup. A
write that was in flight when the log was copied never reached the copy's table, so its
intent is dropped from the copy. The copy is built beside ``dest`` and renamed into place
when whole: ``dest`` is a complete project or absent. ``ragtt verify --project DEST --deep``
proves it; restoring is putting the folder back, or ``ragtt restore`` into a new database
and bucket (``ragtt/restore.py``).

A project whose log is in Postgres, or whose index is on object storage, is backed up into
the same kind of folder: a local ``events.db`` copied from one snapshot of the database
(``ragtt/events/export.py``, hashes and all), the index files downloaded into ``lancedb/``,
each checked against its record as it is copied. The backup is a plain local project: a
copy on the same server or bucket would share its failure, and proving or restoring it
needs no credentials.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt._html import STYLE, esc
from ragtt._sqlite import copy_database
from ragtt.errors import ConfigError, ProjectDamagedError, StoreError
from ragtt.index.files import TableFiles
from ragtt.results import Result

if TYPE_CHECKING:
    from ragtt.context import Context
    from ragtt.events.base import EventLog
    from ragtt.index.files import FileRecord
    from ragtt.index.table import ChunkTable
    from ragtt.marker import Marker

__all__ = ["BackupReport", "backup", "copy_table", "fsync_folder", "fsync_tree"]

_STORES = ("events.db", "assertions.db", "embeddings.db")
_READ_TYPES = frozenset({"manifest", "data file", "deletion file", "index file", "transaction file"})


@dataclass(frozen=True)
class BackupReport(Result):
    dest: str
    index_version: int  # the newest version the copy holds
    files_copied: int  # index files, each checked against its recorded hash
    bytes_copied: int
    databases: list[str] = field(default_factory=list)
    writes_dropped: int = 0  # writes in flight when the log was copied (not in the copy)

    def to_text(self) -> str:
        dropped = f"; {self.writes_dropped} write(s) in flight left out" if self.writes_dropped else ""
        return (
            f"backup: {self.dest} at v{self.index_version}: {', '.join(self.databases)} and "
            f"{self.files_copied} index files ({self.bytes_copied / 2**20:.1f} MiB, each checked against its "
            f"recorded hash){dropped}; prove it with `ragtt verify --deep --project {self.dest}`"
        )

    def __repr__(self) -> str:
        return f"BackupReport({self.to_text()})"

    def _repr_html_(self) -> str:
        return f"{STYLE}<div class='ragtt-r'><b>BACKUP</b> {esc(self.to_text())}</div>"


def backup(ctx: Context, marker: Marker, dest: str | Path) -> BackupReport:
    """Copy the project of ``ctx`` (its marker ``marker``) to the new folder ``dest``."""
    from ragtt.events.store import EventStore

    target = Path(dest).expanduser().absolute()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ConfigError(f"the backup folder {target} exists and is not empty: pick a new folder")
    if target == ctx.path.absolute() or ctx.path.absolute() in target.parents:
        raise ConfigError(f"the backup folder {target} is inside the project {ctx.path}: pick a folder outside it")
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        copied = _copy_log(ctx, partial)  # first: it decides which versions the copy holds
        copied += [name for name in _STORES[1:] if name not in copied and _copy_store(ctx.path / name, partial / name)]
        files = size = dropped = 0
        latest = 0
        for table_name in marker.stores.get("tables", [ctx.table.table_name]):
            log = EventStore(partial / "events.db", table_name=table_name, create=False)
            try:
                dropped += _drop_writes_in_flight(log, table_name)
                table = ctx.table if table_name == ctx.table.table_name else ctx.table.sibling(table_name)
                folder = partial / "lancedb" / f"{table_name}.lance"
                n, b, version = copy_table(log, table, TableFiles(str(folder)))
                (folder / "_refs" / "tags").mkdir(parents=True, exist_ok=True)
            finally:
                log.close()
            files, size = files + n, size + b
            latest = version if table_name == ctx.table.table_name else latest
        marker.with_store("events", "events.db").with_store("index", "lancedb").write(partial)  # all local
        fsync_tree(partial)
        if target.exists():
            target.rmdir()
        os.replace(partial, target)
        fsync_folder(target.parent)  # the rename itself survives a power cut
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return BackupReport(str(target), latest, files, size, copied, dropped)


def _copy_store(source: Path, target: Path) -> bool:
    if not source.exists():
        return False
    copy_database(source, target)
    return True


def _copy_log(ctx: Context, partial: Path) -> list[str]:
    """The event log into ``partial/events.db``: SQLite's online backup of a local log, or one
    snapshot of a Postgres log (with the embedding cache kept beside it); the databases copied."""
    from ragtt.events.cache import SQLiteVectors
    from ragtt.events.export import copy_log
    from ragtt.events.store import EventStore

    if ctx.log.file is not None:
        return ["events.db"] if _copy_store(Path(ctx.log.file), partial / "events.db") else []
    own_cache = ctx.cache.path is None  # the cache is in the log's database, not a file of the folder
    log = EventStore(partial / "events.db", table_name=ctx.table.table_name, create=True)
    cache = SQLiteVectors(partial / "embeddings.db") if own_cache else None
    try:
        copy_log(ctx.log, log, meta={"index": "lancedb"}, embeddings=cache)
    finally:
        log.close()
        if cache is not None:
            cache.close()
    return ["events.db", "embeddings.db"] if own_cache else ["events.db"]


def _drop_writes_in_flight(log: EventLog, table_name: str) -> int:
    """Intents of writes that had not logged their versions: their table commit (if any) is
    newer than every version the copy holds, so in the copy they never happened. A prune's
    intent stays: its log part is done, and opening the copy completes its table part."""
    dropped = 0
    for intent in log.intents.pending():
        if intent.body.get("table", table_name) != table_name or intent.body.get("forget") is not None:
            continue
        with log.transaction() as conn:
            log.intents.remove(conn, intent.intent_id)
        dropped += 1
    return dropped


def copy_table(
    log: EventLog, table: ChunkTable, target: TableFiles, *, done: str = "backed up", progress: Any = None
) -> tuple[int, int, int]:
    """The files of ``table``'s versions that ``log`` records, written to ``target`` (a folder or
    an object store), each checked against its recorded hash; (files, bytes, newest version).
    ``done`` says, in a refusal, what did not happen to a damaged file; ``progress`` (a tqdm
    bar) is advanced by the bytes copied."""
    from ragtt.index.snapshots import snapshot_events_in
    from ragtt.verify import recorded_files

    newest = log.versions.latest() or 0
    logged = {v for v, _, _ in log.versions.rows()}
    recorded = recorded_files(log, table.table_name)
    source = table.files()  # the folder or the bucket
    rows = table.tracked_rows()
    wanted = sorted({(kind, path) for version, kind, path in rows if version in logged and kind in _READ_TYPES})
    files = size = 0
    for kind, name in wanted:
        expected = recorded.get(name)
        if kind in ("data file", "deletion file", "index file") and expected is None:
            raise ProjectDamagedError(
                f"the index file {source.where}/{name} is not recorded in the event log (written outside ragtt?): "
                f"not {done}; `ragtt verify` lists the problems"
            )
        size += _copy_checked(source, name, target, expected[0] if expected else None, done, progress)
        files += 1
    held = table.tags()
    for label, event in snapshot_events_in(log).items():
        if held.get(label) == event.index_version and event.index_version in logged:
            _copy_checked(source, f"_refs/tags/{label}.json", target, None, done, progress)
    return files, size, newest


def _copy_checked(
    source: TableFiles, name: str, target: TableFiles, expected: FileRecord | None, done: str, progress: Any
) -> int:
    """Copy the file ``name`` of ``source`` to ``target``, hashing as it goes; a copy that is
    not the recorded file (``expected``; None for a manifest or a tag, which the log's version
    records and snapshot events cover) is damage in the source: the copy is removed and
    nothing more is copied."""
    digest, sizes, missing = hashlib.sha256(), [0], []

    def blocks() -> Iterator[bytes]:
        try:
            for block in source.chunks(name):
                digest.update(block)
                sizes[0] += len(block)
                if progress is not None:
                    progress.update(len(block))
                yield block
        except FileNotFoundError:
            missing.append(name)
            raise

    try:
        target.put(name, blocks())
    except (FileNotFoundError, StoreError):
        if not missing:
            raise
        raise ProjectDamagedError(
            f"the index file {source.where}/{name} is missing: not {done}; restore the project from an earlier "
            "backup (`ragtt verify` lists what is affected)"
        ) from None
    if expected is not None and (sizes[0] != expected.size or digest.hexdigest() != expected.sha256):
        target.remove(name)
        raise ProjectDamagedError(
            f"the index file {source.where}/{name} is not the file its version wrote (its size or SHA-256 differs "
            f"from the record): not {done}; `ragtt verify --deep` lists what is affected"
        )
    return sizes[0]


def fsync_tree(root: Path) -> None:
    for folder, _, names in os.walk(root):
        for name in names:
            with open(os.path.join(folder, name), "rb") as fh:
                os.fsync(fh.fileno())
        fsync_folder(folder)


def fsync_folder(folder: str | Path) -> None:
    with contextlib.suppress(OSError):  # a file system that cannot fsync a folder
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
