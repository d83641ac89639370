"""The chunk table: a LanceDB table whose native versions are the index history.

Writers go through one LanceDB handle, connected on the first write; every read goes through
the table's Lance dataset (pylance, the engine LanceDB stores it with), and every read of the
past through a checked-out, read-only ``View`` of an exact version (cached: versions never
change). Reading needs no ``import lancedb`` (its connection, namespace and embedding layers
are most of what a reading CLI verb would otherwise spend starting up), except full-text
search: BM25 stays on LanceDB's own engine, whose scores its logged queries were ranked with
(pylance's newer engine scores them differently), through ``View.text`` and ``View.full_text``. The table lives in
the project folder (``lancedb/``) or on object storage (``s3://``, ``gs://``, ``az://``), through
Lance's object-store support: ``storage_options`` are merged with the standard environment
variables (``AWS_*``, ``GOOGLE_*``, ``AZURE_*``) by Lance itself. On object storage a view is
read from a local mirror of its version's files when the table has an ``IndexCache``
(ragtt/index/cache.py); the latest version and every write stay on the store.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt._lazy import import_lancedb
from ragtt.errors import NotFoundError, ProjectDamagedError, StoreError
from ragtt.tuning import SCAN_BATCH_ROWS, SCAN_IO_BUFFER_BYTES

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
    from numpy.typing import NDArray

    from ragtt.index.cache import IndexCache
    from ragtt.index.files import FileRecord, TableFiles

__all__ = [
    "CHUNK_COLUMNS",
    "KEEP_FOREVER",
    "SCAN_SIZES",
    "ChunkTable",
    "VectorIndex",
    "View",
    "chunk_schema",
    "is_remote",
    "sql_string_list",
    "tracked_paths",
    "versions_reading",
]

# How much Lance reads per batch and ahead of a scan: ragtt's values (ragtt.tuning), passed
# to every scan rather than set in the process's environment.
SCAN_SIZES = {"batch_size": SCAN_BATCH_ROWS, "io_buffer_size": SCAN_IO_BUFFER_BYTES}
# Everything a retrieved chunk carries; the vector travels only when asked for.
CHUNK_COLUMNS = ["chunk_id", "doc_id", "doc_key", "source", "text", "char_start", "char_end", "regions"]
_VIEW_CACHE = 64
_ROW_CACHE = 20_000  # rows ``source_rows`` keeps (a lineage over many cells reads the same sources)
# LanceDB's optimize() deletes versions older than 7 days unless told otherwise: the history
# is the product, so maintenance never removes a version.
KEEP_FOREVER = timedelta(days=365 * 200)


@dataclass(frozen=True)
class VectorIndex:
    """The ANN index on the vectors at one version: its uuid names exactly what a search probed
    (maintenance that folds new rows into it makes a new uuid, at a new version)."""

    name: str
    uuid: str
    index_type: str


def chunk_schema(dim: int) -> pa.Schema:
    import pyarrow as pa

    region = pa.struct(
        [("page", pa.int32()), ("x0", pa.float32()), ("y0", pa.float32()), ("x1", pa.float32()), ("y1", pa.float32())]
    )
    return pa.schema(
        [
            pa.field("chunk_id", pa.string(), nullable=False),
            pa.field("doc_id", pa.string(), nullable=False),
            pa.field("doc_key", pa.string(), nullable=False),  # -> events.db documents (text, routes)
            pa.field("source", pa.string(), nullable=False),
            pa.field("content_hash", pa.string(), nullable=False),
            pa.field("text", pa.string(), nullable=False),
            pa.field("char_start", pa.int64(), nullable=False),
            pa.field("char_end", pa.int64(), nullable=False),
            pa.field("regions", pa.list_(region)),
            pa.field("ingest_id", pa.string(), nullable=False),
            pa.field("vector", pa.list_(pa.float32(), dim)),
        ]
    )


def is_remote(location: str | Path) -> bool:
    """Whether ``location`` is an object-store URI (``s3://bucket/prefix``) rather than a folder."""
    return isinstance(location, str) and "://" in location


def _connect(location: str | Path, storage_options: dict[str, str] | None) -> Any:
    # lancedb minus its REST namespace client (see there)
    return import_lancedb().connect(str(location), storage_options=storage_options or None)


def _open_dataset(where: str, storage_options: dict[str, str] | None) -> Any:
    """The Lance dataset at ``where``, at its latest version."""
    import lance

    return lance.dataset(where, storage_options=storage_options or None)


class View:
    """One version of the table, read-only: ``dataset`` is the Lance dataset checked out at
    it (scans, vector search). Full-text search runs on LanceDB's async handle of the same
    version (the engine a sync search calls, without its per-query Python round trips),
    opened once, on first use: ``full_text`` runs a batch of BM25 searches on it in one trip
    to LanceDB's event loop, and ``text_tokenizer`` reads what its index was built with."""

    def __init__(self, dataset: Any, open_text: Callable[[], Awaitable[Any]]) -> None:
        self.dataset = dataset
        self._open_text = open_text
        self._text: Any = None

    async def _text_table(self) -> Any:
        if self._text is None:
            self._text = await self._open_text()
        return self._text

    def full_text(self, queries: Sequence[str], columns: list[str], limit: int) -> list[Any]:
        """The top ``limit`` rows (``columns``, ``_score`` and the row address ``_rowid``) of each
        query's BM25 search, as Arrow tables, in the order of ``queries``."""
        import asyncio

        async def search() -> list[Any]:
            table = await self._text_table()
            return list(
                await asyncio.gather(
                    *(
                        table.query()
                        .nearest_to_text(q, columns="text")
                        .select([*columns, "_score"])
                        .with_row_id()
                        .limit(limit)
                        .to_arrow()
                        for q in queries
                    )
                )
            )

        return list(_run_lancedb(search()))

    @functools.cached_property
    def text_tokenizer(self) -> dict[str, Any] | None:
        """The full-text index's tokenizer settings at this version, as LanceDB (whose engine
        runs BM25) reads them; None when the version has no full-text index. The first call
        opens the version's full-text handle, in the same trip."""

        async def indices() -> Any:
            return await (await self._text_table()).list_indices()

        for index in _run_lancedb(indices()):
            if list(index.columns) == ["text"]:
                # read defensively: a replay on another LanceDB must still run and say what changed
                return dict(getattr(index, "index_details", None) or {})
        return None


def _run_lancedb(coroutine: Awaitable[Any]) -> Any:
    """``coroutine`` run to its end on LanceDB's event loop (the one its async handles live on)."""
    import_lancedb()  # before its event loop's module: that imports the package
    from lancedb.background_loop import LOOP

    return LOOP.run(coroutine)


def _text_index(dataset: Any) -> dict[str, Any] | None:
    """The full-text index on ``text`` at the dataset's version, as Lance lists it."""
    return next((i for i in dataset.list_indices() if list(i["fields"]) == ["text"]), None)


def sql_string_list(values: list[str]) -> str:
    """A SQL ``IN`` list with every quote doubled (source names are user data; one that is
    not valid Unicode text is a ConfigError)."""
    from ragtt.values import check_text

    for value in values:
        check_text("the source", value)
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


def table_exists(db: Any, folder: str | Path, table_name: str) -> bool:
    if not is_remote(folder) and not Path(folder).is_dir():
        return False
    try:
        return table_name in db.list_tables().tables
    except (OSError, RuntimeError, ValueError) as exc:
        raise StoreError(f"cannot reach the index at {folder}: {str(exc).splitlines()[0]}") from None


class ChunkTable:
    """One LanceDB table of chunks; ``view(version)`` is how the past is read.

    ``ChunkTable(location, name)`` opens an existing table (a missing or unreadable one is a
    ProjectDamagedError: ragtt never recreates an index silently); ``ChunkTable.create``
    makes a new one. ``location`` is a folder or an object-store URI.
    """

    def __init__(
        self,
        folder: str | Path,
        table_name: str,
        *,
        storage_options: dict[str, str] | None = None,
        cache: IndexCache | None = None,
        _table: Any = None,
        _db: Any = None,
    ) -> None:
        self.folder: str | Path = folder if is_remote(folder) else Path(folder)
        self.table_name = table_name
        self.where = f"{str(self.folder).rstrip('/')}/{table_name}.lance"
        self._storage_options = storage_options
        # past versions of a remote table are read from a local mirror (a local one needs none)
        self._cache = cache if is_remote(self.folder) else None
        self._views: OrderedDict[int, View] = OrderedDict()
        self._id_cache: dict[int, dict[str, str]] = {}
        # (version, source, columns) -> its chunks' rows (``source_rows``), up to _ROW_CACHE rows
        self._row_cache: OrderedDict[tuple[int, str, tuple[str, ...]], list[dict[str, Any]]] = OrderedDict()
        self._row_cached = 0  # rows in _row_cache
        self._ann_cache: dict[int, VectorIndex | None] = {}
        # LanceDB: the writer (and full-text search), connected on first use; reads never need it
        self._db, self._table = _db, _table
        self._async_dbs: dict[str, Any] = {}  # LanceDB's async connections (full-text search), by place
        self._dataset: Any = self._open()

    def _open(self) -> Any:
        """The Lance dataset at its latest version: the manifest is read now, not at the first query."""
        if is_remote(self.folder) or Path(self.where).is_dir():
            try:
                return _open_dataset(self.where, self._storage_options)
            except (RuntimeError, OSError, ValueError) as exc:
                if "not found" not in str(exc):
                    raise ProjectDamagedError(
                        f"the index {self.where} cannot be read ({str(exc).splitlines()[0]}); restore it from a backup"
                    ) from None
        raise ProjectDamagedError(
            f"the index {self.where} is missing: this project's chunk table is gone. Restore it from a "
            "backup; ragtt never recreates it empty"
        )

    def _lancedb(self) -> Any:
        if self._db is None:
            self._db = _connect(self.folder, self._storage_options)
        return self._db

    def _writer(self) -> Any:
        """The LanceDB table, checked out at the latest version (another process may have written)."""
        if self._table is None:
            self._table = self._lancedb().open_table(self.table_name)
        self._table.checkout_latest()
        return self._table

    def _latest(self) -> Any:
        """The Lance dataset at the latest version (another process may have written since)."""
        latest = self._dataset.latest_version
        if latest != self._dataset.version:
            self._dataset = self._dataset.checkout_version(latest)
        return self._dataset

    @property
    def dim(self) -> int:
        """The vector width at the latest version (a re-embed may change it)."""
        return int(self._latest().schema.field("vector").type.list_size)

    @classmethod
    def create(
        cls,
        folder: str | Path,
        table_name: str,
        dim: int,
        *,
        storage_options: dict[str, str] | None = None,
        cache: IndexCache | None = None,
    ) -> tuple[ChunkTable, list[int]]:
        """A new, empty table with its full-text index; returns it and the versions made."""
        db = _connect(folder, storage_options)
        from lancedb.index import FTS

        table = db.create_table(table_name, schema=chunk_schema(dim))
        made = [int(table.version)]
        # Full-text search fails at any version older than its index: build it before any row.
        table.create_index("text", config=FTS(with_position=False))
        made.append(int(table.version))
        return cls(folder, table_name, storage_options=storage_options, cache=cache, _table=table, _db=db), made

    @staticmethod
    def exists(folder: str | Path, table_name: str, *, storage_options: dict[str, str] | None = None) -> bool:
        """Whether a table ``table_name`` is at ``folder`` (a folder or an object-store URI)."""
        return table_exists(_connect(folder, storage_options), folder, table_name)

    @staticmethod
    def drop(folder: str | Path, table_name: str, *, storage_options: dict[str, str] | None = None) -> None:
        """Delete the table ``table_name`` at ``folder``, every version of it (what a creation
        that died before the log recorded it left; never a table the log knows)."""
        _connect(folder, storage_options).drop_table(table_name)

    def check_dim(self, dim: int, version: int | None = None) -> None:
        """The embedder's width must be the table's at ``version`` (default: the latest; a reader
        passes the newest logged version, so a re-embed in flight is not yet its concern)."""
        held = self.dim if version is None else self.vector_dim(version)
        if dim != held:
            from ragtt.errors import ConfigError

            raise ConfigError(
                f"the index at {self.folder} holds {held}-dimensional vectors but the embedder makes "
                f"{dim}; open the project with its original embedder, or re-embed it with "
                "proj.reembed(new_embedder)"
            )

    def has_text_index(self) -> bool:
        """Whether the latest version has its full-text index (a rewrite drops it)."""
        return _text_index(self._latest()) is not None

    def unindexed_text_rows(self, version: int) -> int:
        """Rows of ``version`` outside its full-text index (all of them if it has none)."""
        dataset = self.view(version).dataset
        index = _text_index(dataset)
        if index is None:
            return int(dataset.count_rows())
        return int(dataset.stats.index_stats(index["name"])["num_unindexed_rows"])

    def create_text_index(self) -> int:
        from lancedb.index import FTS

        table = self._writer()
        table.create_index("text", config=FTS(with_position=False))
        return int(table.version)

    def vector_index(self, version: int) -> VectorIndex | None:
        """The ANN index on ``vector`` at ``version`` (None: that version is searched exactly).
        Cached: a version's indices never change."""
        if version in self._ann_cache:
            return self._ann_cache[version]
        found = None
        for index in self.view(version).dataset.list_indices():
            if list(index["fields"]) == ["vector"]:
                found = VectorIndex(str(index["name"]), str(index["uuid"]), str(index["type"]))
        self._ann_cache[version] = found
        if len(self._ann_cache) > _VIEW_CACHE:
            self._ann_cache.pop(next(iter(self._ann_cache)))
        return found

    def create_vector_index(self, name: str, num_partitions: int, num_sub_vectors: int, sample_rate: int) -> int:
        """Train an IVF-PQ index (cosine) on every row's vector, in ONE new version; returns it
        (k-means trains on ``sample_rate`` vectors per partition).

        Built by pylance, the engine reads already use, rather than through LanceDB: on a 200 MB
        ingest's 343k rows it took 21 s and +321 MiB against 137-181 s and +427-488 MiB for
        LanceDB's builder (an older Lance inside it). LanceDB's optimize folds later rows into
        the index as before."""
        dataset = self._latest()
        dataset.create_index(
            "vector",
            index_type="IVF_PQ",
            name=name,
            metric="cosine",
            num_partitions=num_partitions,
            num_sub_vectors=num_sub_vectors,
            sample_rate=sample_rate,
        )
        return int(dataset.version)

    # -- versions ---------------------------------------------------------------------------

    def latest_version(self) -> int:
        return int(self._latest().version)

    def view(self, version: int) -> View:
        """A read-only view of ``version`` (cached; never write to it)."""
        cached = self._views.get(version)
        if cached is not None:
            self._views.move_to_end(version)
            return cached
        try:
            dataset = self._dataset.checkout_version(version)
        except (ValueError, RuntimeError, OSError) as exc:
            raise NotFoundError(
                f"index version {version} does not exist in table {self.table_name!r} "
                f"(latest is {self.latest_version()}; a prune deletes old versions, and its history.pruned "
                "event lists them)"
            ) from exc
        mirror = None
        if self._cache is not None:
            dataset, mirror = self._mirrored(self._cache, dataset)
        view = View(dataset, functools.partial(self._text_view, version, mirror))
        self._views[version] = view
        if len(self._views) > _VIEW_CACHE:
            self._views.popitem(last=False)
        return view

    def _mirrored(self, cache: IndexCache, remote: Any) -> tuple[Any, Path | None]:
        """``remote`` (one version, checked out on the store, so a pruned version is still
        NotFound) read from ``cache``'s mirror, and the mirror's folder; ``remote`` itself
        when the version cannot be mirrored, or the cache not written (a full disk) or read
        (a file another process evicted as it was opened): the store answers the same."""
        folder = cache.folder_for(str(self.folder), self._storage_options)
        try:
            local = cache.open_version(folder, self.table_name, self.where, self._storage_options, remote)
        except (OSError, ValueError, RuntimeError) as exc:
            import warnings

            from ragtt.damage import index_damage

            damage = index_damage(self.where, str(exc))
            if damage is not None and "missing" in str(damage):
                # the store lacks it too: the cache is not at fault, and the read that needs the
                # file fails on the store with the named error (a read that does not, goes on)
                return remote, None
            warnings.warn(f"the index cache in {cache.root} is not usable, reading from the store: {exc}", stacklevel=3)
            return remote, None
        return (remote, None) if local is None else (local, folder)

    async def _text_view(self, version: int, mirror: Path | None) -> Any:
        """``version`` as LanceDB's async table, for full-text search: from the mirror's folder
        (a LanceDB database of its own) when it has one. The connection is made once per place
        and kept (each view opening one made a new session, and most of the cost of opening)."""
        location, options = (mirror, None) if mirror is not None else (self.folder, self._storage_options)
        db = self._async_dbs.get(str(location))
        if db is None:
            db = await import_lancedb().connect_async(str(location), storage_options=options or None)
            self._async_dbs[str(location)] = db
        return await db.open_table(self.table_name, version=version)

    # -- files ------------------------------------------------------------------------------

    def sibling(self, table_name: str) -> ChunkTable:
        """The table ``table_name`` in the same folder or bucket, reached with the same options."""
        return ChunkTable(self.folder, table_name, storage_options=self._storage_options, cache=self._cache)

    def files(self) -> TableFiles:
        """The table's files, where they are (its folder or the object store)."""
        from ragtt.index.files import TableFiles

        return TableFiles(self.where, self._storage_options)

    def tracked_files(self, min_version: int | None = None) -> dict[str, set[int]]:
        """Path (in the table) -> the retained versions from ``min_version`` on that read it:
        every data, deletion and index file, as Lance's manifests list them."""
        return versions_reading(self.tracked_table(min_version))

    def tracked_table(self, min_version: int | None = None) -> pa.Table:
        """(version, path) of every data, deletion and index file each retained version from
        ``min_version`` on reads: one read of each manifest, kept in Arrow (a table of many
        versions has many rows per file, which Python objects would make slow)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        from ragtt.index.files import TRACKED_TYPES

        dataset = self._latest()
        rows = dataset.tracked_files(min_version=min_version) if min_version else dataset.tracked_files()
        table = rows.read_all()
        kinds = pc.cast(table.column("type"), pa.string())
        return table.filter(pc.is_in(kinds, pa.array(sorted(TRACKED_TYPES)))).select(["version", "path"])

    def tracked_rows(self, min_version: int | None = None) -> list[tuple[int, str, str]]:
        """(version, kind, path in the table) of every file each retained version from
        ``min_version`` on reads: its manifest, transaction, data, deletion and index files."""
        dataset = self._latest()
        rows = dataset.tracked_files(min_version=min_version) if min_version else dataset.tracked_files()
        table = rows.read_all()
        return list(
            zip(
                table.column("version").to_pylist(),
                [str(k) for k in table.column("type").to_pylist()],
                [str(p) for p in table.column("path").to_pylist()],
                strict=True,
            )
        )

    def added_files(self, base: int, versions: list[int]) -> list[FileRecord]:
        """Size and SHA-256 of every file ``versions`` (all after ``base``) added: what they
        read that ``base`` did not. A file gone already is damage."""
        if not versions:
            return []
        made = set(versions)
        tracked = self.tracked_files(base if base >= 1 else None)
        return self.records_of(sorted(p for p, used in tracked.items() if base not in used and used & made), tracked)

    def records_of(self, names: list[str], tracked: dict[str, set[int]]) -> list[FileRecord]:
        """Size and SHA-256 of each of ``names`` (read by the versions ``tracked`` says), to be
        recorded: one that is gone already is damage."""
        records = []
        for name, record in zip(names, self.files().digests(names), strict=True):
            if record is None:
                versions = sorted(tracked.get(name, ()))
                raise ProjectDamagedError(
                    f"the index file {self.where}/{name} (read by versions {', '.join(map(str, versions[:10]))}) "
                    "is missing; restore the index folder from a backup; `ragtt verify` lists what is affected"
                )
            records.append(record)
        return records

    def tag(self, label: str, version: int) -> None:
        try:
            self._writer().tags.create(label, version)
        except (RuntimeError, ValueError, OSError) as exc:
            message = str(exc)
            if "already exists" in message:
                raise StoreError(f"a snapshot labelled {label!r} already exists; pick another label") from None
            raise StoreError(f"cannot tag version {version} as {label!r}: {message}") from None

    def tags(self) -> dict[str, int]:
        return {name: int(info["version"]) for name, info in self._latest().tags.list().items()}

    # -- writes (each is exactly one new version) ------------------------------------------------

    def add_rows(self, rows: pa.Table | pa.RecordBatchReader) -> int:
        """Append ``rows`` in ONE version (chunks of sources the table does not hold yet). A
        reader is written as it is read, a batch at a time, and committed after its last."""
        table = self._writer()
        table.add(rows)
        return int(table.version)

    def replace_sources(self, rows: pa.Table | pa.RecordBatchReader, sources: list[str]) -> int:
        """Make ``rows`` the chunks of ``sources`` in ONE version: kept chunk ids keep their id
        (their charspan and document pointer are refreshed: the passage may have moved), new
        ones are inserted, stale ones of these sources are deleted, other sources untouched.
        A reader is consumed as a stream; LanceDB commits once, after its last batch."""
        table = self._writer()
        where = f"source IN ({sql_string_list(sources)})"
        (
            table.merge_insert("chunk_id")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete(where)
            .execute(rows)
        )
        return int(table.version)

    def rewrite_vectors(self, rows: pa.Table, dim: int) -> list[int]:
        """Replace every row's vector (the rows are the whole table); returns the new versions."""
        table = self._writer()
        if dim == self.dim:
            table.merge_insert("chunk_id").when_matched_update_all().execute(rows)
            return [int(table.version)]
        table.add(rows, mode="overwrite")  # a new version with the new schema; history stays
        first = int(table.version)
        return [first, self.create_text_index()]

    def optimize(self) -> list[int]:
        """Compact fragments and bring every row into the full-text index, deleting nothing.

        Each write adds a fragment and leaves its rows outside the FTS index, so without this
        scans, vector search and BM25 slow down with every ingest. Returns the new versions;
        the data at every version, old or new, is unchanged.
        """
        table = self._writer()
        before = int(table.version)
        table.optimize(cleanup_older_than=KEEP_FOREVER)
        return list(range(before + 1, int(table.version) + 1))

    def forget(self, versions: list[int], tags: list[str]) -> int:
        """Delete ``tags``, then the versions ``versions`` and the files only they used (retention,
        the one deliberate deleter); returns the bytes freed. Idempotent: a version or tag gone
        already is skipped. Lance never removes the latest version, and refuses to remove a
        version that still has a tag, so a retained snapshot cannot be lost by mistake here.
        """
        held = self.tags()
        table = self._writer()
        for label in tags:
            if label in held:
                table.tags.delete(label)
        if not versions:
            return 0
        self._views.clear()
        self._id_cache.clear()
        self._row_cache.clear()
        self._row_cached = 0
        self._ann_cache.clear()
        stats = self._latest().cleanup_old_versions(versions=sorted(versions), error_if_tagged_old_versions=True)
        return int(stats.bytes_removed)

    def delete_sources(self, sources: list[str]) -> int:
        table = self._writer()
        table.delete(f"source IN ({sql_string_list(sources)})")
        return int(table.version)

    # -- reads ----------------------------------------------------------------------------------

    def scan(self, version: int, columns: list[str], where: str | None = None) -> pa.Table:
        return self.view(version).dataset.to_table(columns=columns, filter=where or None, **SCAN_SIZES)

    def texts(self, version: int, chunk_ids: Iterable[str]) -> dict[str, str]:
        """chunk_id -> text at ``version``, in one scan (ids not in the table then are absent)."""
        wanted = sorted(set(chunk_ids))
        if not wanted:
            return {}
        rows = self.scan(version, ["chunk_id", "text"], where=f"chunk_id IN ({sql_string_list(wanted)})")
        return dict(zip(rows.column("chunk_id").to_pylist(), rows.column("text").to_pylist(), strict=True))

    def source_rows(self, version: int, sources: Iterable[str], columns: list[str]) -> dict[str, list[dict[str, Any]]]:
        """source -> the rows (``columns``, in table order) of its chunks at ``version``, the
        sources not read recently in one scan (cached: a version never changes)."""
        wanted = sorted(set(sources))
        shape = tuple(columns)
        found = {s: self._row_cache.get((version, s, shape)) for s in wanted}
        missing = [s for s, rows in found.items() if rows is None]
        if missing:
            read: dict[str, list[dict[str, Any]]] = {s: [] for s in missing}
            where = f"source IN ({sql_string_list(missing)})"
            for row in self.scan(version, sorted({*columns, "source"}), where=where).to_pylist():
                read[row["source"]].append({c: row[c] for c in columns})
            for source, rows in read.items():
                found[source] = rows
                self._row_cache[(version, source, shape)] = rows
                self._row_cached += len(rows)
            while len(self._row_cache) > 1 and self._row_cached > _ROW_CACHE:
                self._row_cached -= len(self._row_cache.popitem(last=False)[1])
        for s in wanted:
            if (version, s, shape) in self._row_cache:
                self._row_cache.move_to_end((version, s, shape))
        return {s: rows or [] for s, rows in found.items()}

    def doc_key_of(self, version: int, source: str) -> str | None:
        """The document key of ``source``'s chunks at ``version`` (None: not in the index then)."""
        found = self.scan(version, ["doc_key"], where=f"source IN ({sql_string_list([source])})")
        return None if found.num_rows == 0 else str(found.column("doc_key")[0].as_py())

    def count(self, version: int) -> int:
        return int(self.view(version).dataset.count_rows())

    def chunk_sources(self, version: int) -> dict[str, str]:
        """chunk_id -> source at ``version`` (cached: a version never changes)."""
        cached = self._id_cache.get(version)
        if cached is None:
            table = self.scan(version, ["chunk_id", "source"])
            cached = dict(zip(table.column("chunk_id").to_pylist(), table.column("source").to_pylist(), strict=True))
            self._id_cache[version] = cached
            if len(self._id_cache) > _VIEW_CACHE:
                self._id_cache.pop(next(iter(self._id_cache)))
        return cached

    def vectors(self, version: int, columns: list[str]) -> tuple[pa.Table, NDArray[np.float32]]:
        """``columns`` of every row at ``version``, and their vectors as one float32 matrix."""
        import numpy as np

        data = self.scan(version, [*columns, "vector"])
        flat = data.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        matrix = np.asarray(flat, dtype=np.float32).reshape(data.num_rows, self.vector_dim(version))
        return data.drop_columns(["vector"]), matrix

    def vector_dim(self, version: int) -> int:
        """The vector width stored at ``version`` (a re-embed may have changed it)."""
        return int(self.view(version).dataset.schema.field("vector").type.list_size)


def tracked_paths(tracked: pa.Table) -> set[str]:
    """The paths of a ``ChunkTable.tracked_table``, each once."""
    import pyarrow.compute as pc

    return {str(p) for p in pc.unique(tracked.column("path")).to_pylist()}


def versions_reading(tracked: pa.Table, paths: Iterable[str] | None = None) -> dict[str, set[int]]:
    """Path -> the versions that read it, of a ``ChunkTable.tracked_table`` (only ``paths``, when given)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if paths is not None:
        tracked = tracked.filter(pc.is_in(tracked.column("path"), pa.array(sorted(paths), pa.string())))
    found: dict[str, set[int]] = {}
    for version, path in zip(tracked.column("version").to_pylist(), tracked.column("path").to_pylist(), strict=True):
        found.setdefault(str(path), set()).add(int(version))
    return found
