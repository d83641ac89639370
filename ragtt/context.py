"""The context a project hands to the core's functions: its stores and its settings.

``Project`` is the public facade; ``ingest/``, ``index/`` and ``timetravel/`` functions take
a ``Context`` and reach the stores only through it (the event log, the chunk table and the
embedding cache), so a store can be swapped behind these interfaces without touching them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt.errors import ConfigError, EmbedderChangedError, NotFoundError, ReplayError
from ragtt.values import quoted

if TYPE_CHECKING:
    from ragtt.config import PipelineConfig
    from ragtt.events.base import EventLog
    from ragtt.events.cache import EmbeddingCache
    from ragtt.generate import Generator
    from ragtt.index.embedders import Embedder
    from ragtt.index.retrieve import RetrievalPlan
    from ragtt.index.table import ChunkTable
    from ragtt.ingest.types import IngestOptions

__all__ = ["At", "Context"]

At = int | str | datetime


@dataclass
class Context:
    path: Path
    config: PipelineConfig
    embedder: Embedder
    generator: Generator
    ingest_options: IngestOptions
    progress: bool
    log: EventLog
    table: ChunkTable
    cache: EmbeddingCache

    @property
    def version(self) -> int:
        """The newest version whose write is fully logged: what readers see as "now".

        The chunk table may already hold a newer one while its writer is logging it (or
        before recovery adopts it); a reader never sees half of a write.
        """
        latest = self.log.versions.latest()
        if latest is None:
            raise NotFoundError(f"the project {self.path} has no committed index version yet")
        return latest

    def resolve(self, at: At) -> int:
        """A version number from a version, a snapshot label, or a datetime (latest at or before)."""
        if isinstance(at, bool):
            raise TypeError("at must be a version int, a snapshot label or a datetime; got a bool")
        if isinstance(at, int):
            latest = self.version
            if not 1 <= at <= latest:
                raise NotFoundError(f"index version {at} does not exist (versions are 1..{latest})")
            return at
        if isinstance(at, datetime):
            if at.tzinfo is None:
                raise ConfigError(f"at must be a timezone-aware datetime (e.g. UTC); got naive {at}")
            found = self._at_or_before(at)
            if found is None:
                raise NotFoundError(f"the index did not exist yet at {at.isoformat()}")
            return found
        if isinstance(at, str):
            tags = self.table.tags()
            if at in tags:
                return tags[at]
            if at.isascii() and at.isdigit():
                return self.resolve(int(at))
            try:
                parsed = datetime.fromisoformat(at.replace("Z", "+00:00"))
            except ValueError:
                raise NotFoundError(
                    f"no snapshot labelled {quoted(at)} (known: {', '.join(sorted(tags)) or 'none'}); "
                    "at may also be a version number or an ISO datetime"
                ) from None
            return self.resolve(parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC))
        raise TypeError(f"at must be a version int, a snapshot label or a datetime; got {type(at).__name__}")

    def _at_or_before(self, at: datetime) -> int | None:
        """The latest version whose time is at or before ``at``: its ingest's ``as_of`` where
        one was given (a release date), else when it was committed (``EventLog.version_times``)."""
        if not self.log.as_of_times():
            return self.log.versions.at_or_before(at)
        return max((v for v, when in self.log.version_times().items() if when <= at), default=None)

    def check_embedder(self) -> None:
        """The index must still be embedded with this context's embedder: a re-embed by
        another process (or another open Project) switches it, and mixing would be silent."""
        stored = self.log.get_meta("embedder_id")
        if stored is not None and stored != self.embedder.model_id:
            raise EmbedderChangedError(
                f"the index at {self.path} was re-embedded with {stored} since this project was opened with "
                f"{self.embedder.model_id}; reopen the project (Project.open) to use the new embedder"
            )

    def plan(self, *, top_k: int | None = None, mode: str | None = None) -> RetrievalPlan:
        """The retrieval plan a live query would run now."""
        from ragtt.index.rerank import reranker_version
        from ragtt.index.retrieve import ANN_NPROBES, ANN_REFINE_FACTOR, RetrievalPlan

        # None: the config's; anything else is checked by the config (top_k=0 is an error, not "default")
        chosen = {k: v for k, v in (("top_k", top_k), ("retrieval_mode", mode)) if v is not None}
        config = self.config.replace(**chosen)
        return RetrievalPlan(
            mode=config.retrieval_mode,
            top_k=config.top_k,
            candidate_pool=config.resolved_candidate_pool(config.top_k),
            hybrid_alpha=config.hybrid_alpha,
            reranker=config.reranker,
            reranker_version=reranker_version(config.reranker),
            embedder_id=self.embedder.model_id,
            embedder_dim=self.embedder.dim,
            table_name=config.table_name,
            vector_index="auto",
            nprobes=ANN_NPROBES,
            refine_factor=ANN_REFINE_FACTOR,
        )

    def query_vector(self, plan: RetrievalPlan, query: str) -> Any:
        """The query's vector under the plan's embedder: computed once, then always from the cache,
        so a run recorded before an embedder swap still replays with its exact vector."""
        if plan.embedder_id == self.embedder.model_id and plan.embedder_dim == self.embedder.dim:
            return self.cache.embed(self.embedder, [query])[0][0]
        cached = self.cache.get(plan.embedder_id, query)
        if cached is None or cached.shape[0] != plan.embedder_dim:
            raise ReplayError(
                f"this run searched with embedder {plan.embedder_id} ({plan.embedder_dim} dims), but the project "
                f"is open with {self.embedder.model_id} and the query's vector is not in the cache; reopen the "
                "project with the original embedder to replay it"
            )
        return cached
