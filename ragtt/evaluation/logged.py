"""Evaluations read back from the log, never computed: what a browser showing a project's
history (the JupyterLab sidebar, a dashboard) may ask for with a GET.

Each evaluated version left one ``evaluation.cells`` event (``ragtt.evaluation.run``); its
cells name the logged runs, whose ``replay.query.received`` events hold the questions and whose
``replay.retrieval.executed`` events hold the plan, and the dataset's ``evaluation.dataset``
event (found by its fingerprint, the event's ``doc_id``), which holds the references of those
questions. So a matrix is rebuilt from the log alone, whatever dataset file it came from, even
one that is gone, and explains its regressions as the evaluation did. Cells logged before
datasets were (no fingerprint) still read back, with their questions only: their
regressions' reasons are lineage sentences.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragtt.errors import NotFoundError
from ragtt.evaluation.matrix import Column, HistoryMatrix
from ragtt.events import types as ev

if TYPE_CHECKING:
    from ragtt.context import Context
    from ragtt.evaluation.dataset import EvalItem

__all__ = ["logged_evaluations", "read_evaluation"]


def _dataset_rows(ctx: Context, fingerprint: str) -> dict[str, EvalItem]:
    """The rows, by id, of the dataset whose ``EvalDataset.fingerprint`` is ``fingerprint``, as
    the log holds them ({}: it does not: no evaluation of it was logged since datasets are).
    One indexed lookup (the event's ``doc_id``): the other datasets' rows are never read."""
    from ragtt.evaluation.dataset import EvalItem

    event = ctx.log.last(ev.EVALUATION_DATASET, doc_id=fingerprint)
    items = [EvalItem.from_dict(i) for i in event.payload["items"]] if event is not None else []
    return {item.id: item for item in items}


def logged_evaluations(ctx: Context) -> list[dict[str, Any]]:
    """Every evaluation in the log, the newest first: its id, dataset name and file (None when
    the log does not say: an in-memory dataset, or one logged before they were recorded), the
    versions evaluated, how many questions, its metrics, the plan's ``mode`` and ``top_k``, and
    when its last version was logged."""
    found: dict[str, dict[str, Any]] = {}
    first_cells: dict[str, list[dict[str, Any]]] = {}
    for event in ctx.log.query(types=ev.EVALUATION_CELLS):
        p = event.payload
        first_cells.setdefault(p["evaluation_id"], p["cells"])
        entry = found.setdefault(
            p["evaluation_id"],
            {"evaluation_id": p["evaluation_id"], "dataset": None, "source": None, "versions": [], "questions": 0},
        )
        entry["dataset"] = p.get("dataset") or entry["dataset"]
        entry["source"] = p.get("source") or entry["source"]
        if int(p["version"]) not in entry["versions"]:
            entry["versions"].append(int(p["version"]))
        entry["questions"] = max(entry["questions"], len(p["cells"]))
        entry["metrics"] = list(p["metrics"])
        entry["ts"] = event.ts.isoformat()
    # The plan every cell ran (mode, top_k): one run's retrieval event says it for the whole matrix.
    firsts = {e: cells[0]["query_id"] for e, cells in first_cells.items() if cells}
    runs = ctx.log.runs(list(firsts.values()), types=[ev.REPLAY_PREFIX + ev.RETRIEVAL_EXECUTED])
    for evaluation_id, entry in found.items():
        entry["versions"].sort()
        events = runs.get(firsts.get(evaluation_id, ""), [])
        plan = events[0].payload.get("plan", {}) if events else {}
        entry["mode"], entry["top_k"] = plan.get("mode"), plan.get("top_k")
    return sorted(found.values(), key=lambda e: e["ts"], reverse=True)


def read_evaluation(ctx: Context, evaluation_id: str, at: Sequence[int] | None = None) -> HistoryMatrix:
    """The matrix of ``evaluation_id`` at the versions ``at`` (None: every version the log holds for
    it), from the log alone (no retrieval, no scoring, nothing written). An evaluation's id
    names its dataset and plan, not its versions: evaluating it later at more versions adds
    columns to the same id, so a view of one evaluation names its versions too.
    ``NotFoundError`` for an id never logged, or a version it was never evaluated at."""
    from ragtt.evaluation.dataset import EvalDataset, EvalItem
    from ragtt.evaluation.run import build_matrix, version_times
    from ragtt.index.retrieve import RetrievalPlan
    from ragtt.index.snapshots import version_labels

    done: dict[int, list[dict[str, Any]]] = {}
    metrics: list[str] = []
    dataset = fingerprint = None
    for event in ctx.log.query(types=ev.EVALUATION_CELLS):
        p = event.payload
        if p.get("evaluation_id") == evaluation_id:
            done.setdefault(int(p["version"]), p["cells"])
            metrics = list(p["metrics"])
            dataset = p.get("dataset") or dataset
            fingerprint = p.get("dataset_fingerprint") or fingerprint
    if done and at is not None:
        missing = [v for v in at if v not in done]
        if missing:
            raise NotFoundError(
                f"evaluation {evaluation_id!r} was never evaluated at version(s) {', '.join(map(str, missing))} "
                f"(logged at {', '.join(map(str, sorted(done)))})"
            )
        done = {v: done[v] for v in at}
    if not done:
        known = ", ".join(e["evaluation_id"] for e in logged_evaluations(ctx)[:5]) or "none yet"
        raise NotFoundError(
            f"no evaluation {evaluation_id!r} in this project's log (logged: {known}); run proj.evaluate(dataset) first"
        )
    versions = sorted(done)
    # Each question's newest run names its text and the plan (every cell ran the same plan).
    newest = {c["question_id"]: c["query_id"] for v in versions for c in done[v]}
    runs = ctx.log.runs(
        list(newest.values()), types=[ev.REPLAY_PREFIX + ev.QUERY_RECEIVED, ev.REPLAY_PREFIX + ev.RETRIEVAL_EXECUTED]
    )
    texts: dict[str, str] = {}
    plan: dict[str, Any] = {}
    for question_id, query_id in newest.items():
        for event in runs[query_id]:
            if event.type == ev.REPLAY_PREFIX + ev.QUERY_RECEIVED:
                texts[question_id] = str(event.payload.get("text", ""))
            elif not plan:
                plan = dict(event.payload.get("plan") or {})
    # The questions the cells hold, each with its dataset row as logged (references and all),
    # else (cells from before datasets were logged) its text alone.
    rows = _dataset_rows(ctx, fingerprint) if fingerprint else {}
    asked = dict.fromkeys(c["question_id"] for v in versions for c in done[v])
    items = [rows.get(q) or EvalItem(q, texts.get(q, "")) for q in asked]
    times = version_times(ctx)
    labels = version_labels(ctx)
    columns = [Column(v, labels.get(v), times.get(v, "")) for v in versions]
    data = EvalDataset(dataset or evaluation_id, items)
    return build_matrix(
        ctx, data, RetrievalPlan.from_dict(plan), metrics, evaluation_id, columns, done, 0, len(versions)
    )
