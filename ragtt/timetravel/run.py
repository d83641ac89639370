"""The one path: a live query and a replay both call ``execute`` and ``record``.

``execute`` searches an exact index version with an exact plan; ``record`` writes the
run's events in one transaction. Only the event type prefix differs ("" or "replay.").
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ragtt.events import types as ev
from ragtt.events.store import Event, utc_now
from ragtt.index.engines import run_engines
from ragtt.index.retrieve import Hit, RetrievalPlan
from ragtt.index.retrieve import retrieve_many as search_many
from ragtt.ingest.types import Region
from ragtt.results import RetrievedChunk
from ragtt.values import check_text

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ragtt.context import Context
    from ragtt.events.base import EventLog
    from ragtt.generate import Generation

__all__ = [
    "LAST",
    "LoggedRun",
    "Run",
    "check_query_id",
    "execute",
    "execute_many",
    "last_query",
    "load_run",
    "load_runs",
    "logged_chunks",
    "record",
    "resolve_in_log",
    "resolve_pair",
    "resolve_query_id",
    "retrieve_many",
    "run_events",
]

LAST = "last"  # stands for a query id: the newest live query (of the question, when one is implied)
_FULL_ID = 32  # hex digits of a time-ordered id
_SHORTEST_PREFIX = 4  # as git: fewer digits name too many runs to be a way of naming one
_SHOWN = 10


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


def execute(
    ctx: Context, query: str, plan: RetrievalPlan, version: int, *, generate: bool, vector: NDArray[Any] | None = None
) -> Run:
    """Search ``version`` with ``plan`` (and answer); ``vector`` is the query's embedding under
    the plan's embedder when the caller already holds it (a matrix embeds each question once)."""
    return execute_many(ctx, [query], plan, version, generate=[generate], vectors=[vector])[0]


def execute_many(
    ctx: Context,
    queries: Sequence[str],
    plan: RetrievalPlan,
    version: int,
    *,
    generate: Sequence[bool],
    vectors: Sequence[NDArray[Any] | None],
) -> list[Run]:
    """``execute`` for each query at one version, the searches run together
    (``retrieve_many``): each run is the one ``execute`` would make of its query alone. A
    run's embed and retrieve timings are its share of the batch's."""
    for query in queries:
        check_text("the query", query)
    started = time.perf_counter()
    view = ctx.table.view(version)
    plan = plan.searching(ctx.table.vector_index(version))  # what this version's search is; recorded
    if plan.mode not in ("vector", "hybrid"):
        vectors = [None] * len(queries)
    else:
        vectors = [ctx.query_vector(plan, q) if v is None else v for q, v in zip(queries, vectors, strict=True)]
    embedded = time.perf_counter()
    found = search_many(view, plan, queries, vectors)
    retrieved = time.perf_counter()
    share = 1e3 / len(queries)
    recorded = replace(plan, engines=run_engines(view, plan, ctx.embedder))  # what ranked them, recorded with each
    runs = []
    for query, hits, answer in zip(queries, found, generate, strict=True):
        chunks = [_to_chunk(hit, rank) for rank, hit in enumerate(hits, start=1)]
        began = time.perf_counter()
        generation = ctx.generator.generate(query, chunks) if answer else None
        took = (time.perf_counter() - began) * 1e3
        timings = {"embed": (embedded - started) * share, "retrieve": (retrieved - embedded) * share, "generate": took}
        runs.append(Run(query, version, recorded, chunks, generation, sum(timings.values()), timings))
    return runs


def retrieve_many(
    ctx: Context, queries: Sequence[str], plan: RetrievalPlan, version: int, logged: Sequence[LoggedRun | None] = ()
) -> list[list[RetrievedChunk]]:
    """The chunks ``execute`` (without generation) retrieves for each query at ``version``
    with ``plan``. ``logged``: for each query (or fewer), a logged run that may stand for its
    search: one of that text at that version whose recorded plan is what this search would
    record (the ANN index searched and the engines included) is read back, its chunks' texts
    in one scan for all (not their PDF regions, which the log does not keep); the other
    queries are searched together (``execute_many``)."""
    view = ctx.table.view(version)
    searched = plan.searching(ctx.table.vector_index(version))
    recorded = replace(searched, engines=run_engines(view, searched, ctx.embedder))
    out: list[list[RetrievedChunk] | None] = [None] * len(queries)
    reused: dict[int, LoggedRun] = {}
    for i, (query, run) in enumerate(zip(queries, logged, strict=False)):
        if run is not None and run.query == query and run.index_version == version and run.plan == recorded:
            reused[i] = run
    if reused:
        texts = ctx.table.texts(version, sorted({c["chunk_id"] for run in reused.values() for c in run.chunks}))
        for i, run in reused.items():
            out[i] = logged_chunks(run, texts)
    todo = [i for i in range(len(queries)) if i not in reused]
    if todo:
        runs = execute_many(
            ctx, [queries[i] for i in todo], plan, version, generate=[False] * len(todo), vectors=[None] * len(todo)
        )
        for i, done in zip(todo, runs, strict=True):
            out[i] = done.chunks
    return [chunks or [] for chunks in out]


def logged_chunks(run: LoggedRun, texts: Mapping[str, str]) -> list[RetrievedChunk]:
    """A logged run's chunks as retrieved (id, source, rank, scores), with ``texts``: chunk id
    -> its text (at the run's version; a chunk's id names its text)."""
    out = []
    for logged in run.chunks:
        span = logged.get("charspan") or (0, 0)
        out.append(
            RetrievedChunk(
                chunk_id=str(logged["chunk_id"]),
                doc_id=str(logged.get("doc_id", "")),
                source=str(logged["source"]),
                text=texts.get(str(logged["chunk_id"]), ""),
                rank=int(logged["rank"]),
                score=float(logged["score"]),
                scores=dict(logged.get("scores") or {}),
                charspan=(int(span[0]), int(span[1])),
            )
        )
    return out


def _to_chunk(hit: Hit, rank: int) -> RetrievedChunk:
    row = hit.row
    regions = [Region(r["page"], r["x0"], r["y0"], r["x1"], r["y1"]) for r in row.get("regions") or []]
    return RetrievedChunk(
        chunk_id=row["chunk_id"],
        doc_id=row["doc_id"],
        source=row["source"],
        text=row["text"],
        rank=rank,
        score=float(hit.score),
        scores={k: float(v) for k, v in hit.scores.items()},
        charspan=(int(row["char_start"]), int(row["char_end"])),
        regions=regions,
    )


def record(ctx: Context, run: Run, query_id: str, *, prefix: str, config_id: str, extra: dict[str, Any]) -> None:
    """Write the run's events (``{prefix}query.received`` ... ``{prefix}query.completed``) atomically."""
    ctx.log.append_many(run_events(run, query_id, prefix=prefix, config_id=config_id, extra=extra))


def run_events(run: Run, query_id: str, *, prefix: str, config_id: str, extra: dict[str, Any]) -> list[Event]:
    """The events ``record`` writes for one run (callers that log many runs at once append them together)."""
    now = utc_now()
    v = run.index_version
    chunks = [
        {
            "chunk_id": c.chunk_id,
            "doc_id": c.doc_id,
            "source": c.source,
            "rank": c.rank,
            "score": c.score,
            "scores": c.scores,
            "charspan": list(c.charspan),
        }
        for c in run.chunks
    ]
    events = [
        Event(prefix + ev.QUERY_RECEIVED, {"text": run.query, **extra}, query_id=query_id, index_version=v, ts=now),
        Event(
            prefix + ev.RETRIEVAL_EXECUTED,
            {
                "index_version": v,
                "config_id": config_id,
                "plan": run.plan.to_dict(),
                "query": run.query,
                "chunks": chunks,
                "retrieve_ms": run.timings_ms["retrieve"],
            },
            query_id=query_id,
            index_version=v,
            ts=now,
        ),
        Event(
            prefix + ev.CONTEXT_ASSEMBLED,
            {
                "chunk_ids": [c.chunk_id for c in run.chunks],
                "chars": sum(len(c.text) for c in run.chunks),
            },
            query_id=query_id,
            index_version=v,
            ts=now,
        ),
    ]
    if run.generation is not None:
        events.append(
            Event(
                prefix + ev.GENERATION_EXECUTED,
                {
                    "model": run.generation.model,
                    "answer": run.generation.answer,
                    "usage": run.generation.usage,
                    "generate_ms": run.timings_ms["generate"],
                },
                query_id=query_id,
                index_version=v,
                ts=now,
            )
        )
    events.append(
        Event(
            prefix + ev.QUERY_COMPLETED,
            {
                "latency_ms": run.latency_ms,
                "timings_ms": run.timings_ms,
                **extra,
            },
            query_id=query_id,
            index_version=v,
            ts=now,
        )
    )
    return events


@dataclass(frozen=True)
class LoggedRun:
    """A past run (query or replay) read back from the event log: ``proj.run(query_id)``."""

    query_id: str
    query: str
    index_version: int
    plan: RetrievalPlan
    config_id: str
    chunks: list[dict[str, Any]]
    answer: str | None
    model: str | None
    latency_ms: float | None


def check_query_id(query_id: object) -> str:
    """A query id is a non-empty str: None is not "the newest run"."""
    if not isinstance(query_id, str):
        raise TypeError(f"a query id must be a str (QueryResult.query_id); got {type(query_id).__name__}")
    return query_id


def resolve_query_id(ctx: Context, query_id: object) -> str:
    """The full id of the query or replay that ``query_id`` names: itself, or the one run whose
    id begins with it (a unique prefix of at least four hex digits, as git takes a commit's).
    An ambiguous prefix is a NotFoundError that lists the candidates; an unknown id is returned
    as given, for the caller's own "no such run" error."""
    return resolve_in_log(ctx.log, query_id)


def resolve_in_log(log: EventLog, query_id: object) -> str:
    """``resolve_query_id`` in any log with runs (a federation's too)."""
    from ragtt.errors import NotFoundError

    query_id = check_query_id(query_id)
    wanted = query_id.strip().casefold()
    if not _SHORTEST_PREFIX <= len(wanted) < _FULL_ID or any(ch not in "0123456789abcdef" for ch in wanted):
        return query_id
    found = log.query_ids_starting(wanted, limit=_SHOWN + 1)
    if not found:
        return query_id
    if len(found) == 1:
        return found[0]
    shown = ", ".join(found[:_SHOWN]) + (" and more" if len(found) > _SHOWN else "")
    raise NotFoundError(f"query id prefix {query_id!r} is ambiguous: {shown}; give more characters")


def load_run(ctx: Context, query_id: str) -> LoggedRun:
    """A logged run by id, or by a unique prefix of its id (``LoggedRun.query_id`` is the full one)."""
    from ragtt.errors import NotFoundError

    query_id = resolve_query_id(ctx, query_id)
    run = _logged_run(query_id, ctx.log.query(query_id=query_id))
    if run is None:  # never run, or pruned
        from ragtt.retention import pruned_error

        pruned = pruned_error(ctx, query_id)
        if pruned is not None:
            raise pruned
        raise NotFoundError(
            f"no query or replay with id {query_id!r} in this project's event log "
            "(list them with proj.events.frame(types=['query.received']))"
        )
    return run


def load_runs(ctx: Context, query_ids: Sequence[str]) -> dict[str, LoggedRun]:
    """Many logged runs by their full ids, read in a few statements; an id with no run logged
    (never run, or pruned) is left out."""
    kinds = [
        p + t
        for p in ("", ev.REPLAY_PREFIX)
        for t in (ev.RETRIEVAL_EXECUTED, ev.GENERATION_EXECUTED, ev.QUERY_COMPLETED)
    ]
    found = {
        q: _logged_run(q, events) for q, events in ctx.log.runs(list(dict.fromkeys(query_ids)), types=kinds).items()
    }
    return {q: run for q, run in found.items() if run is not None}


def _logged_run(query_id: str, events: Sequence[Event]) -> LoggedRun | None:
    by_type = {e.type.removeprefix(ev.REPLAY_PREFIX): e for e in events}
    retrieval = by_type.get(ev.RETRIEVAL_EXECUTED)
    if retrieval is None:
        return None
    generation = by_type.get(ev.GENERATION_EXECUTED)
    completed = by_type.get(ev.QUERY_COMPLETED)
    payload = retrieval.payload
    return LoggedRun(
        query_id=query_id,
        query=payload["query"],
        index_version=int(payload["index_version"]),
        plan=RetrievalPlan.from_dict(payload["plan"]),
        config_id=payload["config_id"],
        chunks=payload["chunks"],
        answer=generation.payload["answer"] if generation else None,
        model=generation.payload["model"] if generation else None,
        latency_ms=completed.payload.get("latency_ms") if completed else None,
    )


def last_query(ctx: Context, text: str | None = None) -> str:
    """The id of the newest live query (replays and probes are not "the last run"); with
    ``text``, the newest live query of that question."""
    from ragtt.errors import NotFoundError

    for event in ctx.log.query(types=[ev.QUERY_RECEIVED], newest_first=True, limit=None if text else 1):
        if text is None or event.payload.get("text") == text:
            return str(event.query_id)
    raise NotFoundError(
        "no query has run in this project yet, so 'last' means nothing"
        if text is None
        else f"no live query of {text!r} has run in this project, so 'last' means nothing here"
    )


def resolve_pair(ctx: Context, left_id: str, right_id: str) -> tuple[str, str]:
    """Two run ids where either may be ``"last"``: the newest live run of the other one's
    question (one question is implied), or, for both, the newest live query."""
    left_id, right_id = resolve_query_id(ctx, left_id), resolve_query_id(ctx, right_id)
    if left_id == LAST and right_id == LAST:
        last = last_query(ctx)
        return last, last
    if right_id == LAST:
        return left_id, last_query(ctx, load_run(ctx, left_id).query)
    if left_id == LAST:
        return last_query(ctx, load_run(ctx, right_id).query), right_id
    return left_id, right_id
