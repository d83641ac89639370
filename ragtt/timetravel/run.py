"""The one path: a live query and a replay both call ``execute`` and ``record``.

``execute`` searches an exact index version with an exact plan; ``record`` writes the
run's events in one transaction. Only the event type prefix differs ("" or "replay.").
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragtt.events.store import Event, utc_now
from ragtt.index.retrieve import Hit, RetrievalPlan, retrieve
from ragtt.ingest.types import Region
from ragtt.results import RetrievedChunk

if TYPE_CHECKING:
    from ragtt.generate import Generation
    from ragtt.project import Project

__all__ = ["Run", "execute", "load_run", "record"]


@dataclass(frozen=True)
class Run:
    """What one execution retrieved and answered."""

    query: str
    index_version: int
    plan: RetrievalPlan
    chunks: list[RetrievedChunk]
    generation: Generation | None
    latency_ms: float
    timings_ms: dict[str, float]


def execute(proj: Project, query: str, plan: RetrievalPlan, version: int, *, generate: bool) -> Run:
    started = time.perf_counter()
    view = proj._table.view(version)
    vector = None
    if plan.mode in ("vector", "hybrid"):
        vector = proj._query_vector(plan, query)
    embedded = time.perf_counter()
    hits = retrieve(view, plan, query, vector)
    chunks = [_to_chunk(hit, rank) for rank, hit in enumerate(hits, start=1)]
    retrieved = time.perf_counter()
    generation = proj._generator.generate(query, chunks) if generate else None
    done = time.perf_counter()
    timings = {"embed": (embedded - started) * 1e3, "retrieve": (retrieved - embedded) * 1e3,
               "generate": (done - retrieved) * 1e3}
    return Run(query, version, plan, chunks, generation, (done - started) * 1e3, timings)


def _to_chunk(hit: Hit, rank: int) -> RetrievedChunk:
    row = hit.row
    regions = [Region(r["page"], r["x0"], r["y0"], r["x1"], r["y1"]) for r in row.get("regions") or []]
    return RetrievedChunk(
        chunk_id=row["chunk_id"], doc_id=row["doc_id"], source=row["source"], text=row["text"], rank=rank,
        score=float(hit.score), scores={k: float(v) for k, v in hit.scores.items()},
        charspan=(int(row["char_start"]), int(row["char_end"])), regions=regions,
    )


def record(proj: Project, run: Run, query_id: str, *, prefix: str, config_id: str,
           extra: dict[str, Any]) -> None:
    """Write the run's events (``{prefix}query.received`` ... ``{prefix}query.completed``) atomically."""
    now = utc_now()
    v = run.index_version
    chunks = [{"chunk_id": c.chunk_id, "doc_id": c.doc_id, "source": c.source, "rank": c.rank,
               "score": c.score, "scores": c.scores, "charspan": list(c.charspan)} for c in run.chunks]
    events = [
        Event(f"{prefix}query.received", {"text": run.query, **extra}, query_id=query_id, index_version=v, ts=now),
        Event(f"{prefix}retrieval.executed", {
            "index_version": v, "config_id": config_id, "plan": run.plan.to_dict(),
            "query": run.query, "chunks": chunks, "retrieve_ms": run.timings_ms["retrieve"],
        }, query_id=query_id, index_version=v, ts=now),
        Event(f"{prefix}context.assembled", {
            "chunk_ids": [c.chunk_id for c in run.chunks],
            "chars": sum(len(c.text) for c in run.chunks),
        }, query_id=query_id, index_version=v, ts=now),
    ]
    if run.generation is not None:
        events.append(Event(f"{prefix}generation.executed", {
            "model": run.generation.model, "answer": run.generation.answer, "usage": run.generation.usage,
            "generate_ms": run.timings_ms["generate"],
        }, query_id=query_id, index_version=v, ts=now))
    events.append(Event(f"{prefix}query.completed", {
        "latency_ms": run.latency_ms, "timings_ms": run.timings_ms, **extra,
    }, query_id=query_id, index_version=v, ts=now))
    proj._events.append_many(events)


@dataclass(frozen=True)
class LoggedRun:
    """A past run read back from the event log."""

    query_id: str
    query: str
    index_version: int
    plan: RetrievalPlan
    config_id: str
    chunks: list[dict[str, Any]]
    answer: str | None
    model: str | None
    latency_ms: float | None
    is_replay: bool


def load_run(proj: Project, query_id: str) -> LoggedRun:
    from ragtt.errors import NotFoundError

    events = proj._events.query(query_id=query_id)
    by_type = {e.type.removeprefix("replay."): e for e in events}
    retrieval = by_type.get("retrieval.executed")
    if retrieval is None:
        raise NotFoundError(
            f"no query or replay with id {query_id!r} in this project's event log "
            "(list them with proj.events.frame(types=['query.received']))"
        )
    generation = by_type.get("generation.executed")
    completed = by_type.get("query.completed")
    payload = retrieval.payload
    return LoggedRun(
        query_id=query_id, query=payload["query"], index_version=int(payload["index_version"]),
        plan=RetrievalPlan.from_dict(payload["plan"]), config_id=payload["config_id"],
        chunks=payload["chunks"],
        answer=generation.payload["answer"] if generation else None,
        model=generation.payload["model"] if generation else None,
        latency_ms=completed.payload.get("latency_ms") if completed else None,
        is_replay=retrieval.type.startswith("replay."),
    )
