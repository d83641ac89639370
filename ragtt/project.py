"""``Project``: one folder = ``ragtt.json`` + ``events.db`` + ``lancedb/`` (+ ``embeddings.db``,
``assertions.db``), and the public facade over them.

Every method hands the project's ``Context`` (its stores and settings) to a function of
``ingest/``, ``index/`` or ``timetravel/``; this module holds no store logic of its own.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from ragtt._hashing import time_ordered_id
from ragtt.config import PipelineConfig
from ragtt.context import At, Context
from ragtt.damage import guarded
from ragtt.errors import ConfigError, NotFoundError
from ragtt.results import Document, IngestReport, QueryResult, ReplayResult, RetrievedChunk, Snapshot, Snapshots
from ragtt.values import check_text, printable, unicode_problem

if TYPE_CHECKING:
    import polars as pl
    from numpy.typing import NDArray

    from ragtt._background import Background
    from ragtt.backup import BackupReport
    from ragtt.evaluation.dataset import EvalDataset
    from ragtt.evaluation.judge import LiteLLMJudge
    from ragtt.evaluation.matrix import HistoryMatrix
    from ragtt.events.base import EventLog
    from ragtt.feeds.records import SourceKey
    from ragtt.feeds.stream import StreamReport
    from ragtt.feeds.watch import WatchBatch, WatchHandle
    from ragtt.generate import Generator
    from ragtt.index.embedders import Embedder
    from ragtt.index.retrieve import RetrievalPlan
    from ragtt.index.schedule import SnapshotSchedule
    from ragtt.ingest.types import IngestOptions
    from ragtt.marker import Marker
    from ragtt.restore import RestoreReport
    from ragtt.retention import PruneReport
    from ragtt.timetravel.bisect import BisectReport
    from ragtt.timetravel.diff import DiffReport
    from ragtt.timetravel.drift import DriftReport
    from ragtt.timetravel.lineage import LineageReport
    from ragtt.timetravel.regression import Regression
    from ragtt.timetravel.run import LoggedRun, Run
    from ragtt.timetravel.snapshot_diff import SnapshotDiff
    from ragtt.traces.live import LiveTraces
    from ragtt.verify import VerifyReport

__all__ = ["At", "Project"]

_Run = TypeVar("_Run", bound=QueryResult)
_Handle = TypeVar("_Handle", bound="Background")


@guarded(lambda self: self._ctx)  # the context that damage is named against
class Project:
    """A versioned RAG index with its full history. Open with ``Project.open(path)``."""

    def __init__(self, ctx: Context, marker: Marker) -> None:
        self._ctx = ctx
        self._marker = marker
        self._assertions: Any = None
        self._stores_kwargs: dict[str, Any] = {}
        self._live: LiveTraces | None = None
        self._background: list[Background] = []  # watches and snapshot schedules: close() stops them
        self._closed = False

    @classmethod
    def open(
        cls,
        path: str | Path,
        config: PipelineConfig | None = None,
        embedder: Embedder | None = None,
        *,
        generator: Generator | None = None,
        ingest_options: IngestOptions | None = None,
        progress: bool = True,
        embedding_cache: str | Path | None = None,
        create: bool = True,
        events_uri: str | None = None,
        index_uri: str | None = None,
        storage_options: dict[str, str] | None = None,
        index_cache: str | Path | bool | None = None,
        index_cache_bytes: int | None = None,
    ) -> Project:
        """Open the project in ``path``; with ``create`` (the default) make one if the folder holds none.

        ``config`` None reuses the project's last config (or the defaults); ``embedder`` None
        rebuilds the one the project was built with (or the config's default model).
        ``embedding_cache`` points several projects at one cache file (default: the project's own).
        ``events_uri`` (``postgresql://...``, or ``$RAGTT_EVENTS_URI``) keeps the event log in a
        Postgres database that many processes and machines share; None keeps it in the
        folder's ``events.db``. ``index_uri`` (``s3://bucket/prefix``, ``gs://``, ``az://``, or
        ``$RAGTT_INDEX_URI``) keeps the chunk table on object storage, with ``storage_options``
        (endpoint, region, credentials) merged by LanceDB with the standard environment
        variables; a project made with one remembers it. Such an index's versions are read from
        a local mirror of their (immutable) files: ``index_cache`` is its folder (None:
        ``$RAGTT_INDEX_CACHE``, else the user cache folder; False, or ``$RAGTT_INDEX_CACHE=off``:
        none), ``index_cache_bytes`` its bound (None: ``$RAGTT_INDEX_CACHE_BYTES``, else 4 GiB;
        least recently used files go first). ``create=False`` raises
        NotAProjectError for a folder that is not a project. A store the project has that is
        missing or damaged raises ProjectDamagedError, never a new, empty store.
        """
        from ragtt.generate import ExtractiveGenerator, LiteLLMGenerator
        from ragtt.index.rerank import reranker_version
        from ragtt.ingest.types import IngestOptions
        from ragtt.opening import IndexLocation, open_stores

        if config is not None and not isinstance(config, PipelineConfig):
            raise ConfigError(f"config must be a ragtt.PipelineConfig; got {type(config).__name__}")
        stores = open_stores(
            Path(path).expanduser(),
            config,
            embedder,
            create=create,
            embedding_cache=Path(embedding_cache) if embedding_cache is not None else None,
            events_uri=events_uri,
            index=IndexLocation.choose(index_uri, storage_options, index_cache, index_cache_bytes),
        )
        try:
            reranker_version(stores.config.reranker)  # a cross-encoder folder that is not there fails now, by name
            if generator is None:
                generator = LiteLLMGenerator(stores.config.model) if stores.config.model else ExtractiveGenerator()
            ctx = Context(
                stores.path,
                stores.config,
                stores.embedder,
                generator,
                ingest_options or IngestOptions(),
                progress,
                stores.log,
                stores.table,
                stores.cache,
            )
            proj = cls(ctx, stores.marker)
            # How to open this project again (a schedule's thread does, on its own connections).
            proj._stores_kwargs = {
                "events_uri": events_uri,
                "index_uri": index_uri,
                "storage_options": storage_options,
                "index_cache": index_cache,
                "index_cache_bytes": index_cache_bytes,
                "embedding_cache": ctx.cache.path,
            }
            return proj
        except BaseException:
            stores.close()
            raise

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the watches and snapshot schedules started from this project (each after the
        step in progress), then close its stores."""
        while self._background:
            self._background.pop().stop()
        if self._live is not None:
            self._live.stop()
            self._live = None
        if self._assertions is not None:
            self._assertions.close()
            self._assertions = None
        self._ctx.cache.close()
        self._ctx.log.close()
        self._closed = True

    @property
    def closed(self) -> bool:
        """True once ``close()`` (or the end of its ``with`` block) closed the project: reopen it
        (``Project.open``) to read it again."""
        return self._closed

    def __enter__(self) -> Project:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"Project({str(self.path)!r}, v{self.version}, embedder={self.embedder.model_id}, "
            f"config={self.config.config_id})"
        )

    @property
    def path(self) -> Path:
        return self._ctx.path

    @property
    def project_id(self) -> str:
        """The id the project's marker and log carry (a federation records its members' ids)."""
        return self._marker.project_id

    @property
    def config(self) -> PipelineConfig:
        return self._ctx.config

    @config.setter
    def config(self, config: PipelineConfig) -> None:
        """Switch the settings later calls use (a changed chunking re-chunks on the next ingest)."""
        if not isinstance(config, PipelineConfig):
            raise ConfigError(f"config must be a ragtt.PipelineConfig; got {type(config).__name__}")
        if config.table_name != self._ctx.config.table_name:
            raise ConfigError("table_name cannot change on an open project; reopen it with the new config")
        self._ctx.config = config

    @property
    def embedder(self) -> Embedder:
        return self._ctx.embedder

    @property
    def ingest_options(self) -> IngestOptions:
        return self._ctx.ingest_options

    @property
    def progress(self) -> bool:
        return self._ctx.progress

    @progress.setter
    def progress(self, value: bool) -> None:
        self._ctx.progress = bool(value)

    @property
    def events(self) -> EventLog:
        """The event log (append-only): ``proj.events.frame()`` is the log as a Polars frame."""
        return self._ctx.log

    @property
    def assertions(self) -> Any:
        """The project's temporal assertion store (``assertions.db``), opened on first use."""
        if self._assertions is None:
            from ragtt.opening import open_assertions

            self._assertions, self._marker = open_assertions(self._ctx, self._marker)
        return self._assertions

    # -- ingest ------------------------------------------------------------------------------

    def ingest(
        self,
        paths: Iterable[str | Path] | str | Path,
        *,
        prune: bool | None = None,
        follow_symlinks: bool = False,
        engine: str = "local",
        ray_address: str | None = None,
        as_of: datetime | None = None,
    ) -> IngestReport:
        """Ingest files and folders in one index version; a folder's files are named by their
        path inside it.

        ``as_of`` (a timezone-aware datetime) is the time the content is of, such as a
        release date: recorded in the log, it places the version on the Timeline's time axis
        and ``resolve_version(datetime)`` (``replay --as-of``) finds the version by it.

        A folder is a corpus: when only folders are given, the index is made to mirror them,
        so a file deleted or renamed since the last ingest leaves the index (``prune=None``,
        the default). ``prune=False`` only adds and updates; ``prune=True`` always mirrors.
        Nothing is pruned when any input could not be listed or read. Symlinks leading
        outside a folder are skipped (and reported) unless ``follow_symlinks``.

        ``engine="ray"`` fans parsing, chunking and embedding out over Ray Data (``pip install
        'ragtt[ray]'``): on the Ray this process is connected to, else on ``ray_address`` (or
        ``$RAY_ADDRESS``, or a new local one). The workers must see the paths. The result is
        the same version, chunks, vectors and events as a local ingest.
        """
        import dataclasses

        from ragtt.ingest.pipeline import collect_paths, run_ingest

        listed = [paths] if isinstance(paths, str | Path) else list(paths)
        found = collect_paths(listed, follow_symlinks=follow_symlinks)
        if prune is None:
            prune = bool(listed) and all(Path(p).expanduser().is_dir() for p in listed)
        report = run_ingest(
            self._ctx,
            found.items,
            found.failed,
            prune=prune,
            keep=frozenset(s for s, _ in found.skipped),
            engine=engine,
            ray_address=ray_address,
            as_of=as_of,
        )
        return dataclasses.replace(report, skipped=found.skipped) if found.skipped else report

    def ingest_texts(self, texts: dict[str, str], *, as_of: datetime | None = None) -> IngestReport:
        """Ingest in-memory sources, ``{source name: text}``, in one index version. The name is a
        name: ``{"report.pdf": text}`` is text already extracted from that PDF. ``as_of``: as
        for ``ingest``."""
        from ragtt.ingest.pipeline import SourceItem, run_ingest

        if not isinstance(texts, dict):
            raise TypeError(f"ingest_texts takes a dict of source name -> text; got {type(texts).__name__}")
        items, failed = [], []
        for source, text in texts.items():
            if not isinstance(source, str) or not source or not isinstance(text, str):
                failed.append((str(source), "source must be a non-empty str and its text a str"))
            elif (problem := unicode_problem(source)) or (problem := unicode_problem(text)):
                what = "the source name" if unicode_problem(source) else "its text"
                failed.append((printable(source), f"{what} {problem}"))
            else:
                items.append(SourceItem(source, data=text.encode("utf-8")))
        return run_ingest(self._ctx, items, failed, as_of=as_of)

    def sync(
        self,
        docs: Iterable[Any],
        *,
        cleanup: Literal["incremental", "full", "scoped_full"] | None = "incremental",
        source_key: SourceKey = None,
        allow_empty: bool = False,
    ) -> IngestReport:
        """Sync a feed into ONE index version, with LangChain's indexing semantics.

        ``docs``: ``(source, text)`` pairs, LangChain ``Document``s or LlamaIndex documents
        (pieces sharing a source are joined in order; a ``None`` text removes the source).
        ``cleanup="full"`` removes indexed sources absent from ``docs``, in that same version;
        an empty ``docs`` then deletes nothing unless ``allow_empty``. ``"incremental"`` and
        ``"scoped_full"`` change only the given sources and need every document to name one;
        None changes only the given sources too. ``source_key``: the metadata key naming a
        document's source, or a function of the document (None: the framework's own naming).
        A document that fails keeps its indexed version and is listed in ``report.failed``.
        """
        from ragtt.feeds.sync import sync

        return sync(self._ctx, docs, cleanup, source_key, allow_empty)

    def ingest_stream(
        self,
        feed: Iterable[Any],
        *,
        batch_size: int = 256,
        max_latency: str | float | timedelta = "5s",
        source_key: SourceKey = None,
        on_batch: Callable[[IngestReport], None] | None = None,
    ) -> StreamReport:
        """Ingest an unbounded feed, one index version per batch of ``batch_size`` records or
        ``max_latency`` after a batch's first record, whichever is first.

        Records are what ``sync`` takes; each is its source's whole current text (the latest
        in a batch wins) and a ``None`` text removes the source. Memory is bounded by the
        batch. ``on_batch`` gets each batch's IngestReport as it is written.
        """
        from ragtt.feeds.stream import ingest_stream

        return ingest_stream(
            self._ctx, feed, batch_size=batch_size, max_latency=max_latency, source_key=source_key, on_batch=on_batch
        )

    def watch(
        self,
        path: str | Path,
        *,
        debounce: str | float | timedelta = "1.6s",
        snapshot_every: str | int | timedelta | None = None,
        follow_symlinks: bool = False,
        force_polling: bool = False,
        on_batch: Callable[[WatchBatch], None] | None = None,
    ) -> WatchHandle:
        """Keep the index mirroring the folder ``path`` as it changes, in a background thread.

        First catches up (the folder mirrored as ``ingest`` does); then each settled batch of
        changes (grouped until they pause, for at most ``debounce``) is ONE index version.
        Editor leftovers, hidden files (``.git``) and the gitignore patterns of the folder's
        ``.ragttignore`` are ignored; a file still being written waits for the next batch.
        ``snapshot_every``: ``"1h"`` (a snapshot when an hour passed since the last) or N
        (every N versions). ``on_batch`` gets each ``WatchBatch`` (``batch.line()`` is the one
        line the CLI prints). The handle's ``stop()`` ends the watch between batches; so does
        ``close()``. A batch that fails is reported (``batch.error``) and tried again, with a
        pause that grows while it keeps failing; the watch goes on.
        """
        from ragtt.feeds.watch import settings, start_watch, watch_folder, watched_folder

        chosen = settings(debounce, snapshot_every, follow_symlinks, force_polling)
        folder = watched_folder(path)
        ctx = self._ctx
        kwargs = self._stores_kwargs

        def run(emit: Callable[[WatchBatch], None], stop: Any) -> None:
            mine: Project = Project.open(ctx.path, ctx.config, ctx.embedder, progress=False, create=False, **kwargs)
            with mine:
                watch_folder(mine._ctx, folder, chosen, emit, stop)

        return self._started(start_watch(folder, run, on_batch))

    def _started(self, handle: _Handle) -> _Handle:
        self._background = [h for h in self._background if h.running]
        self._background.append(handle)
        return handle

    def remove(self, source: str) -> int:
        """Remove a source's chunks (one new version); returns that version."""
        from ragtt.ingest.remove import remove_source

        return remove_source(self._ctx, check_text("the source", source))

    # -- query, replay, diff -----------------------------------------------------------------

    def plan(self, *, top_k: int | None = None, mode: str | None = None) -> RetrievalPlan:
        """The retrieval plan a live query would run now."""
        return self._ctx.plan(top_k=top_k, mode=mode)

    def query(
        self, text: str, *, top_k: int | None = None, mode: str | None = None, generate: bool = True
    ) -> QueryResult:
        """Retrieve (and answer) at the latest index version; every step is logged."""
        from ragtt.timetravel.run import execute, record

        if not isinstance(text, str):
            raise TypeError(f"query text must be a str; got {type(text).__name__}")
        query_id = time_ordered_id()
        ctx = self._ctx
        ctx.check_embedder()
        run = execute(ctx, text, ctx.plan(top_k=top_k, mode=mode), ctx.version, generate=generate)
        record(ctx, run, query_id, prefix="", config_id=ctx.config.config_id, extra={})
        gen = run.generation
        return self._traced(
            QueryResult(
                query_id,
                text,
                run.index_version,
                ctx.config.config_id,
                run.chunks,
                gen.answer if gen else None,
                gen.model if gen else None,
                run.latency_ms,
            )
        )

    def run(self, query_id: str) -> LoggedRun:
        """A logged query or replay as it was recorded: text, version, plan, chunks, answer."""
        from ragtt.timetravel.run import load_run

        return load_run(self._ctx, query_id)

    def runs(self, query_ids: Sequence[str]) -> dict[str, LoggedRun]:
        """Many logged runs by their full ids, read together (an id with no run logged is left out)."""
        from ragtt.timetravel.run import load_runs

        return load_runs(self._ctx, query_ids)

    def plan_of(self, query_id: str) -> RetrievalPlan:
        """The exact retrieval plan a logged query or replay ran with."""
        return self.run(query_id).plan

    def retrieve_at(self, text: str, version: At, plan: RetrievalPlan | None = None) -> list[RetrievedChunk]:
        """Retrieval only, at any version, through the same path as queries and replays, and
        NOT logged: for views and analyses that sweep many versions (replays are logged)."""
        return self.retrieve_run(text, version, plan).chunks

    def retrieve_many_at(
        self,
        texts: Sequence[str],
        version: At,
        plan: RetrievalPlan | None = None,
        *,
        logged: Sequence[LoggedRun | None] = (),
    ) -> list[list[RetrievedChunk]]:
        """``retrieve_at`` of each text, searched together; NOT logged. ``logged``: for each text
        (or fewer), a logged run that stands for its search when it is that very search (that
        text, that version, the plan as this search would record it): read back, not searched."""
        from ragtt.timetravel.run import retrieve_many

        ctx = self._ctx
        return retrieve_many(ctx, texts, plan or ctx.plan(), ctx.resolve(version), logged)

    def retrieve_run(self, text: str, version: At, plan: RetrievalPlan | None = None) -> Run:
        """``retrieve_at`` with what a log records of it: the plan as searched (the version's ANN
        index and the engines that ranked it), the chunks and the timings; NOT logged here.
        A federation logs its members' runs in its own log."""
        from ragtt.timetravel.run import execute

        ctx = self._ctx
        return execute(ctx, text, plan or ctx.plan(), ctx.resolve(version), generate=False)

    def replay(self, query_id: str, *, generate: bool = False) -> ReplayResult:
        """Re-run a logged query against the exact version and plan it ran with."""
        from ragtt.timetravel.replay import replay

        return self._traced(replay(self._ctx, query_id, generate=generate))

    def replay_text(
        self, text: str, at: At, *, top_k: int | None = None, mode: str | None = None, generate: bool = False
    ) -> ReplayResult:
        """Run ``text`` against the index as it was ``at`` (version, snapshot label or datetime)."""
        from ragtt.timetravel.replay import replay_text

        ctx = self._ctx
        return self._traced(
            replay_text(ctx, text, ctx.resolve(at), ctx.plan(top_k=top_k, mode=mode), generate=generate, at=at)
        )

    def diff(self, left_id: str, right_id: str, *, threshold: float = 0.6, generate: bool = True) -> DiffReport:
        """What entered, left, moved and changed between two runs; a removed and an added chunk
        of one source at least ``threshold`` similar (in words or in what they are about) are
        one "changed" passage. Either id may be ``"last"``: the newest live run of the other's
        question. ``generate``: a run without an answer gets one, through a logged replay."""
        from ragtt.timetravel.diff import diff_runs

        return diff_runs(self._ctx, left_id, right_id, threshold=threshold, generate=generate)

    def last_query(self, text: str | None = None) -> str:
        """The id of the newest live query; with ``text``, of the newest live query of that question."""
        from ragtt.timetravel.run import last_query

        return last_query(self._ctx, text)

    def query_vector(self, text: str, embedder_id: str | None = None) -> NDArray[Any] | None:
        """``text``'s vector under ``embedder_id`` (default: the project's embedder, computed if
        new); under another embedder, only from the embedding cache (None if never embedded)."""
        ctx = self._ctx
        if embedder_id is None or embedder_id == ctx.embedder.model_id:
            return ctx.cache.embed(ctx.embedder, [text])[0][0]
        return ctx.cache.get(embedder_id, text)

    # -- analysis ------------------------------------------------------------------------------

    def lineage(self, left_id: str, right_id: str) -> LineageReport:
        """Why each chunk entered or left the top-k between two runs (added, re-ingested, removed,
        ranking); either id may be ``"last"``, as in ``diff``."""
        from ragtt.timetravel.lineage import lineage

        return lineage(self._ctx, left_id, right_id)

    def lineage_of(self, left: LoggedRun, right: LoggedRun) -> LineageReport:
        """``lineage`` of two runs given whole (a federation's record of this member's part of
        two federated runs), explained from this project's log."""
        from ragtt.timetravel.lineage import runs_lineage

        return runs_lineage(self._ctx, left, right)

    def snapshot_diff(self, a: At, b: At) -> SnapshotDiff:
        """Documents and chunks added, removed and changed between two versions."""
        from ragtt.timetravel.snapshot_diff import snapshot_diff

        return snapshot_diff(self._ctx, a, b)

    def drift(self, a: At, b: At, threshold: float = 0.9) -> DriftReport:
        """Embedding drift per source (centroid cosine) and per common chunk between two versions."""
        from ragtt.timetravel.drift import drift

        return drift(self._ctx, a, b, threshold, project=self)

    def embedder_at(self, at: At) -> str:
        """The model id of the embedder whose vectors the index holds at ``at``."""
        from ragtt.timetravel.drift import embedder_at

        return embedder_at(self._ctx, self.resolve_version(at))

    def reembed(self, embedder: Embedder) -> IngestReport:
        """Re-embed every current chunk with ``embedder`` (ids unchanged); the project switches to it."""
        from ragtt.index.reembed import reembed

        return reembed(self._ctx, embedder)

    def bisect(self, query: str, predicate: Any, versions: list[int] | None = None) -> BisectReport:
        """First version where ``predicate`` on ``query``'s result differs from the start.

        ``query`` is a query id (its recorded plan is used) or a text; ``predicate`` a callable
        on a ReplayResult or "chunk:<id>", "source:<name>", "answer:<substring>".
        """
        from ragtt.timetravel.bisect import bisect

        return bisect(self._ctx, query, predicate, versions)

    @property
    def regression(self) -> Regression:
        """Golden-query suites: ``capture(queries, name)`` and ``run(suite, threshold)``."""
        from ragtt.timetravel.regression import Regression

        return Regression(self._ctx)

    def evaluate(
        self,
        dataset: EvalDataset | str | Path | Any,
        *,
        at: str | list[At] | At = "snapshots",
        mode: str | None = None,
        top_k: int | None = None,
        metrics: list[str] | None = None,
        judge: str | LiteLLMJudge | None = None,
        read_only: bool = False,
    ) -> HistoryMatrix:
        """Every question of ``dataset`` at every version ``at`` names, each cell a logged run.

        ``dataset``: an ``EvalDataset``, a path (golden suite, JSONL / CSV / Parquet, BEIR
        folder), a frame or a list of dicts. ``at``: "snapshots" (every snapshot), "versions"
        (every logged version), "latest", or a list of versions, labels and datetimes. Each
        cell retrieves as a replay at that version does, with the project's plan (or ``mode``
        / ``top_k``). ``metrics`` None: every metric the dataset has references for
        (``ragtt.evaluation.metrics``); ``judge``: a litellm model that grades faithfulness
        and correctness. Evaluating again with the same dataset, plan and metrics reads the
        versions already evaluated back from the log and searches only the new ones.
        ``read_only``: only that reading back (what a reader, such as a dashboard's GET, may
        do): nothing is searched, logged or asked of a model, and a version not evaluated yet
        is a NotFoundError.
        """
        from ragtt.evaluation.run import evaluate

        matrix = evaluate(
            self._ctx, dataset, at=at, mode=mode, top_k=top_k, metrics=metrics, judge=judge, read_only=read_only
        )
        return dataclasses.replace(matrix, project=self)

    def evaluations(self) -> list[dict[str, Any]]:
        """The evaluations in the log, newest first: ``evaluation_id``, ``dataset`` (its name),
        ``source`` (its file, None if unknown), ``versions``, ``questions``, ``metrics``, ``mode``,
        ``top_k``, ``ts``."""
        from ragtt.evaluation.logged import logged_evaluations

        return logged_evaluations(self._ctx)

    def read_evaluation(self, evaluation_id: str, *, at: Sequence[int] | None = None) -> HistoryMatrix:
        """An evaluation's matrix read back from the log alone: nothing is searched or written.
        ``at``: only these versions (None: every version it was evaluated at, which grows when
        the same dataset and plan are evaluated again at more versions)."""
        from ragtt.evaluation.logged import read_evaluation

        return dataclasses.replace(read_evaluation(self._ctx, evaluation_id, at), project=self)

    def verify(self, *, deep: bool = False) -> VerifyReport:
        """Re-walk the history: SQLite's own checks, the hash chain, guards, versions, tags,
        documents, and every retained index file against the size the log recorded
        (``deep``: its SHA-256, and SQLite's full integrity_check). ``.ok``, ``.problems``."""
        from ragtt.verify import verify

        return verify(self._ctx, deep=deep)

    def backup(self, dest: str | Path) -> BackupReport:
        """A consistent copy of the project in the new folder ``dest``, taken while other
        processes may write: the databases through SQLite's online backup API, the index files
        of the versions the copied log records, each checked against its recorded hash.
        ``Project.open(dest).verify(deep=True)`` proves it; restoring is putting the folder back."""
        from ragtt.backup import backup

        return backup(self._ctx, self._marker, dest)

    def restore(
        self,
        dest: str | Path,
        *,
        to_events_uri: str | None = None,
        to_index_uri: str | None = None,
        storage_options: dict[str, str] | None = None,
    ) -> RestoreReport:
        """Put this project (a backup) back as a new project in the empty folder ``dest``: its
        log into the empty Postgres database ``to_events_uri`` (None: ``dest/events.db``), its
        index to the empty ``to_index_uri`` (``s3://bucket/prefix``, with ``storage_options``;
        None: ``dest/lancedb``). Each index file is checked against its recorded SHA-256 as it
        is written; a destination that holds anything is refused. A restore that was killed is
        finished by running it again. Open the result with the same URIs."""
        from ragtt.restore import restore

        return restore(self._ctx, self._marker, dest, to_events_uri, to_index_uri, storage_options)

    # -- snapshots and versions ----------------------------------------------------------------

    def snapshot(self, label: str) -> Snapshot:
        """Tag the latest version as ``label`` (letters, digits, '.', '-', '_')."""
        from ragtt.index.snapshots import take_snapshot

        return take_snapshot(self._ctx, label)

    def snapshot_if_changed(self, label: str) -> Snapshot | None:
        """Snapshot the latest version unless a snapshot names it already (then None).
        ``label`` may hold ``{ts}`` and ``{version}``; a taken label gets a ``-2``, ``-3`` suffix."""
        from ragtt.index.snapshots import snapshot_if_changed

        return snapshot_if_changed(self._ctx, label)

    def schedule_snapshots(self, every: timedelta, label: str = "auto-{ts}") -> SnapshotSchedule:
        """Snapshot every ``every`` while the index changed since the last snapshot, in a
        daemon thread; returns a handle with ``stop()`` (``close()`` stops it too)."""
        from ragtt.index.schedule import start_schedule

        ctx = self._ctx
        return self._started(
            start_schedule(ctx.path, {"config": ctx.config, **self._stores_kwargs}, ctx.embedder, every, label)
        )

    def snapshots(self) -> Snapshots:
        from ragtt.index.snapshots import list_snapshots

        return list_snapshots(self._ctx)

    @property
    def version(self) -> int:
        """The latest index version (the newest one whose write is fully logged)."""
        return self._ctx.version

    def resolve_version(self, at: At) -> int:
        """A version number from a version, a snapshot label, or a datetime (latest at or before)."""
        return self._ctx.resolve(at)

    def versions(self) -> pl.DataFrame:
        """Every table version with when it was committed and by which operation."""
        return self._ctx.log.versions.frame()

    def prune(
        self,
        max_snapshots: int | None = None,
        max_age: str | timedelta | None = None,
        keep: Iterable[str | int] | str | int = (),
    ) -> PruneReport:
        """Forget old runs and the index versions nothing retained needs; the log records it.

        Keeps the ``max_snapshots`` newest snapshots and the runs (queries, replays) newer
        than ``max_age`` (``"30d"``, ``"12h"`` or a timedelta) and than the oldest kept
        snapshot; ``keep`` pins query ids, snapshot labels and version numbers. Every
        retained run still replays identically; a pruned query id raises NotFoundError
        saying when and by which policy. Document events and texts are never removed.
        """
        from ragtt.retention import prune

        return prune(self._ctx, max_snapshots, max_age, keep)

    def optimize(self) -> list[int]:
        """Compact the table and index every row for full-text search (no version is deleted);
        past ``PipelineConfig.ann_min_rows`` rows, also train the ANN index if the table has none.

        Ingests call it by themselves every ``ragtt.index.maintenance.MAINTAIN_EVERY`` writes, or once
        ``MAINTAIN_ROWS`` rows wait outside the full-text index; returns the maintenance versions it added.
        """
        from ragtt.index.maintenance import optimize

        return optimize(self._ctx)[0]

    # -- inspection ----------------------------------------------------------------------------

    def chunks(self, at: At | None = None, source: str | None = None) -> pl.DataFrame:
        import polars as pl

        from ragtt.index.table import sql_string_list

        version = self.version if at is None else self.resolve_version(at)
        where = f"source IN ({sql_string_list([source])})" if source is not None else None
        cols = ["chunk_id", "doc_id", "source", "text", "char_start", "char_end", "regions"]
        frame = pl.from_arrow(self._ctx.table.scan(version, cols, where=where))
        assert isinstance(frame, pl.DataFrame)
        return frame.with_columns(pl.lit(version, dtype=pl.Int64).alias("index_version")).sort(
            ["source", "char_start", "chunk_id"]
        )

    def vectors(self, at: At | None = None) -> tuple[pl.DataFrame, NDArray[Any]]:
        """Every chunk at a version (chunk_id, source, text) and its vector, row for row, as
        (frame, float32 matrix): what projections and drift views draw."""
        import polars as pl

        version = self.version if at is None else self.resolve_version(at)
        data, matrix = self._ctx.table.vectors(version, ["chunk_id", "source", "text"])
        frame = pl.from_arrow(data)
        assert isinstance(frame, pl.DataFrame)
        return frame, matrix

    def document(self, source: str, at: At | None = None) -> Document:
        from ragtt.ingest.types import PageRoute

        version = self.version if at is None else self.resolve_version(at)
        doc_key = self._ctx.table.doc_key_of(version, source)
        if doc_key is None:
            raise NotFoundError(f"source {source!r} is not in the index at version {version}")
        row = self._ctx.log.documents.get(doc_key)
        if row is None:
            raise NotFoundError(f"the parsed text of {source!r} (document {doc_key}) is missing from events.db")
        routes = [PageRoute.from_dict(r) for r in json.loads(row.routes)]
        assert isinstance(row.text, str)  # read back whole; only a row being written may be spooled
        return Document(row.doc_id, row.source, row.content_hash, row.text, routes)

    def source_path(self, source: str) -> Path | None:
        """The file a source was last ingested from (None for in-memory sources)."""
        event = self._ctx.log.last_ingest_of(source)
        if event is None:
            raise NotFoundError(f"source {source!r} was never ingested into this project")
        path = event.payload.get("path")
        return Path(path) if path else None

    def trace(self, query_id: str) -> pl.DataFrame:
        """Every event of one query or replay, in order."""
        from ragtt.retention import pruned_error
        from ragtt.timetravel.run import resolve_query_id

        query_id = resolve_query_id(self._ctx, query_id)
        frame = self._ctx.log.frame(query_id=query_id)
        if frame.is_empty():
            pruned = pruned_error(self._ctx, query_id)
            if pruned is not None:
                raise pruned
            raise NotFoundError(f"no events for query id {query_id!r}")
        return frame

    @overload
    def export_traces(
        self, query_id: str | Iterable[str], *, endpoint: str | None = None, project_name: str | None = None
    ) -> dict[str, Any]: ...

    @overload
    def export_traces(
        self, query_id: None = None, *, endpoint: str, live: Literal[True], project_name: str | None = None
    ) -> LiveTraces: ...

    def export_traces(
        self,
        query_id: str | Iterable[str] | None = None,
        *,
        endpoint: str | None = None,
        live: bool = False,
        project_name: str | None = None,
    ) -> dict[str, Any] | LiveTraces:
        """The OpenTelemetry trace of a logged query or replay (or of several ids) as an OTLP/JSON
        dict, in OpenInference's conventions (Phoenix shows them natively); with ``endpoint``
        (``http://127.0.0.1:6006``) also sent there over OTLP/HTTP. ``project_name`` is the
        Phoenix project the spans land in (default ``ragtt``).

        ``export_traces(endpoint=URL, live=True)`` instead exports every later query and replay
        of this project as it happens, from a background thread, and returns its ``LiveTraces``
        handle (``stop()`` ends it; so does ``close()``). A collector that is down never fails
        a query: the handle counts what was not sent.
        """
        from ragtt.traces.otlp import DEFAULT_PROJECT_NAME, load_traced_runs, otlp_json

        project_name = project_name or DEFAULT_PROJECT_NAME
        if live:
            if query_id is not None or endpoint is None:
                raise ConfigError(
                    "live export takes an endpoint and no query id: export_traces(endpoint=URL, live=True)"
                )
            from ragtt.traces.live import LiveTraces

            if self._live is not None:
                self._live.stop()
            self._live = LiveTraces(endpoint, project_name=project_name)
            return self._live
        if query_id is None:
            raise ConfigError("export_traces needs a query id (or a list of them), or endpoint=URL with live=True")
        ids = [query_id] if isinstance(query_id, str) else list(query_id)
        otlp = otlp_json(load_traced_runs(self._ctx, ids), project_name=project_name)
        if endpoint is not None:
            from ragtt.traces.http import post_otlp

            post_otlp(otlp, endpoint)
        return otlp

    def _traced(self, result: _Run) -> _Run:
        if self._live is not None and self._live.running:
            self._live.submit(self._ctx, result)
        return result

    # -- version labels ------------------------------------------------------------------------

    def version_labels(self) -> dict[int, str]:
        """Version -> the snapshot label that names it (a user's label beats an ``auto-v*`` one)."""
        from ragtt.index.snapshots import version_labels

        return version_labels(self._ctx)

    def version_label(self, version: int) -> str:
        """How ``version`` reads in reports and CLI text: "flask-1.0 (v6)" when a snapshot names it, else "v6"."""
        from ragtt.results import version_label

        return version_label(version, self.version_labels())
