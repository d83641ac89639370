"""``proj.restore(dest, to_events_uri=..., to_index_uri=...)``: a backup put back into a new
Postgres log and/or object-store index (or a new folder), checked as it goes.

``proj`` is the backup (a project folder ``proj.backup`` made; any project works). Every
destination must be empty: the folder ``dest`` (where the marker goes), the Postgres
database (no history, no project), the index location (no table of this project's names).
Nothing is overwritten.

The order, and what a kill on each line leaves:

1. the backup is verified (hash chain, guards, versions, tags, file sizes): a damaged backup
   is refused before anything is written. A kill here leaves nothing;
2. ``dest/.ragtt-restore.json`` is written (renamed into place, so it is whole or absent),
   then the target log is opened (a Postgres database gets ragtt's empty tables), found
   empty, and, in Postgres, given the meta key ``restoring``. From the record on until step
   6, opening ``dest`` raises ProjectDamagedError saying the restore did not finish (and
   ``ragtt verify`` reports it); from the key on, so does a workspace opening the database;
3. ``assertions.db`` and the embedding cache are copied (a cache: inserting twice is harmless);
4. the index files are written, each hashed as it is read and checked against the size and
   SHA-256 the backup's log recorded. Files are immutable, so writing one again writes the
   same bytes; a kill leaves some of them, which no log names yet;
5. ONE log transaction copies every event with its hash, the documents, the versions, the
   index location, and drops the ``restoring`` key: the commit point. A kill before its
   commit leaves the log without history; after it, a workspace opening the database finds
   the whole project;
6. the marker is written (renamed into place), then the record removed. A kill between the
   two leaves a complete project that opens.

Running the same restore again after a kill resumes it: steps 3 and 4 are redone, a log that
already holds this backup's history (the same project and newest event hash) is kept, and
steps 5 and 6 finish. A restore that fails with an error instead (a file that differs from
its record, a destination that is not empty, a store that refuses) takes back what it wrote
into destinations it found empty, and leaves them as they were.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt._html import STYLE, esc
from ragtt.errors import ConfigError, ProjectDamagedError
from ragtt.marker import MARKER, RESTORING, RESTORING_META, Marker, write_atomic
from ragtt.results import Result

if TYPE_CHECKING:
    from ragtt.context import Context
    from ragtt.events.base import EventLog
    from ragtt.events.cache import VectorStore
    from ragtt.opening import IndexLocation

__all__ = ["RestoreReport", "restore"]

_ASSERTIONS = "assertions.db"
_PROGRESS_DELAY_S = 2.0  # a bar only for a restore that takes a while


@dataclass(frozen=True)
class RestoreReport(Result):
    dest: str  # the restored project's folder
    events: str  # where its log now is (a file, or a URI without its password)
    index: str  # where its index now is
    index_version: int  # the newest version restored
    events_copied: int
    files_copied: int  # index files, each checked against its recorded hash
    bytes_copied: int
    resumed: bool = False  # an interrupted restore into the same destinations was finished

    def to_text(self) -> str:
        how = "finished an interrupted restore: " if self.resumed else ""
        return (
            f"restore: {how}{self.dest} at v{self.index_version}: {self.events_copied} events into {self.events}, "
            f"{self.files_copied} index files ({self.bytes_copied / 2**20:.1f} MiB, each checked against its "
            f"recorded hash) into {self.index}; prove it with `ragtt verify --deep --project {self.dest}`"
        )

    def __repr__(self) -> str:
        return f"RestoreReport({self.to_text()})"

    def _repr_html_(self) -> str:
        return f"{STYLE}<div class='ragtt-r'><b>RESTORE</b> {esc(self.to_text())}</div>"


def restore(
    ctx: Context,
    marker: Marker,
    dest: str | Path,
    to_events_uri: str | None = None,
    to_index_uri: str | None = None,
    storage_options: dict[str, str] | None = None,
) -> RestoreReport:
    """Restore the project of ``ctx`` (a backup; its marker ``marker``) into ``dest``, its log
    into the Postgres database ``to_events_uri`` (None: ``dest/events.db``) and its index to
    ``to_index_uri`` (None: ``dest/lancedb``)."""
    from ragtt.opening import IndexLocation, events_backend
    from ragtt.verify import verify

    target = Path(dest).expanduser().absolute()
    source = ctx.path.absolute()
    if target == source or source in target.parents or target in source.parents:
        raise ConfigError(f"the restore folder {target} overlaps the backup {ctx.path}: pick a folder outside it")
    events_uri = events_backend(to_events_uri) if to_events_uri is not None else None
    index = IndexLocation.choose(to_index_uri, storage_options, index_cache=False) if to_index_uri else IndexLocation()
    plan = _Plan(marker, target, events_uri, index)
    resumed = plan.check_folder()
    existed = target.exists()
    with ctx.log.write_lock():  # nobody changes the backup while it is copied
        found = verify(ctx)
        if not found.ok:
            raise ProjectDamagedError(
                f"the backup {ctx.path} does not verify, so nothing was restored: {'; '.join(found.problems[:5])}"
            )
        log: EventLog | None = None
        started = undone = False
        try:
            plan.begin(resumed)  # first: from here a kill leaves a folder that says what happened
            log = plan.open_log(ctx.table.table_name)
            done = plan.check_log(log, ctx.log, resumed)
            plan.check_index(resumed)
            plan.mark_log(log)
            started = True
            files = size = latest = 0
            with _progress(ctx) as bar:
                _copy_side_stores(ctx, plan)
                tables = marker.stores.get("tables", [ctx.table.table_name])
                if not done:  # else the log holds it already: its files were all written before it
                    files, size, latest = _copy_tables(ctx, plan, tables, bar)
                events = found.events_checked if done else _copy_log(ctx.log, log, plan)
            latest = latest or (log.versions.latest() or 0)
            plan.finish()
        except Exception:
            # Destinations found empty are left empty: once started, what was written is taken
            # back (before, nothing was, and what is there is not ours). A resumed restore, or
            # one stopped by Ctrl-C (not an Exception), stays as a kill leaves it: resumable.
            if not resumed:
                if started and log is not None:
                    plan.undo(log)
                undone = True
            raise
        finally:
            if log is not None:
                log.close()
            if undone:
                plan.clear_folder(existed)
    return RestoreReport(str(target), plan.events_where, plan.index_where, latest, events, files, size, resumed or done)


class _Plan:
    """Where a restore goes, and its in-progress record."""

    def __init__(self, marker: Marker, target: Path, events_uri: str | None, index: IndexLocation) -> None:
        from ragtt.events.postgres import redact
        from ragtt.opening.location import EVENTS, POSTGRES

        self.marker, self.target, self.events_uri, self.index = marker, target, events_uri, index
        self.events_kind = POSTGRES if events_uri else EVENTS
        self.index_where = index.uri or str(target / "lancedb")
        self.events_where = redact(events_uri) if events_uri else str(target / "events.db")
        self._unfinished: dict[str, str] = {}  # the in-progress record of a restore being resumed

    def begin(self, resumed: bool) -> None:
        """Step 2 (the folder): the restore recorded as in progress, before anything else is written."""
        if resumed:
            return
        self.target.mkdir(parents=True, exist_ok=True)
        record = {"project_id": self.marker.project_id, "events": self.events_where, "index": self.index_where}
        write_atomic(self.target / RESTORING, json.dumps(record, indent=2) + "\n")

    def check_folder(self) -> bool:
        """``dest`` must be absent or empty, or hold this very restore, unfinished (resumed: True)."""
        if self.target.exists() and not self.target.is_dir():
            raise ConfigError(f"the restore folder {self.target} is a file: pick a new, empty folder")
        if not self.target.exists() or not any(self.target.iterdir()):
            return False
        mark = self.target / RESTORING
        if not mark.exists():
            what = "a project" if (self.target / MARKER).exists() else "files"
            raise ConfigError(
                f"the restore folder {self.target} already holds {what}: a restore never overwrites anything. "
                "Pick a new, empty folder (move the damaged project aside first)"
            )
        self._unfinished = _read_record(mark)
        if self._unfinished.get("project_id") != self.marker.project_id:
            raise ConfigError(
                f"{self.target} holds an unfinished restore of another project "
                f"({self._unfinished.get('project_id')}): finish that restore, or pick a new folder"
            )
        return True

    def open_log(self, table_name: str) -> EventLog:
        from ragtt.opening import open_log

        return open_log(self.target, self.events_uri, table_name, create=True)

    def check_log(self, log: EventLog, source: EventLog, resumed: bool) -> bool:
        """The target log must hold no project; on a resume it may hold this backup's whole
        history (True: step 5 is done) or nothing yet (False)."""
        from ragtt.events.export import holds_history, newest_hash

        restoring = log.get_meta(RESTORING_META)
        if resumed and self._unfinished.get("events") != self.events_where:
            raise ConfigError(
                f"{self.target} holds an unfinished restore into the event log {self._unfinished.get('events')}, "
                f"not {self.events_where}: run it again with the same destinations"
            )
        if not holds_history(log) and (restoring is None or (resumed and restoring == self.marker.project_id)):
            return False
        owner = log.get_meta("project_id")
        if resumed and owner == self.marker.project_id and newest_hash(log) == newest_hash(source):
            return True
        who = f"project {owner}" if owner else "a restore in progress" if restoring else "events"
        raise ConfigError(
            f"the event log {log.location} already holds {who}: a restore never writes into a log with a "
            "history. Restore into a new, empty database"
        )

    def check_index(self, resumed: bool) -> None:
        from ragtt.index.table import ChunkTable

        if resumed:
            if self._unfinished.get("index") != self.index_where:
                raise ConfigError(
                    f"{self.target} holds an unfinished restore into the index {self._unfinished.get('index')}, "
                    f"not {self.index_where}: run it again with the same destinations"
                )
            return  # the tables there are this restore's own, half written
        for name in self.marker.stores.get("tables", []):
            if ChunkTable.exists(self.index.at(self.target), name, storage_options=self.index.storage_options):
                raise ConfigError(
                    f"{self.index_where} already holds a table {name!r}: a restore never overwrites an index. "
                    "Restore to a new, empty prefix or folder"
                )

    def mark_log(self, log: EventLog) -> None:
        """Step 2 (a Postgres log): the same record in the database, so that another workspace
        opening it is refused too rather than making a new project in it."""
        from ragtt.events.export import holds_history

        if self.events_uri is not None and log.get_meta(RESTORING_META) is None and not holds_history(log):
            with log.transaction() as conn:
                log.set_meta(RESTORING_META, self.marker.project_id, conn)

    def undo(self, log: EventLog) -> None:
        """A restore into destinations it found empty that failed (a damaged backup file, a store
        that refused) takes back what it wrote there: the tables' files, the log's in-progress
        key. Only ever called after ``check_index`` found no table of these names there."""
        from ragtt.index.files import TableFiles

        if self.events_uri is not None:
            log.delete_meta(RESTORING_META)
        for name in self.marker.stores.get("tables", []):
            where = f"{str(self.index.at(self.target)).rstrip('/')}/{name}.lance"
            with contextlib.suppress(Exception):  # the error that failed the restore is the one to see
                TableFiles(where, self.index.storage_options).clear()

    def clear_folder(self, existed: bool) -> None:
        """The folder, empty before a restore that failed, made empty again (or removed)."""
        import shutil

        if not self.target.is_dir():
            return
        if not existed:
            shutil.rmtree(self.target, ignore_errors=True)
            return
        for path in self.target.iterdir():
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)

    def finish(self) -> None:
        """Step 6: the marker, then the in-progress record goes."""
        from ragtt.backup import fsync_folder

        self.marker.with_store("events", self.events_kind).with_store("index", self.index.marker_value()).write(
            self.target
        )
        (self.target / RESTORING).unlink(missing_ok=True)
        fsync_folder(self.target)


def _read_record(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {str(k): str(v) for k, v in data.items()}
    except (OSError, ValueError, AttributeError) as exc:
        raise ProjectDamagedError(f"{path} cannot be read ({exc}): move it aside and restore again") from None


def _copy_side_stores(ctx: Context, plan: _Plan) -> None:
    """Step 3: the assertion store (a file of the folder on every backend) and the embedding
    cache (beside the log: in its Postgres database, or ``embeddings.db``)."""
    from ragtt._sqlite import copy_database
    from ragtt.events.export import copy_cache

    if (ctx.path / _ASSERTIONS).exists():
        copy_database(ctx.path / _ASSERTIONS, plan.target / _ASSERTIONS)
    vectors = _vectors(plan)
    try:
        copy_cache(ctx.log, ctx.cache.path, vectors)
    finally:
        vectors.close()


def _vectors(plan: _Plan) -> VectorStore:
    from ragtt.events.cache import SQLiteVectors

    if plan.events_uri is None:
        return SQLiteVectors(plan.target / "embeddings.db")
    from ragtt.events.pg_cache import PostgresVectors

    return PostgresVectors(plan.events_uri)


def _copy_tables(ctx: Context, plan: _Plan, tables: list[str], bar: Any) -> tuple[int, int, int]:
    """Step 4: each table's files, checked against the backup's records; (files, bytes, newest
    version of the project's own table)."""
    from ragtt.backup import copy_table
    from ragtt.index.files import TableFiles

    files = size = latest = 0
    own = ctx.table.table_name
    try:
        for name in tables:
            ctx.log.use_table(name)
            table = ctx.table if name == own else ctx.table.sibling(name)
            where = f"{str(plan.index.at(plan.target)).rstrip('/')}/{name}.lance"
            n, b, newest = copy_table(
                ctx.log, table, TableFiles(where, plan.index.storage_options), done="restored", progress=bar
            )
            files, size = files + n, size + b
            latest = newest if name == own else latest
    finally:
        ctx.log.use_table(own)
    return files, size, latest


def _copy_log(source: EventLog, log: EventLog, plan: _Plan) -> int:
    """Step 5: the whole history in one transaction."""
    from ragtt.events.export import copy_log

    return copy_log(source, log, meta={"index": plan.index.marker_value()}, drop_meta=(RESTORING_META,))


@contextlib.contextmanager
def _progress(ctx: Context) -> Iterator[Any]:
    """A byte count on stderr for a restore that runs longer than a moment (as ingest shows its own)."""
    if not ctx.progress:
        yield None
        return
    from tqdm.auto import tqdm

    bar = tqdm(desc="ragtt restore", unit="B", unit_scale=True, leave=False, delay=_PROGRESS_DELAY_S)
    try:
        yield bar
    finally:
        bar.close()
