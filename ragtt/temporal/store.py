"""AssertionStore: episodic assertions with validity windows in SQLite (+ sqlite-vec, FTS5).

>>> store = AssertionStore.open("facts.db", embedder=HashEmbedder())  # doctest: +SKIP
>>> store.write_episode(Episode("e1", "default", 100, "2024-01-01T00:00:00+00:00", "chat", "..."))
>>> store.write_assertion(Assertion("a1", "default", "fact", "Refunds take 14 days", 100, 0.9, "e1",
...                                 [Citation("c1", "e1", "chat#3", "refunds take 14 days")]))
>>> store.retrieve(RetrievalQuery("default", 150, "refund window")).results[0].content
'Refunds take 14 days'
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt._sqlite import connect, load_sqlite_vec
from ragtt.errors import ConfigError, ValidationError
from ragtt.temporal import graph, writes
from ragtt.temporal.internals import StoreInternals
from ragtt.temporal.models import Assertion, Citation, Episode, Link, PositionLike, to_position
from ragtt.temporal.namespaces import NamespaceInfo, Namespaces, VectorPlan
from ragtt.temporal.results import AssembledContext, ConnectedAssertion, RetrievalQuery, RetrievalResult
from ragtt.temporal.rows import load_assertions, load_episode
from ragtt.temporal.schema import SchemaExtensions, apply_extensions, migrate, prepare_connection
from ragtt.temporal.scoring import RRFScorer, Scorer

if TYPE_CHECKING:
    import numpy as np
    import polars as pl
    from numpy.typing import NDArray

    from ragtt.index.embedders import Embedder

__all__ = ["AssertionStore", "Metrics"]

DEFAULT_NAMESPACE = "default"
Metrics = Callable[[str, float, Mapping[str, str]], None]


class _Advanced:
    """Operations that bypass the usual write path; use with care."""

    def __init__(self, store: AssertionStore) -> None:
        self._store = store

    def close_assertion(self, assertion_id: str, valid_until: PositionLike) -> None:
        """End an open assertion's validity at ``valid_until`` without writing a successor."""
        end = to_position(valid_until, "valid_until")
        store = self._store
        with store.internals.write() as conn:
            ns = conn.execute("SELECT namespace FROM assertions WHERE id = ?", (assertion_id,)).fetchone()
            change = writes.bump_change_seq(conn, ns[0]) if ns else 0
            seq, namespace = writes.close_assertion(conn, assertion_id, end, change)
            store.internals.close_vectors(conn, namespace, [(seq, end)])


def _load_vec(conn: Any) -> bool:
    try:
        conn.execute("SELECT vec_version()")
        return True
    except Exception:
        return load_sqlite_vec(conn)


class AssertionStore:
    """Facts with validity windows, citations and links, retrieved as of any position.

    ``internals`` is what the temporal package's own modules use (its connection, transactions
    and caches: ``ragtt.temporal.internals``); it is not part of the public API.
    """

    def __init__(
        self,
        conn: Any,
        *,
        owns_connection: bool,
        namespace: str | None,
        embedding_dimension: int | None,
        embedder: Embedder | None,
        scorer: Scorer | None,
        logger: Any,
        metrics: Metrics | None,
        middleware: Sequence[Any],
        schema_extensions: SchemaExtensions | None,
        vector_cache: bool,
        sqlite_vec: bool,
    ) -> None:
        if embedder is not None:
            from ragtt.index.embedders import check_embedder

            check_embedder(embedder)
            if embedding_dimension is not None and embedding_dimension != embedder.dim:
                raise ConfigError(
                    f"embedding_dimension {embedding_dimension} does not match the embedder's "
                    f"dimension {embedder.dim}; pass one or make them agree"
                )
        if scorer is not None and not callable(getattr(scorer, "score_batch", None)):
            raise ConfigError(f"scorer must implement score_batch(candidates, context); got {scorer!r}")
        if schema_extensions is not None and not isinstance(schema_extensions, SchemaExtensions):
            raise ConfigError(f"schema_extensions must be a SchemaExtensions; got {type(schema_extensions).__name__}")
        self.internals = StoreInternals(self, conn, owns_connection=owns_connection)
        self.namespace = namespace or DEFAULT_NAMESPACE
        self.embedding_dimension = (
            embedding_dimension if embedding_dimension is not None else (embedder.dim if embedder is not None else None)
        )
        self.embedder = embedder
        self.scorer: Scorer = scorer if scorer is not None else RRFScorer()
        self.logger = logger if logger is not None else logging.getLogger("ragtt.temporal")
        self.metrics = metrics
        self.middleware = tuple(middleware)
        self.vector_cache = vector_cache
        self.advanced = _Advanced(self)
        prepare_connection(conn)
        self.vector_enabled = bool(sqlite_vec) and _load_vec(conn)
        self.schema_version = migrate(conn)
        self.internals.extensions = apply_extensions(conn, schema_extensions)
        self.namespaces = Namespaces(self)

    # --- lifecycle -------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path_or_connection: str | Path | Any,
        *,
        namespace: str | None = None,
        embedding_dimension: int | None = None,
        embedder: Embedder | None = None,
        scorer: Scorer | None = None,
        logger: Any = None,
        middleware: Iterable[Any] = (),
        schema_extensions: SchemaExtensions | None = None,
        metrics: Metrics | None = None,
        vector_cache: bool = True,
        sqlite_vec: bool = True,
    ) -> AssertionStore:
        """Open a store on a path (its connection is closed by ``close()``) or on a connection you own.

        ``vector_cache`` keeps each namespace's vectors in memory for fast search (sqlite-vec
        KNN is used otherwise); ``sqlite_vec=False`` runs without the extension (full text only).
        """
        owns = isinstance(path_or_connection, str | Path)
        if owns:
            Path(path_or_connection).parent.mkdir(parents=True, exist_ok=True)
            conn = connect(path_or_connection, wal=True, foreign_keys=True)
        elif hasattr(path_or_connection, "execute"):
            conn = path_or_connection
        else:
            raise ConfigError(
                f"open() takes a path or a DB-API sqlite connection; got {type(path_or_connection).__name__}"
            )
        try:
            return cls(
                conn,
                owns_connection=owns,
                namespace=namespace,
                embedding_dimension=embedding_dimension,
                embedder=embedder,
                scorer=scorer,
                logger=logger,
                metrics=metrics,
                middleware=tuple(middleware),
                schema_extensions=schema_extensions,
                vector_cache=vector_cache,
                sqlite_vec=sqlite_vec,
            )
        except BaseException:
            if owns:
                conn.close()
            raise

    def close(self) -> None:
        """Release the store; a connection it opened is closed, one it was given stays open."""
        self.internals.close()

    def __enter__(self) -> AssertionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.internals.closed else f"sqlite-vec {'on' if self.vector_enabled else 'off'}"
        return f"AssertionStore(namespace={self.namespace!r}, embedder={self.embedder!r}, {state})"

    # --- namespaces --------------------------------------------------------------------------

    def init_namespace(self, namespace: str, embedding_dimension: int | None = None) -> NamespaceInfo:
        """Create ``namespace`` (idempotent); without a dimension it is full-text only."""
        return self.namespaces.init(namespace, embedding_dimension)

    def upgrade_namespace_to_vector(self, namespace: str, embedding_dimension: int) -> NamespaceInfo:
        """Give a vectorless namespace a vector index; indexes its assertions when an embedder fits."""
        return self.namespaces.upgrade(namespace, embedding_dimension)

    def pending_indexing(self, namespace: str) -> list[str]:
        """Ids of the namespace's assertions (superseded included) that have no embedding yet."""
        return self.namespaces.pending(namespace)

    def index_pending(self, namespace: str, *, batch_size: int = 256) -> int:
        """Embed every pending assertion of ``namespace`` with the store's embedder; returns how many."""
        return self.namespaces.index_pending(namespace, batch_size=batch_size)

    def index_assertion(
        self,
        assertion_id: str,
        embedding: NDArray[np.float32] | Sequence[float] | None = None,
    ) -> None:
        """Store (or replace) the embedding of one assertion; None embeds it with the store's embedder."""
        self.namespaces.index([assertion_id], None if embedding is None else [embedding])

    # --- writes ------------------------------------------------------------------------------

    def write_episode(self, episode: Episode) -> Episode:
        return self.write_episode_bundle(episode)[0]

    def write_assertion(self, assertion: Assertion, embedding: NDArray[np.float32] | None = None) -> Assertion:
        """Write one assertion; with ``supersedes_id`` its predecessor is closed in the same transaction."""
        self.write_assertions([assertion], None if embedding is None else [embedding])
        return assertion

    def write_assertions(self, assertions: Iterable[Assertion], embeddings: Any = None) -> int:
        """Write many assertions in one transaction (all or none); returns how many were written.

        ``embeddings``: an (n, dim) float32 array in the same order, or None to use the embedder.
        """
        items = list(assertions)
        self._check_types(items, Assertion)
        if not items:
            return 0
        namespaces = sorted({a.namespace for a in items})
        infos = {ns: self.namespaces.ensure(ns) for ns in namespaces}
        vectors = self.namespaces.vectors_for(items, infos, embeddings)
        with self.internals.write() as conn:
            self._insert_assertions(conn, items, infos, vectors)
        self.internals.emit("assertions.written", len(items), namespace=",".join(namespaces))
        return len(items)

    def write_citation(self, assertion_id: str, citation: Citation) -> Citation:
        """Add a citation to an existing assertion."""
        self._check_types([citation], Citation)
        with self.internals.write() as conn:
            if not conn.execute("SELECT 1 FROM assertions WHERE id = ?", (assertion_id,)).fetchone():
                raise ValidationError(f"assertion {assertion_id!r} does not exist; write it before citing it")
            writes.insert_citations(conn, [(assertion_id, citation)])
        return citation

    def write_link(self, link: Link, *, allow_cross_namespace: bool = False) -> Link:
        """Link two assertions; endpoints in another namespace need ``allow_cross_namespace=True``."""
        self._check_types([link], Link)
        with self.internals.write() as conn:
            writes.insert_link(conn, link, allow_cross_namespace=allow_cross_namespace)
        return link

    def write_episode_bundle(
        self, episode: Episode, assertions: Iterable[Assertion] = (), links: Iterable[Link] = (), embeddings: Any = None
    ) -> tuple[Episode, int, int]:
        """An episode, its assertions and links in one transaction: (episode, assertions, links) written."""
        self._check_types([episode], Episode)
        items, link_items = list(assertions), list(links)
        self._check_types(items, Assertion)
        self._check_types(link_items, Link)
        namespaces = sorted({episode.namespace, *(a.namespace for a in items)})
        infos = {ns: self.namespaces.ensure(ns) for ns in namespaces}
        vectors = self.namespaces.vectors_for(items, infos, embeddings) if items else None
        with self.internals.write() as conn:
            writes.insert_episodes(conn, [episode], self.internals.defaults("episodes"))
            if items:
                self._insert_assertions(conn, items, infos, vectors)
            for link in link_items:
                writes.insert_link(conn, link, allow_cross_namespace=False)
        return episode, len(items), len(link_items)

    def _insert_assertions(
        self, conn: Any, items: list[Assertion], infos: dict[str, NamespaceInfo], vectors: VectorPlan | None
    ) -> None:
        change = self.namespaces.bump(conn, list(infos))
        rows, closes = writes.insert_assertions(conn, items, self.internals.defaults("assertions"), change)
        if closes:  # predecessors share their successor's namespace (checked), so one lookup serves all
            found = conn.execute(
                f"SELECT namespace, seq, id FROM assertions WHERE id IN ({','.join('?' * len(closes))})",
                [sid for sid, _ in closes],
            ).fetchall()
            ends = dict(closes)
            for ns in {row[0] for row in found}:
                self.internals.close_vectors(conn, ns, [(seq, ends[aid]) for n, seq, aid in found if n == ns])
        if vectors is not None:
            self.namespaces.store_vectors(conn, infos, items, rows, vectors)

    @staticmethod
    def _check_types(items: Sequence[Any], cls: type) -> None:
        bad = [type(i).__name__ for i in items if not isinstance(i, cls)]
        if bad:
            raise ValidationError(f"expected {cls.__name__} objects; got {', '.join(sorted(set(bad)))}")

    # --- reads -------------------------------------------------------------------------------

    def get_assertion(self, assertion_id: str) -> Assertion | None:
        with self.internals.read() as conn:
            return load_assertions(conn, [assertion_id], self.internals.columns("assertions")).get(assertion_id)

    def get_episode(self, episode_id: str) -> Episode | None:
        with self.internals.read() as conn:
            return load_episode(conn, episode_id, self.internals.columns("episodes"))

    def retrieve(self, query: RetrievalQuery, middleware: Sequence[Any] = ()) -> RetrievalResult:
        """Rank the assertions valid at ``query.temporal_anchor`` by vector and full-text evidence.

        ``middleware`` applies to this call only, inside the store's own list: global before,
        per-call before, the core, per-call after in reverse, global after in reverse.
        """
        from ragtt.temporal.retrieve import retrieve

        return retrieve(self, query, middleware)

    def connected(
        self,
        assertion_id: str,
        *,
        at: PositionLike | None = None,
        max_depth: int = 3,
        link_types: Sequence[str] | None = None,
        direction: str = "both",
        include_superseded: bool = False,
    ) -> list[ConnectedAssertion]:
        """Assertions reachable through links valid at ``at`` (None: open links), nearest first.

        ``include_superseded=True`` also walks links that expired and claims that were superseded
        or closed, as long as they had started by ``at`` (None: any).
        """
        return graph.connected(
            self,
            assertion_id,
            at=at,
            max_depth=max_depth,
            link_types=link_types,
            direction=direction,
            include_superseded=include_superseded,
        )

    def find_path(
        self,
        from_id: str,
        to_id: str,
        *,
        at: PositionLike | None = None,
        max_depth: int = 5,
        link_types: Sequence[str] | None = None,
        direction: str = "out",
        include_superseded: bool = False,
    ) -> list[Link] | None:
        """The shortest chain of valid links from one assertion to another (along link direction), or None;
        ``include_superseded`` as in ``connected``."""
        return graph.find_path(
            self,
            from_id,
            to_id,
            at=at,
            max_depth=max_depth,
            link_types=link_types,
            direction=direction,
            include_superseded=include_superseded,
        )

    def snapshot(
        self,
        namespace: str,
        at_position: PositionLike,
        assertion_types: Sequence[str] | None = None,
        entity_types: Sequence[str] | None = None,
        include_superseded: bool = False,
    ) -> pl.DataFrame:
        """One row per assertion valid at ``at_position`` (or started by then, with superseded)."""
        from ragtt.temporal.frames import snapshot

        return snapshot(self, namespace, at_position, assertion_types, entity_types, include_superseded)

    def entity_history(self, namespace: str, entity_id: str) -> pl.DataFrame:
        """Every assertion about ``entity_id``, oldest first."""
        from ragtt.temporal.frames import entity_history

        return entity_history(self, namespace, entity_id)

    def entity_trajectory(self, namespace: str, entity_id: str) -> pl.DataFrame:
        """How claims about ``entity_id`` replaced each other: one row per step of each chain."""
        from ragtt.temporal.frames import entity_trajectory

        return entity_trajectory(self, namespace, entity_id)

    def assemble_context(
        self,
        query: RetrievalQuery,
        token_budget: int,
        formatter: str = "prose",
        *,
        token_counter: Callable[[str], int] | None = None,
    ) -> AssembledContext:
        """Retrieve, then render as much as fits in ``token_budget`` as prompt context."""
        from ragtt.temporal.context import assemble_context

        return assemble_context(self, query, token_budget, formatter, token_counter=token_counter)

    # --- maintenance -------------------------------------------------------------------------

    def reindex_namespace(
        self, namespace: str, new_dimension: int, embedder: Embedder, *, batch_size: int = 256
    ) -> NamespaceInfo:
        """Re-embed a namespace into a staging index and swap it in; on failure the old one stays."""
        from ragtt.temporal.maintenance import reindex_namespace

        return reindex_namespace(self, namespace, new_dimension, embedder, batch_size=batch_size)

    def rebuild_fts(self, tokenizer: str | None = None) -> str:
        """Rebuild the full-text index, optionally with another FTS5 tokenizer; returns the tokenizer."""
        from ragtt.temporal.maintenance import rebuild_fts

        return rebuild_fts(self, tokenizer)
