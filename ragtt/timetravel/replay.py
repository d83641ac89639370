"""Replay: a logged query re-run against the exact version and plan it recorded."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ragtt._hashing import time_ordered_id
from ragtt.errors import ReplayError
from ragtt.index.engines import engine_changes
from ragtt.results import ReplayResult, RetrievedChunk
from ragtt.timetravel.run import Run, execute, load_run, record

if TYPE_CHECKING:
    from ragtt.context import Context
    from ragtt.index.retrieve import RetrievalPlan

__all__ = ["SCORE_TOLERANCE", "replay", "replay_text", "same_retrieval"]

SCORE_TOLERANCE = 1e-6


def replay(ctx: Context, query_id: str, *, generate: bool = False) -> ReplayResult:
    original = load_run(ctx, query_id)
    query_id = original.query_id  # a prefix names the run; the full id is what gets recorded
    if original.plan.table_name != ctx.config.table_name:
        raise ReplayError(
            f"query {query_id} searched table {original.plan.table_name!r}; this project is open on "
            f"{ctx.config.table_name!r}. Reopen it with PipelineConfig(table_name="
            f"{original.plan.table_name!r}) to replay it"
        )
    # Never the live index: the version and plan are the recorded ones, or nothing.
    run = execute(ctx, original.query, original.plan, original.index_version, generate=generate)
    if run.plan.index_uuid != original.plan.index_uuid:
        raise ReplayError(
            f"query {query_id} searched ANN index {original.plan.index_uuid or 'none (an exact scan)'} at "
            f"v{original.index_version}, but that version now has {run.plan.index_uuid or 'none'}: the "
            "index's files were changed outside ragtt; restore the index folder from a backup"
        )
    matches = same_retrieval(original.chunks, run.chunks)
    changes = engine_changes(original.plan.engines, run.plan.engines or {})
    result = _finish(
        ctx,
        run,
        original_query_id=query_id,
        matches=matches,
        config_id=original.config_id,
        extra={
            "original_query_id": query_id,
            "matches_original": matches,
            "engine_changes": [c.to_dict() for c in changes],
        },
    )
    return replace(result, engine_changes=changes, engines_recorded=original.plan.engines is not None)


def replay_text(ctx: Context, text: str, version: int, plan: RetrievalPlan, *, generate: bool, at: Any) -> ReplayResult:
    run = execute(ctx, text, plan, version, generate=generate)
    return _finish(
        ctx,
        run,
        original_query_id=None,
        matches=None,
        config_id=ctx.config.config_id,
        extra={"original_query_id": None, "at": str(at)},
    )


def same_retrieval(logged: list[dict[str, Any]], chunks: list[RetrievedChunk]) -> bool:
    """Same chunk ids in the same order with scores equal to SCORE_TOLERANCE."""
    if [c["chunk_id"] for c in logged] != [c.chunk_id for c in chunks]:
        return False
    return all(abs(float(a["score"]) - b.score) <= SCORE_TOLERANCE for a, b in zip(logged, chunks, strict=True))


def _finish(
    ctx: Context,
    run: Run,
    *,
    original_query_id: str | None,
    matches: bool | None,
    config_id: str,
    extra: dict[str, Any],
) -> ReplayResult:
    replay_id = time_ordered_id()
    record(ctx, run, replay_id, prefix="replay.", config_id=config_id, extra=extra)
    gen = run.generation
    return ReplayResult(
        query_id=replay_id,
        text=run.query,
        index_version=run.index_version,
        config_id=config_id,
        chunks=run.chunks,
        answer=gen.answer if gen else None,
        model=gen.model if gen else None,
        latency_ms=run.latency_ms,
        original_query_id=original_query_id,
        matches_original=matches,
    )
