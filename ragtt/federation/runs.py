"""A federated run: every member searched at one version with one plan, the lists fused, and
the whole run logged as ONE run in the federation's log.

A live query and its replay run the same ``run``: the live query chooses each member's
current version and plan, the replay reads back the ones recorded, and both search through
the member's own retrieval path (``Project.retrieve_run``, the path its queries and replays
take) and fuse with ``fuse``. Members are searched at once, one thread each: LanceDB searches
without the GIL, so a federation costs about its slowest member, not their sum.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from ragtt._hashing import sha256_hex, time_ordered_id
from ragtt.errors import NotFoundError, ReplayError
from ragtt.events import types as ev
from ragtt.events.base import Event
from ragtt.events.time import utc_now
from ragtt.federation.fusion import fuse
from ragtt.federation.results import FederatedChunk, FederatedResult, MemberRun

if TYPE_CHECKING:
    from ragtt.events.base import EventLog
    from ragtt.generate import Generator
    from ragtt.index.retrieve import RetrievalPlan
    from ragtt.project import Project
    from ragtt.timetravel.run import Run

__all__ = ["LAST", "LoggedFederatedRun", "Search", "load", "newest_query", "run"]

LAST = "last"  # stands for a query id: the newest live federated query


@dataclass(frozen=True)
class Search:
    """What one member searches in a run: its version and its plan."""

    name: str
    project: Project
    version: int
    plan: RetrievalPlan | None  # None: the member's live plan
    replaying: bool = False  # a logged run's replay: the version's ANN index must be the one it recorded


@dataclass(frozen=True)
class LoggedFederatedRun:
    """A federated run read back from the log (``retrieval.executed``'s payload, unprefixed)."""

    query_id: str
    query: str
    top_k: int
    fusion: dict[str, Any]
    members: list[dict[str, Any]]
    fused: list[dict[str, Any]]


def run(
    log: EventLog,
    pool: ThreadPoolExecutor,
    text: str,
    searches: Sequence[Search],
    fusion: dict[str, Any],
    top_k: int | None,
    generator: Generator | None,
    *,
    prefix: str = "",
    extra: dict[str, Any] | None = None,
    original: LoggedFederatedRun | None = None,
) -> FederatedResult:
    """Search, fuse, answer (``generator``), log one run; a replay passes its ``original``."""
    started = time.perf_counter()
    found = list(pool.map(lambda s: _search(s, text), searches))
    retrieved = time.perf_counter()
    k = top_k or max(r.plan.top_k for r in found)
    fused = fuse([(s.name, r.chunks) for s, r in zip(searches, found, strict=True)], fusion["weights"], k, fusion["k"])
    by_id = {(s.name, c.chunk_id): c for s, r in zip(searches, found, strict=True) for c in r.chunks}
    chunks = [
        FederatedChunk(
            rank,
            f.score,
            f.best.member,
            f.best.chunk_id,
            f.best.source,
            by_id[(f.best.member, f.best.chunk_id)].text,
            f.text_hash,
            f.contributions,
        )
        for rank, f in enumerate(fused, start=1)
    ]
    fused_at = time.perf_counter()
    generation = None
    if generator is not None:
        context = [replace(by_id[(c.member, c.chunk_id)], rank=c.rank, score=c.score) for c in chunks]
        generation = generator.generate(text, context)
    done = time.perf_counter()
    timings = {
        "retrieve": (retrieved - started) * 1e3,
        "fuse": (fused_at - retrieved) * 1e3,
        "generate": (done - fused_at) * 1e3,
    }
    members = [
        MemberRun(
            s.name,
            s.project.project_id,
            r.index_version,
            r.plan.to_dict(),
            [c.chunk_id for c in r.chunks],
            r.timings_ms["retrieve"],
        )
        for s, r in zip(searches, found, strict=True)
    ]
    matches = None if original is None else _same(original, found, chunks)
    extra = dict(extra or {}, **({} if original is None else {"matches_original": matches}))
    query_id = time_ordered_id()
    result = FederatedResult(
        query_id,
        text,
        k,
        chunks,
        members,
        fusion,
        generation.answer if generation else None,
        generation.model if generation else None,
        sum(timings.values()),
        original_query_id=original.query_id if original else None,
        matches_original=matches,
        at=extra.get("at"),
    )
    log.append_many(_events(result, found, timings, prefix, extra))
    return result


def _search(search: Search, text: str) -> Run:
    found = search.project.retrieve_run(text, search.version, search.plan)
    recorded = search.plan.index_uuid if search.plan is not None else None
    if search.replaying and found.plan.index_uuid != recorded:
        raise ReplayError(
            f"member {search.name!r} searched ANN index {recorded or 'none (an exact scan)'} at "
            f"v{search.version}, but that version now has {found.plan.index_uuid or 'none'}: the member's index "
            "files were changed outside ragtt; restore its index folder from a backup"
        )
    return found


def _same(original: LoggedFederatedRun, found: Sequence[Run], chunks: Sequence[FederatedChunk]) -> bool:
    """Each member's list as recorded (``same_retrieval``) and the fused list identical."""
    from ragtt.timetravel.replay import same_retrieval

    members = all(same_retrieval(m["chunks"], r.chunks) for m, r in zip(original.members, found, strict=True))
    fused = [(f["member"], f["chunk_id"], f["score"]) for f in original.fused]
    return members and fused == [(c.member, c.chunk_id, c.score) for c in chunks]


def _events(
    result: FederatedResult, found: Sequence[Run], timings: dict[str, float], prefix: str, extra: dict[str, Any]
) -> list[Event]:
    now, qid = utc_now(), result.query_id
    retrieval: ev.FederatedRetrieval = {
        "query": result.text,
        "top_k": result.top_k,
        "fusion": result.fusion,
        "members": [
            {
                "name": m.name,
                "project_id": m.project_id,
                "index_version": m.index_version,
                "plan": m.plan,
                "retrieve_ms": m.retrieve_ms,
                "chunks": [
                    {
                        "chunk_id": c.chunk_id,
                        "source": c.source,
                        "rank": c.rank,
                        "score": c.score,
                        "text_hash": sha256_hex(c.text),
                    }
                    for c in r.chunks
                ],
            }
            for m, r in zip(result.members, found, strict=True)
        ],
        "fused": [
            {
                "chunk_id": c.chunk_id,
                "member": c.member,
                "source": c.source,
                "text_hash": c.text_hash,
                "rank": c.rank,
                "score": c.score,
                "contributions": [asdict(x) for x in c.contributions],
            }
            for c in result.chunks
        ],
        "retrieve_ms": timings["retrieve"],
    }
    events = [
        Event(prefix + ev.QUERY_RECEIVED, {"text": result.text, "top_k": result.top_k, **extra}, query_id=qid, ts=now),
        Event(prefix + ev.RETRIEVAL_EXECUTED, dict(retrieval), query_id=qid, ts=now),
    ]
    if result.answer is not None:
        events.append(
            Event(
                prefix + ev.GENERATION_EXECUTED,
                {"model": result.model, "answer": result.answer, "generate_ms": timings["generate"]},
                query_id=qid,
                ts=now,
            )
        )
    events.append(
        Event(
            prefix + ev.QUERY_COMPLETED,
            {"latency_ms": result.latency_ms, "timings_ms": timings, **extra},
            query_id=qid,
            ts=now,
        )
    )
    return events


def load(log: EventLog, query_id: str) -> LoggedFederatedRun:
    """A logged federated query or replay, by its id or a unique prefix of it (four hex digits at
    least); ``"last"`` is the newest live query."""
    from ragtt.timetravel.run import check_query_id, resolve_in_log

    query_id = newest_query(log) if check_query_id(query_id) == LAST else resolve_in_log(log, query_id)
    events = log.query(query_id=query_id, types=[ev.RETRIEVAL_EXECUTED, ev.REPLAY_PREFIX + ev.RETRIEVAL_EXECUTED])
    if not events:
        raise NotFoundError(
            f"no federated query or replay with id {query_id!r} in this federation's log "
            "(list them with fed.events.frame(types=['query.received']))"
        )
    data = events[0].payload
    return LoggedFederatedRun(
        query_id, data["query"], int(data["top_k"]), data["fusion"], data["members"], data["fused"]
    )


def newest_query(log: EventLog) -> str:
    event = log.last(ev.QUERY_RECEIVED)
    if event is None or event.query_id is None:
        raise NotFoundError("no federated query has run yet, so 'last' means nothing")
    return event.query_id
