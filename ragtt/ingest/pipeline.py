"""Ingest: sources -> parsed documents -> chunks -> embeddings -> ONE new table version.

An unchanged document (same bytes, same chunking) is skipped before parsing and writes
nothing. One bad source fails alone, with its reason in the report.

Memory is bounded by a batch, not by the corpus: a document's chunks are kept as spans
(``ChunkPlan``), and chunk texts, vectors and Arrow rows exist only a batch at a time
(``BatchLimits``). The embeddings go to the cache first, batch by batch; the table then
reads the rows as a stream of batches and commits them as one version.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

from ragtt._hashing import chunk_id_for, doc_id_for, sha256_hex, stable_json, time_ordered_id
from ragtt.commit import Write, writing
from ragtt.config import INGEST_ENGINES
from ragtt.errors import ConfigError, IngestError
from ragtt.events import types as ev
from ragtt.events.documents import DocumentRow
from ragtt.events.store import Event, format_ts, utc_now
from ragtt.ingest.chunk import ChunkPlan, plan_chunks
from ragtt.ingest.loaders import Loader, loader_for, streamed, supported_suffixes
from ragtt.ingest.types import IngestOptions, ParsedDocument
from ragtt.results import IngestReport
from ragtt.values import printable, unicode_problem

if TYPE_CHECKING:
    from datetime import datetime

    import pyarrow as pa

    from ragtt.config import PipelineConfig
    from ragtt.context import Context
    from ragtt.events.cache import BatchEmbed

__all__ = [
    "DEFAULT_BATCH",
    "BatchLimits",
    "Collected",
    "Engine",
    "Failed",
    "Outcome",
    "PrepareSpec",
    "Prepared",
    "SourceItem",
    "collect_paths",
    "prepare_source",
    "run_ingest",
]

IN_MEMORY = "in-memory.txt"  # what an in-memory source (no path) is read as

_PROGRESS_MIN_DOCS = 8
_PROGRESS_MIN_CHUNKS = 20
_PROGRESS_DELAY_S = 2.0
_ID_STEP = 4096  # chunks materialized at a time while their ids are computed


@dataclass(frozen=True)
class BatchLimits:
    """How much an ingest embeds and hands to the table at a time: at most ``chunks``
    chunks and ``chars`` characters of text to embed per batch (a longer chunk goes alone)."""

    chunks: int = 1024
    chars: int = 4 << 20

    def __post_init__(self) -> None:
        if self.chunks < 1 or self.chars < 1:
            raise ValueError(f"batch limits must be at least 1; got chunks={self.chunks}, chars={self.chars}")


DEFAULT_BATCH = BatchLimits()


@dataclass(frozen=True)
class SourceItem:
    """One source to ingest: its name and how to get its bytes."""

    source: str
    path: Path | None = None
    data: bytes | None = None

    def read(self) -> bytes:
        if self.data is not None:
            return self.data
        assert self.path is not None
        try:
            return self.path.read_bytes()
        except OSError as exc:
            raise IngestError(f"cannot read {self.path}: {exc.strerror or exc}") from None

    def sha256(self) -> str:
        """The hex SHA-256 of the bytes; a file is hashed as it is read, never held whole."""
        if self.data is not None:
            return sha256_hex(self.data)
        assert self.path is not None
        try:
            with self.path.open("rb") as fh:
                return hashlib.file_digest(fh, "sha256").hexdigest()
        except OSError as exc:
            raise IngestError(f"cannot read {self.path}: {exc.strerror or exc}") from None


@dataclass
class Collected:
    """What ``collect_paths`` found: the sources, the inputs that failed (a folder or link
    that could not be listed or resolved), and the ones skipped on purpose, with reasons."""

    items: list[SourceItem]
    failed: list[tuple[str, str]]
    skipped: list[tuple[str, str]]


def collect_paths(paths: Iterable[str | Path] | str | Path, *, follow_symlinks: bool = False) -> Collected:
    """Expand files and folders into named sources; a folder's files are named relative to it.

    Hidden files and folders are left out. A symlink that leads outside its folder is
    skipped (and reported) unless ``follow_symlinks``; a dangling link, a link loop, or a
    folder that cannot be listed is a failure, never a silent omission.
    """
    if isinstance(paths, str | Path):
        paths = [paths]
    found = Collected([], [], [])
    suffixes = set(supported_suffixes())
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            _walk(path, suffixes, follow_symlinks, found)
        elif path.is_file():
            found.items.append(SourceItem(path.name, path=path))
        elif path.is_symlink():
            found.failed.append((str(raw), f"dangling symlink: {path} -> {os.readlink(path)}"))
        else:
            found.failed.append((str(raw), f"no such file or folder: {path}"))
    seen: dict[str, SourceItem] = {}
    unique: list[SourceItem] = []
    for item in found.items:
        if item.source in seen:
            found.failed.append(
                (
                    item.source,
                    f"two inputs share this source name ({seen[item.source].path} and "
                    f"{item.path}); ingest them in separate calls or folders",
                )
            )
        else:
            seen[item.source] = item
            unique.append(item)
    found.items = unique
    return found


def _walk(root: Path, suffixes: set[str], follow: bool, found: Collected) -> None:
    real_root = root.resolve()
    files: list[SourceItem] = []
    # (folder to list, the real folders above it): a link back into them is a loop.
    stack: list[tuple[Path, frozenset[Path]]] = [(root, frozenset([real_root]))]
    while stack:
        folder, above = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            name = folder.relative_to(root).as_posix() + "/" if folder != root else str(root)
            found.failed.append((name, f"cannot list folder {folder}: {exc.strerror or exc}"))
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            source = path.relative_to(root).as_posix()
            problem = unicode_problem(source, fix="rename the file")
            if problem is not None:  # bytes the OS could not decode: it cannot be named in the log
                found.failed.append((printable(source), f"the file name {problem}"))
                continue
            if entry.is_symlink():
                try:
                    target = path.resolve(strict=True)
                except FileNotFoundError:
                    found.failed.append((source, f"dangling symlink: {path} -> {os.readlink(path)}"))
                    continue
                except (RuntimeError, OSError):
                    found.failed.append((source, f"symlink loop at {path}"))
                    continue
                inside = target == real_root or real_root in target.parents
                if not inside and not follow:
                    found.skipped.append(
                        (
                            source,
                            f"symlink to {target}, outside {root}; pass follow_symlinks=True "
                            "(--follow-symlinks) to ingest it",
                        )
                    )
                    continue
                if target.is_dir():
                    if target in above:
                        found.failed.append((source, f"symlink loop: {path} leads back to {target}"))
                    elif inside:
                        found.skipped.append(
                            (source, f"symlink to {target}, a folder already ingested under its own name")
                        )
                    else:
                        stack.append((path, above | {target}))
                    continue
                if target.suffix.lower() in suffixes or path.suffix.lower() in suffixes:
                    files.append(SourceItem(source, path=path))
            elif entry.is_dir(follow_symlinks=False):
                stack.append((path, above | {path.resolve()}))
            elif entry.is_file(follow_symlinks=False) and path.suffix.lower() in suffixes:
                files.append(SourceItem(source, path=path))
    found.items += sorted(files, key=lambda item: item.source)


@dataclass
class Prepared:
    """One source read, parsed and chunked: everything its rows and events need but vectors.
    The chunks are spans over ``parsed.markdown`` (the plan holds that same string, so a
    pickled ``Prepared``, as a Ray worker sends it back, carries the text once); their texts
    are made a batch at a time where they are written."""

    source: str
    path: str | None
    doc_id: str
    doc_key: str
    content_hash: str
    parsed: ParsedDocument
    plan: ChunkPlan
    chunk_ids: list[str]


@dataclass(frozen=True)
class Failed:
    """A source that could not be prepared, with the reason the report gives."""

    reason: str


# What preparing one source gives; None: unchanged since the last ingest, nothing to write.
Outcome = Prepared | Failed | None


@dataclass(frozen=True)
class PrepareSpec:
    """What preparing a source needs of the project. Plain values, so an engine can ship it
    to other processes or machines (the Ray engine pickles it to its workers)."""

    config: PipelineConfig
    options: IngestOptions
    chunking: dict[str, Any]

    @classmethod
    def of(cls, ctx: Context) -> PrepareSpec:
        return cls(ctx.config, ctx.ingest_options, _chunking_signature(ctx))


def prepare_source(
    spec: PrepareSpec,
    item: SourceItem,
    known_doc_key: str | None,
    find_loader: Callable[[str | Path], Loader | None] = loader_for,
) -> Outcome:
    """Read, parse and chunk one source; touches no store. ``known_doc_key`` is the doc_key
    the index holds for the source (None: not indexed): the same key means unchanged."""
    try:
        content_hash = item.sha256()
        doc_key = sha256_hex(stable_json([item.source, content_hash, spec.chunking]))[:32]
        if doc_key == known_doc_key:
            return None
        parsed = _parse(spec.options, item, content_hash, find_loader)
        config = spec.config
        plan = plan_chunks(
            parsed.markdown,
            parsed.blocks or None,
            max_size=config.chunk_size,
            overlap=config.chunk_overlap,
            strategy=config.chunk_strategy,
        )
        if not len(plan):
            raise IngestError(f"{item.source}: no text to index (the document is empty after parsing)")
        if plan.markdown is not parsed.markdown:  # a strategy that reads a spooled text whole: one text, not two
            parsed = dataclasses.replace(parsed, markdown=plan.markdown)
        path = str(item.path.resolve()) if item.path is not None else None
        return Prepared(
            item.source,
            path,
            doc_id_for(item.source),
            doc_key,
            content_hash,
            parsed,
            plan,
            _chunk_ids(item.source, plan),
        )
    except IngestError as exc:
        return Failed(str(exc).removeprefix(f"{item.source}: "))
    except Exception as exc:  # a loader bug must not sink the batch either
        return Failed(f"{type(exc).__name__}: {exc}")


class Engine(Protocol):
    """Where an ingest's per-document work runs: parsing and chunking (``prepare``, one
    outcome per item, in order) and embedding the texts the cache misses (``embed_batches``,
    one array per batch, in order; None: in this process). The diff against the table, the
    events and the one commit stay in ``_ingest``, the same for every engine.

    ``embed_scale``: how many write batches' texts one ``embed_batches`` call gets (1 here;
    a cluster engine takes several, since each call is a job with its own start-up cost)."""

    @property
    def embed_batches(self) -> BatchEmbed | None: ...

    @property
    def embed_scale(self) -> int: ...

    def prepare(
        self, ctx: Context, spec: PrepareSpec, items: list[SourceItem], known: list[str | None]
    ) -> list[Outcome]: ...


class LocalEngine:
    """This process, one document after another (the default)."""

    embed_batches: BatchEmbed | None = None
    embed_scale = 1

    def prepare(
        self, ctx: Context, spec: PrepareSpec, items: list[SourceItem], known: list[str | None]
    ) -> list[Outcome]:
        progress = _progress(len(items), "parse", ctx)
        outcomes = []
        for item, doc_key in zip(items, known, strict=True):
            outcomes.append(prepare_source(spec, item, doc_key))
            if progress is not None:
                progress.update(1)
        if progress is not None:
            progress.close()
        return outcomes


def _engine(ctx: Context, name: str, ray_address: str | None) -> Engine:
    if name == "ray":
        from ragtt.ingest.ray_engine import RayEngine

        return RayEngine.connect(ray_address, progress=ctx.progress)
    if name != "local":
        raise ConfigError(f"engine must be one of {', '.join(map(repr, INGEST_ENGINES))}; got {name!r}")
    if ray_address is not None:
        raise ConfigError("ray_address (--ray-address) is for engine='ray' (--engine ray)")
    return LocalEngine()


def run_ingest(
    ctx: Context,
    items: list[SourceItem],
    failed: list[tuple[str, str]],
    *,
    prune: bool = False,
    keep: frozenset[str] = frozenset(),
    engine: str = "local",
    ray_address: str | None = None,
    batch: BatchLimits | None = None,
    remove: frozenset[str] = frozenset(),
    removal_reason: str = "absent from the ingested folder",
    as_of: datetime | None = None,
) -> IngestReport:
    """Ingest ``items`` in one table version; with ``prune``, indexed sources absent from
    ``items`` (and not in ``keep``) are removed in that same version (a folder ingest mirrors
    the folder). ``remove`` names sources that leave the index in that same version too
    (a feed's deletions), whatever ``prune`` says; ``removal_reason`` is what their events
    say. The write follows the crash protocol (ragtt.commit). ``engine="ray"`` runs parsing,
    chunking and embedding on a Ray cluster (ragtt.ingest.ray_engine); the commit is the
    same. ``batch`` bounds the chunks embedded and written at a time (default
    ``DEFAULT_BATCH``, read at call time). ``as_of`` (timezone-aware) is the time the content
    is of, recorded in the ``ingest.completed`` event (``EventLog.as_of_times``)."""
    from ragtt.index.maintenance import maintenance_due, optimize
    from ragtt.index.snapshots import maybe_auto_snapshot

    if as_of is not None and as_of.tzinfo is None:
        raise ConfigError(f"as_of must be a timezone-aware datetime (e.g. UTC); got naive {as_of}")
    started = time.perf_counter()
    runner = _engine(ctx, engine, ray_address)  # before the write lock: connecting may take seconds
    with writing(ctx, "ingest") as write:
        removal = _Removal(prune, keep, remove, removal_reason)
        report = _ingest(ctx, write, items, failed, removal, runner, batch or DEFAULT_BATCH, as_of)
    warnings = list(report.warnings)
    version_after = report.index_version_after
    if maintenance_due(ctx, report.chunks_added + report.chunks_kept):
        made, problems = optimize(ctx, strict=False)
        version_after = made[-1] if made else version_after
        warnings += [("(maintenance)", p) for p in problems]
    if ctx.config.auto_snapshot_every:
        maybe_auto_snapshot(ctx)
    return dataclasses.replace(
        report, index_version_after=version_after, warnings=warnings, elapsed_s=round(time.perf_counter() - started, 4)
    )


def _ingest(
    ctx: Context,
    write: Write,
    items: list[SourceItem],
    failed: list[tuple[str, str]],
    removal: _Removal,
    engine: Engine,
    batch: BatchLimits,
    as_of: datetime | None,
) -> IngestReport:
    version_before = write.base
    current = _current_state(ctx, version_before)
    added: list[str] = []
    updated: list[str] = []
    unchanged: list[str] = []
    warnings: list[tuple[str, str]] = []
    prepared: list[Prepared] = []
    known = [current[item.source]["doc_key"] if item.source in current else None for item in items]
    for item, outcome in zip(items, engine.prepare(ctx, PrepareSpec.of(ctx), items, known), strict=True):
        if outcome is None:
            unchanged.append(item.source)
        elif isinstance(outcome, Failed):
            failed.append((item.source, outcome.reason))
        else:
            prepared.append(outcome)
            warnings += [(item.source, w) for w in outcome.parsed.warnings]
            (updated if item.source in current else added).append(item.source)

    listed = {item.source for item in items} | removal.keep
    prune = removal.prune
    if prune and failed:  # an input that could not be read must not empty the index of what it held
        warnings.append(("(prune)", f"nothing was pruned: {len(failed)} input(s) failed"))
        prune = False
    pruned = sorted(s for s in current if s not in listed and (prune or s in removal.remove))
    counts = {"added": 0, "removed": 0, "kept": 0, "computed": 0, "reused": 0}
    version_after = version_before
    if prepared or pruned:
        version_after = _write(ctx, write, prepared, (pruned, removal.reason), current, counts, engine, batch, as_of)
    return IngestReport(
        documents_added=added,
        documents_updated=updated,
        documents_unchanged=unchanged,
        failed=failed,
        chunks_added=counts["added"],
        chunks_removed=counts["removed"],
        chunks_kept=counts["kept"],
        embeddings_computed=counts["computed"],
        embeddings_reused=counts["reused"],
        index_version_before=version_before,
        index_version_after=version_after,
        elapsed_s=0.0,
        documents_removed=pruned,
        warnings=warnings,
    )


@dataclass(frozen=True)
class _Removal:
    """Which indexed sources an ingest removes: with ``prune``, those absent from its items
    and ``keep``; else those in ``remove`` (and not among its items)."""

    prune: bool
    keep: frozenset[str]
    remove: frozenset[str]
    reason: str


def _parse(
    options: IngestOptions, item: SourceItem, content_hash: str, find_loader: Callable[[str | Path], Loader | None]
) -> ParsedDocument:
    """The document of ``item``, whose bytes hash to ``content_hash`` (read again here: a file
    that changed since it was hashed fails, so a stored text always matches its hash)."""
    # ingest_texts: "report.pdf" there is text a framework already extracted, never PDF bytes
    text_named_pdf = item.path is None and Path(item.source).suffix.lower() == ".pdf"
    loader = None if text_named_pdf else find_loader(item.path if item.path is not None else item.source)
    if loader is None:
        if item.path is not None:
            raise IngestError(
                f"{item.source}: unsupported file type {item.path.suffix or '(none)'!r}; "
                f"supported: {', '.join(supported_suffixes())}"
            )
        loader = find_loader(IN_MEMORY)  # ingest_texts: any name is text
        assert loader is not None
    stream = streamed(loader) if item.path is not None else None
    if stream is None:
        data = item.read()
        if item.path is not None and sha256_hex(data) != content_hash:
            raise IngestError(f"{item.source}: the file changed while it was read; ingest it again")
        return loader(data, item.source, options)
    assert item.path is not None
    try:
        with item.path.open("rb") as fh:
            reader = _HashingReader(fh)
            parsed = stream(reader, item.source, options)
    except OSError as exc:
        raise IngestError(f"cannot read {item.path}: {exc.strerror or exc}") from None
    if reader.hexdigest() != content_hash:
        raise IngestError(f"{item.source}: the file changed while it was read; ingest it again")
    return parsed


class _HashingReader:
    """A file read through by a streaming loader, hashed on the way (from its start again
    after a ``seek(0)``: a loader may read a file twice)."""

    def __init__(self, fh: BinaryIO) -> None:
        self._fh = fh
        self._digest = hashlib.sha256()

    def read(self, size: int = -1, /) -> bytes:
        data = self._fh.read(size)
        self._digest.update(data)
        return data

    def seek(self, offset: int, whence: int = 0, /) -> int:
        if (offset, whence) != (0, 0):
            raise ValueError("a hashing reader seeks back to the start only")
        self._digest = hashlib.sha256()
        return self._fh.seek(0)

    def hexdigest(self) -> str:
        return self._digest.hexdigest()


def _chunking_signature(ctx: Context) -> dict[str, Any]:
    c = ctx.config
    # How a source is read changes its text, so the options are part of "unchanged";
    # vision_kwargs (api keys, mock responses) are not: repr keeps them out of JSON's way.
    options = dataclasses.asdict(ctx.ingest_options)
    options["vision_kwargs"] = sorted(options.get("vision_kwargs", {}))
    return {
        "strategy": c.chunk_strategy,
        "size": c.chunk_size,
        "overlap": c.chunk_overlap,
        "options": json.dumps(options, sort_keys=True, default=repr),
    }


def _chunk_ids(source: str, plan: ChunkPlan) -> list[str]:
    # Repeats are counted by their first id, not their text, so no chunk text outlives its step.
    seen: dict[str, int] = {}
    ids = []
    for start in range(0, len(plan), _ID_STEP):
        for chunk in plan.chunks(start, start + _ID_STEP):
            first = chunk_id_for(source, chunk.text, 0)
            occurrence = seen.get(first, 0)
            seen[first] = occurrence + 1
            ids.append(first if occurrence == 0 else chunk_id_for(source, chunk.text, occurrence))
    return ids


def _current_state(ctx: Context, version: int) -> dict[str, dict[str, Any]]:
    rows = ctx.table.scan(version, ["source", "doc_key", "chunk_id"]).to_pylist()
    state: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry = state.setdefault(row["source"], {"doc_key": row["doc_key"], "chunk_ids": set()})
        entry["chunk_ids"].add(row["chunk_id"])
    return state


def _write(
    ctx: Context,
    write: Write,
    prepared: list[Prepared],
    removal: tuple[list[str], str],
    current: dict[str, dict[str, Any]],
    counts: dict[str, int],
    engine: Engine,
    batch: BatchLimits,
    as_of: datetime | None,
) -> int:
    import pyarrow as pa

    pruned, reason = removal
    from ragtt.index.table import chunk_schema

    # Pass 1, before the intent (as ever): every vector into the cache, a batch at a time,
    # so an embedder error fails the ingest before anything is staged and the counts are known.
    progress = _progress(len(prepared), "embed", ctx, total=sum(len(p.plan) for p in prepared))
    scale = max(1, engine.embed_scale)
    for slices in _batches(prepared, BatchLimits(batch.chunks * scale, batch.chars * scale)):
        _, computed, reused = ctx.cache.embed(
            ctx.embedder, _embed_texts(slices), progress=progress, compute=engine.embed_batches
        )
        counts["computed"] += computed
        counts["reused"] += reused
    if progress is not None:
        progress.close()
    computed, reused = counts["computed"], counts["reused"]
    ingest_id = time_ordered_id()
    schema = chunk_schema(ctx.embedder.dim)
    # Pass 2, the table commit: LanceDB pulls these batches (vectors read back from the cache)
    # and commits once, after the last; a kill before then leaves the table at its base.
    rows = pa.RecordBatchReader.from_batches(
        schema, (_record_batch(ctx, slices, ingest_id, schema) for slices in _batches(prepared, batch))
    )

    now = utc_now()
    events = []
    for p in prepared:
        old = current.get(p.source, {}).get("chunk_ids", set())
        new = set(p.chunk_ids)
        counts["added"] += len(new - old)
        counts["removed"] += len(old - new)
        counts["kept"] += len(new & old)
        payload: ev.DocumentIngested = {
            "doc_id": p.doc_id,
            "source": p.source,
            "path": p.path,
            "content_hash": p.content_hash,
            "doc_key": p.doc_key,
            "text_sha256": sha256_hex(p.parsed.markdown),
            "status": "updated" if p.source in current else "added",
            "chunk_ids_added": sorted(new - old),
            "chunk_ids_removed": sorted(old - new),
            "chunk_count": len(new),
            "routes": [r.to_dict() for r in p.parsed.routes],
            "ingest_id": ingest_id,
        }
        events.append(Event(ev.DOCUMENT_INGESTED, dict(payload), doc_id=p.doc_id))
    for source in pruned:
        removed = sorted(current[source]["chunk_ids"])
        counts["removed"] += len(removed)
        events.append(
            Event(
                ev.DOCUMENT_REMOVED,
                {
                    "doc_id": doc_id_for(source),
                    "source": source,
                    "chunk_ids_removed": removed,
                    "reason": reason,
                    "ingest_id": ingest_id,
                },
                doc_id=doc_id_for(source),
            )
        )
    completed: ev.IngestCompleted = {
        "ingest_id": ingest_id,
        "documents": [p.source for p in prepared],
        "removed": pruned,
        "chunks_added": counts["added"],
        "chunks_removed": counts["removed"],
        "chunks_kept": counts["kept"],
        "embeddings_computed": computed,
        "embeddings_reused": reused,
        "embedder_id": ctx.embedder.model_id,
        "config_id": ctx.config.config_id,
    }
    if as_of is not None:
        completed["as_of"] = format_ts(as_of)
    events.append(Event(ev.INGEST_COMPLETED, dict(completed)))
    documents = [
        DocumentRow(
            p.doc_key,
            p.doc_id,
            p.source,
            p.content_hash,
            p.parsed.markdown,
            stable_json([r.to_dict() for r in p.parsed.routes]),
            format_ts(now),
        )
        for p in prepared
    ]
    write.stage(events, documents=documents)
    if pruned or any(p.source in current for p in prepared):
        ctx.table.replace_sources(rows, [p.source for p in prepared] + pruned)
    else:  # only new sources: a plain append, which LanceDB streams to disk as it reads
        ctx.table.add_rows(rows)
    return write.commit()[-1]


def _batches(prepared: list[Prepared], limits: BatchLimits) -> Iterator[list[tuple[Prepared, int, int]]]:
    """The chunks of ``prepared`` in order, as batches of (document, first, stop) slices."""
    out: list[tuple[Prepared, int, int]] = []
    n = chars = 0
    for p in prepared:
        start = 0
        for i in range(len(p.plan)):
            size = p.plan.embed_size(i)
            if n and (n >= limits.chunks or chars + size > limits.chars):
                if i > start:
                    out.append((p, start, i))
                    start = i
                yield out
                out, n, chars = [], 0, 0
            n += 1
            chars += size
        if len(p.plan) > start:
            out.append((p, start, len(p.plan)))
    if out:
        yield out


def _embed_texts(slices: list[tuple[Prepared, int, int]]) -> list[str]:
    # a table row is embedded with its header
    return [c.embed_text for p, start, stop in slices for c in p.plan.chunks(start, stop)]


def _record_batch(
    ctx: Context, slices: list[tuple[Prepared, int, int]], ingest_id: str, schema: pa.Schema
) -> pa.RecordBatch:
    import pyarrow as pa

    rows: dict[str, list[Any]] = {name: [] for name in schema.names if name != "vector"}
    texts = []
    for p, start, stop in slices:
        for chunk, chunk_id in zip(p.plan.chunks(start, stop), p.chunk_ids[start:stop], strict=True):
            rows["chunk_id"].append(chunk_id)
            rows["doc_id"].append(p.doc_id)
            rows["doc_key"].append(p.doc_key)
            rows["source"].append(p.source)
            rows["content_hash"].append(p.content_hash)
            rows["text"].append(chunk.text)
            rows["char_start"].append(chunk.char_start)
            rows["char_end"].append(chunk.char_end)
            rows["regions"].append([r._asdict() for r in chunk.regions])
            rows["ingest_id"].append(ingest_id)
            texts.append(chunk.embed_text)
    vectors, _, _ = ctx.cache.embed(ctx.embedder, texts)  # all cached by pass 1
    flat = pa.array(vectors.reshape(-1), type=pa.float32())
    columns: dict[str, Any] = {**rows, "vector": pa.FixedSizeListArray.from_arrays(flat, vectors.shape[1])}
    return pa.RecordBatch.from_pydict(columns, schema=schema)


def _progress(n_docs: int, stage: str, ctx: Context, total: int | None = None) -> Any:
    """A bar at once for real work (many documents, more than 20 chunks to embed); otherwise
    one that appears only if the stage runs longer than 2 s, so quick ingests stay quiet."""
    if not ctx.progress or not n_docs:
        return None
    from tqdm.auto import tqdm

    big = n_docs >= _PROGRESS_MIN_DOCS or (total or 0) > _PROGRESS_MIN_CHUNKS
    unit = "doc" if total is None else "chunk"
    return tqdm(
        total=total if total is not None else n_docs,
        desc=f"ragtt {stage}",
        unit=unit,
        leave=False,
        delay=0 if big else _PROGRESS_DELAY_S,
    )
