"""``Project``: one folder = ``events.db`` + ``embeddings.db`` + ``lancedb/`` (+ ``assertions.db``)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt._hashing import time_ordered_id
from ragtt.config import PipelineConfig
from ragtt.errors import ConfigError, NotFoundError, ReplayError
from ragtt.events.store import Event, EventStore, format_ts, utc_now
from ragtt.generate import ExtractiveGenerator, Generator, LiteLLMGenerator
from ragtt.index.cache import EmbeddingCache
from ragtt.index.embedders import Embedder, resolve_embedder
from ragtt.index.history import At, VersionLog
from ragtt.index.rerank import reranker_version
from ragtt.index.retrieve import RetrievalPlan
from ragtt.index.table import ChunkTable, sql_string_list
from ragtt.ingest.types import IngestOptions
from ragtt.results import Document, IngestReport, QueryResult, ReplayResult, RetrievedChunk, Snapshot, Snapshots

if TYPE_CHECKING:
    import polars as pl

    from ragtt.timetravel.bisect import BisectReport
    from ragtt.timetravel.diff import DiffReport
    from ragtt.timetravel.drift import DriftReport
    from ragtt.timetravel.lineage import LineageReport
    from ragtt.timetravel.regression import Regression
    from ragtt.timetravel.snapshot_diff import SnapshotDiff

__all__ = ["At", "Project"]

_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class Project:
    """A versioned RAG index with its full history. Open with ``Project.open(path)``."""

    def __init__(self, path: Path, config: PipelineConfig, embedder: Embedder, generator: Generator,
                 ingest_options: IngestOptions, events: EventStore, progress: bool,
                 embedding_cache: Path | None = None) -> None:
        self.path = path
        self.config = config
        self.embedder = embedder
        self.ingest_options = ingest_options
        self.progress = progress
        self._generator = generator
        self._events = events
        self._cache = EmbeddingCache(embedding_cache or path / "embeddings.db")
        self._table = ChunkTable(path / "lancedb", config.table_name, embedder.dim)
        self._history = VersionLog(events.connection, self._table)
        self._assertions: Any = None
        if self._table.created_versions:
            now = utc_now()
            with events.transaction() as conn:
                for v in self._table.created_versions:
                    self._history.record(conn, v, "create", now)

    @classmethod
    def open(cls, path: str | Path, config: PipelineConfig | None = None, embedder: Embedder | None = None,
             *, generator: Generator | None = None, ingest_options: IngestOptions | None = None,
             progress: bool = True, embedding_cache: str | Path | None = None) -> Project:
        """Open (or create) the project in ``path``.

        ``config`` None reuses the project's last config (or the defaults); ``embedder`` None
        rebuilds the one the project was built with (or the config's default model).
        ``embedding_cache`` points several projects at one cache file (default: the project's own).
        """
        path = Path(path).expanduser()
        path.mkdir(parents=True, exist_ok=True)
        events = EventStore(path / "events.db")
        try:
            stored = events.get_meta("config")
            if config is None:
                config = PipelineConfig.from_dict(json.loads(stored)) if stored else PipelineConfig()
            elif not isinstance(config, PipelineConfig):
                raise ConfigError(f"config must be a ragtt.PipelineConfig; got {type(config).__name__}")
            reranker_version(config.reranker)  # a cross-encoder folder that is not there fails now, by name
            embedder = resolve_embedder(events.get_meta("embedder_id"), events.get_meta("embedder_dim"),
                                        config.embedder_model, embedder)
            if generator is None:
                generator = LiteLLMGenerator(config.model) if config.model else ExtractiveGenerator()
            with events.transaction() as conn:
                events.set_meta("config", json.dumps(config.to_dict()), conn)
                events.set_meta("embedder_id", embedder.model_id, conn)
                events.set_meta("embedder_dim", str(embedder.dim), conn)
                conn.execute("INSERT OR IGNORE INTO configs (config_id, config, created_at) VALUES (?, ?, ?)",
                             (config.config_id, json.dumps(config.to_dict()), format_ts(utc_now())))
            return cls(path, config, embedder, generator, ingest_options or IngestOptions(), events, progress,
                       Path(embedding_cache) if embedding_cache is not None else None)
        except BaseException:
            events.close()
            raise

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        if self._assertions is not None:
            self._assertions.close()
            self._assertions = None
        self._cache.close()
        self._events.close()

    def __enter__(self) -> Project:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"Project({str(self.path)!r}, v{self._table.latest_version()}, embedder={self.embedder.model_id}, "
                f"config={self.config.config_id})")

    @property
    def events(self) -> EventStore:
        return self._events

    @property
    def assertions(self) -> Any:
        """The project's temporal assertion store (``assertions.db``), opened on first use."""
        if self._assertions is None:
            from ragtt.temporal import AssertionStore

            self._assertions = AssertionStore.open(self.path / "assertions.db", embedder=self.embedder)
        return self._assertions

    # -- ingest ------------------------------------------------------------------------------

    def ingest(self, paths: Iterable[str | Path] | str | Path, *, prune: bool | None = None) -> IngestReport:
        """Ingest files and folders in one index version; a folder's files are named by their
        path inside it.

        A folder is a corpus: when only folders are given, the index is made to mirror them,
        so a file deleted or renamed since the last ingest leaves the index (``prune=None``,
        the default). ``prune=False`` only adds and updates; ``prune=True`` always mirrors.
        """
        from ragtt.ingest.pipeline import collect_paths, run_ingest

        listed = [paths] if isinstance(paths, str | Path) else list(paths)
        items, failed = collect_paths(listed)
        if prune is None:
            prune = bool(listed) and all(Path(p).expanduser().is_dir() for p in listed)
        if prune and failed:
            prune = False  # a path that could not be listed must not empty the index
        return run_ingest(self, items, failed, prune=prune)

    def ingest_texts(self, texts: dict[str, str]) -> IngestReport:
        """Ingest in-memory sources: ``{source name: text}``."""
        from ragtt.ingest.pipeline import SourceItem, run_ingest

        if not isinstance(texts, dict):
            raise TypeError(f"ingest_texts takes a dict of source name -> text; got {type(texts).__name__}")
        items, failed = [], []
        for source, text in texts.items():
            if not isinstance(source, str) or not source or not isinstance(text, str):
                failed.append((str(source), "source must be a non-empty str and its text a str"))
            else:
                items.append(SourceItem(source, data=text.encode("utf-8")))
        return run_ingest(self, items, failed)

    def remove(self, source: str) -> int:
        """Remove a source's chunks (one new version); returns that version."""
        from ragtt._hashing import doc_id_for

        version = self._table.latest_version()
        found = self._table.scan(version, ["chunk_id"], where=f"source IN ({sql_string_list([source])})")
        if found.num_rows == 0:
            raise NotFoundError(f"source {source!r} is not in the index (see proj.chunks()['source'].unique())")
        new_version = self._table.delete_sources([source])
        now = utc_now()
        with self._events.transaction() as conn:
            self._history.record(conn, new_version, "remove", now)
            self._events.append_many([Event("document.removed", {
                "doc_id": doc_id_for(source), "source": source,
                "chunk_ids_removed": sorted(found.column("chunk_id").to_pylist()),
            }, index_version=new_version, doc_id=doc_id_for(source), ts=now)], conn=conn)
        return new_version

    # -- query, replay, diff -----------------------------------------------------------------

    def plan(self, *, top_k: int | None = None, mode: str | None = None) -> RetrievalPlan:
        """The retrieval plan a live query would run now."""
        config = self.config.replace(**{k: v for k, v in (("top_k", top_k), ("retrieval_mode", mode)) if v})
        return RetrievalPlan(
            mode=config.retrieval_mode, top_k=config.top_k,
            candidate_pool=config.resolved_candidate_pool(config.top_k), hybrid_alpha=config.hybrid_alpha,
            reranker=config.reranker, reranker_version=reranker_version(config.reranker),
            embedder_id=self.embedder.model_id, embedder_dim=self.embedder.dim, table_name=config.table_name,
        )

    def query(self, text: str, *, top_k: int | None = None, mode: str | None = None,
              generate: bool = True) -> QueryResult:
        """Retrieve (and answer) at the latest index version; every step is logged."""
        from ragtt.timetravel.run import execute, record

        if not isinstance(text, str):
            raise TypeError(f"query text must be a str; got {type(text).__name__}")
        query_id = time_ordered_id()
        run = execute(self, text, self.plan(top_k=top_k, mode=mode), self._table.latest_version(),
                      generate=generate)
        record(self, run, query_id, prefix="", config_id=self.config.config_id, extra={})
        gen = run.generation
        return QueryResult(query_id, text, run.index_version, self.config.config_id, run.chunks,
                           gen.answer if gen else None, gen.model if gen else None, run.latency_ms)

    def plan_of(self, query_id: str) -> RetrievalPlan:
        """The exact retrieval plan a logged query or replay ran with."""
        from ragtt.timetravel.run import load_run

        return load_run(self, query_id).plan

    def retrieve_at(self, text: str, version: At, plan: RetrievalPlan | None = None) -> list[RetrievedChunk]:
        """Retrieval only, at any version, through the same path as queries and replays, and
        NOT logged: for views and analyses that sweep many versions (replays are logged)."""
        from ragtt.timetravel.run import execute

        return execute(self, text, plan or self.plan(), self.resolve_version(version), generate=False).chunks

    def replay(self, query_id: str, *, generate: bool = False) -> ReplayResult:
        """Re-run a logged query against the exact version and plan it ran with."""
        from ragtt.timetravel.replay import replay

        return replay(self, query_id, generate=generate)

    def replay_text(self, text: str, at: At, *, top_k: int | None = None, mode: str | None = None,
                    generate: bool = False) -> ReplayResult:
        """Run ``text`` against the index as it was ``at`` (version, snapshot label or datetime)."""
        from ragtt.timetravel.replay import replay_text

        return replay_text(self, text, self.resolve_version(at), self.plan(top_k=top_k, mode=mode),
                           generate=generate, at=at)

    def diff(self, left_id: str, right_id: str) -> DiffReport:
        from ragtt.timetravel.diff import diff_runs

        return diff_runs(self, left_id, right_id)

    # -- analysis ------------------------------------------------------------------------------

    def lineage(self, left_id: str, right_id: str) -> LineageReport:
        """Why each chunk entered or left the top-k between two runs (added, re-ingested, removed, ranking)."""
        from ragtt.timetravel.lineage import lineage

        return lineage(self, left_id, right_id)

    def snapshot_diff(self, a: At, b: At) -> SnapshotDiff:
        """Documents and chunks added, removed and changed between two versions."""
        from ragtt.timetravel.snapshot_diff import snapshot_diff

        return snapshot_diff(self, a, b)

    def drift(self, a: At, b: At, threshold: float = 0.9) -> DriftReport:
        """Embedding drift per source (centroid cosine) and per common chunk between two versions."""
        from ragtt.timetravel.drift import drift

        return drift(self, a, b, threshold)

    def reembed(self, embedder: Embedder) -> IngestReport:
        """Re-embed every current chunk with ``embedder`` (ids unchanged); the project switches to it."""
        from ragtt.index.reembed import reembed

        return reembed(self, embedder)

    def bisect(self, query: str, predicate: Any, versions: list[int] | None = None) -> BisectReport:
        """First version where ``predicate`` on ``query``'s result differs from the start.

        ``query`` is a query id (its recorded plan is used) or a text; ``predicate`` a callable
        on a ReplayResult or "chunk:<id>", "source:<name>", "answer:<substring>".
        """
        from ragtt.timetravel.bisect import bisect

        return bisect(self, query, predicate, versions)

    @property
    def regression(self) -> Regression:
        """Golden-query suites: ``capture(queries, name)`` and ``run(suite, threshold)``."""
        from ragtt.timetravel.regression import Regression

        return Regression(self)

    # -- snapshots and versions ----------------------------------------------------------------

    def snapshot(self, label: str) -> Snapshot:
        """Tag the latest version as ``label`` (letters, digits, '.', '-', '_')."""
        if not isinstance(label, str) or not _LABEL.match(label) or label.isdigit():
            raise ConfigError(f"snapshot label must be letters, digits, '.', '-' or '_' (not only digits); "
                              f"got {label!r}")
        version = self._table.latest_version()
        self._table.tag(label, version)
        sources = self._table.scan(version, ["source"]).column("source")
        snap = Snapshot(time_ordered_id(), label, version, utc_now(), len(set(sources.to_pylist())),
                        len(sources))
        self._events.append(Event("index.snapshot_taken", {
            "snapshot_id": snap.snapshot_id, "label": label, "doc_count": snap.doc_count,
            "chunk_count": snap.chunk_count,
        }, index_version=version, ts=snap.created_at))
        return snap

    def snapshots(self) -> Snapshots:
        return Snapshots(Snapshot(e.payload["snapshot_id"], e.payload["label"], int(e.index_version or 0), e.ts,
                         e.payload["doc_count"], e.payload["chunk_count"])
                for e in self._events.query(types="index.snapshot_taken"))

    def _maybe_auto_snapshot(self) -> None:
        last = self._events.last("index.snapshot_taken")
        since = self._events.query(types="document.ingested", since=last.ts if last else None)
        if len(since) >= self.config.auto_snapshot_every:
            self.snapshot(f"auto-v{self._table.latest_version()}")

    @property
    def version(self) -> int:
        """The latest index version."""
        return self._table.latest_version()

    def resolve_version(self, at: At) -> int:
        """A version number from a version, a snapshot label, or a datetime (latest at or before)."""
        return self._history.resolve(at)

    def versions(self) -> pl.DataFrame:
        """Every table version with when it was committed and by which operation."""
        return self._history.frame()

    def optimize(self) -> list[int]:
        """Compact the table and index every row for full-text search (no version is deleted).

        Ingests call it by themselves every ``ragtt.index.history.MAINTAIN_EVERY`` writes or after a large write;
        returns the maintenance versions it added.
        """
        versions = self._table.optimize()
        now = utc_now()
        with self._events.transaction() as conn:
            for version in versions:
                self._history.record(conn, version, "maintenance", now)
            self._events.append_many([Event("index.optimized", {"versions": versions},
                                            index_version=versions[-1] if versions else None, ts=now)], conn=conn)
        return versions

    # -- inspection ----------------------------------------------------------------------------

    def chunks(self, at: At | None = None, source: str | None = None) -> pl.DataFrame:
        import polars as pl

        version = self._table.latest_version() if at is None else self.resolve_version(at)
        where = f"source IN ({sql_string_list([source])})" if source is not None else None
        cols = ["chunk_id", "doc_id", "source", "text", "char_start", "char_end", "regions"]
        frame = pl.from_arrow(self._table.scan(version, cols, where=where))
        assert isinstance(frame, pl.DataFrame)
        return frame.with_columns(pl.lit(version, dtype=pl.Int64).alias("index_version")).sort(
            ["source", "char_start", "chunk_id"])

    def document(self, source: str, at: At | None = None) -> Document:
        from ragtt.ingest.types import PageRoute

        version = self._table.latest_version() if at is None else self.resolve_version(at)
        found = self._table.scan(version, ["doc_key"], where=f"source IN ({sql_string_list([source])})")
        if found.num_rows == 0:
            raise NotFoundError(f"source {source!r} is not in the index at version {version}")
        doc_key = found.column("doc_key")[0].as_py()
        row = self._events.connection.execute(
            "SELECT doc_id, source, content_hash, text, routes FROM documents WHERE doc_key = ?",
            (doc_key,)).fetchone()
        if row is None:
            raise NotFoundError(f"the parsed text of {source!r} (document {doc_key}) is missing from events.db")
        routes = [PageRoute.from_dict(r) for r in json.loads(row[4])]
        return Document(row[0], row[1], row[2], row[3], routes)

    def source_path(self, source: str) -> Path | None:
        """The file a source was last ingested from (None for in-memory sources)."""
        row = self._events.connection.execute(
            "SELECT json_extract(payload, '$.path') FROM events WHERE type = 'document.ingested' "
            "AND json_extract(payload, '$.source') = ? ORDER BY seq DESC LIMIT 1", (source,)).fetchone()
        if row is None:
            raise NotFoundError(f"source {source!r} was never ingested into this project")
        return Path(row[0]) if row[0] else None

    def trace(self, query_id: str) -> pl.DataFrame:
        """Every event of one query or replay, in order."""
        frame = self._events.frame(query_id=query_id)
        if frame.is_empty():
            raise NotFoundError(f"no events for query id {query_id!r}")
        return frame

    # -- internal checks ---------------------------------------------------------------------

    def _query_vector(self, plan: RetrievalPlan, query: str) -> Any:
        """The query's vector under the plan's embedder: computed once, then always from the cache,
        so a run recorded before an embedder swap still replays with its exact vector."""
        if plan.embedder_id == self.embedder.model_id and plan.embedder_dim == self.embedder.dim:
            return self._cache.embed(self.embedder, [query])[0][0]
        cached = self._cache.get(plan.embedder_id, query)
        if cached is None or cached.shape[0] != plan.embedder_dim:
            raise ReplayError(
                f"this run searched with embedder {plan.embedder_id} ({plan.embedder_dim} dims), but the project "
                f"is open with {self.embedder.model_id} and the query's vector is not in the cache; reopen the "
                "project with the original embedder to replay it")
        return cached

    # -- version labels ------------------------------------------------------------------------

    def version_labels(self) -> dict[int, str]:
        """Version -> the snapshot label that names it (a user's label beats an ``auto-v*`` one)."""
        from ragtt.results import version_names

        return version_names(self.snapshots())

    def version_label(self, version: int) -> str:
        """How ``version`` reads in reports and CLI text: "flask-1.0 (v6)" when a snapshot names it, else "v6"."""
        from ragtt.results import version_label

        return version_label(version, self.version_labels())
