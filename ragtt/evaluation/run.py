"""``evaluate``: every question of a dataset at every chosen version, each cell a logged run.

Cost: each distinct question is embedded once for the whole matrix; the versions are walked
in order, each checked out once (``ChunkTable.view`` caches it) and searched for every
question at once through ``ragtt.timetravel.run.execute_many``, whose batch of one is the
``execute`` replays use; a worker thread searches the next version while this one is scored
and logged (LanceDB's searches leave Python's lock free). One version's
runs, judge verdicts and its ``evaluation.cells`` event (the cells' metrics and query ids)
are appended in ONE transaction: a process that dies mid-matrix leaves whole versions in
the log, never half of one. The first version's append also holds the dataset's rows, in
one ``evaluation.dataset`` event per dataset content (the cells name it by its
fingerprint, the event's indexed ``doc_id``), so a matrix read back from the log explains its
regressions as this one does.
An evaluation is named by a hash of the dataset, the plan, the metrics, the judge and the
generator (``evaluation_id``); evaluating again reads the versions already logged under
that name back and searches only the others.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from os import PathLike
from typing import TYPE_CHECKING, Any

from ragtt._hashing import sha256_hex, time_ordered_id
from ragtt.errors import NotFoundError
from ragtt.evaluation.dataset import EvalDataset, EvalItem, as_dataset
from ragtt.evaluation.judge import LiteLLMJudge, as_judge
from ragtt.evaluation.matrix import Column, HistoryMatrix
from ragtt.evaluation.metrics import JUDGED_METRICS, metric_order, needs_answer, score, wanted_metrics
from ragtt.evaluation.reasons import Reasons
from ragtt.evaluation.sources import Shingled
from ragtt.events import types as ev
from ragtt.events.store import Event

if TYPE_CHECKING:
    from ragtt.context import At, Context
    from ragtt.index.retrieve import RetrievalPlan

__all__ = ["at_spec", "build_matrix", "evaluate", "resolve_columns", "version_times"]

_PROGRESS_MIN_CELLS = 200
_NAMED = ("snapshots", "versions", "latest")


def at_spec(values: list[str]) -> str | list[Any]:
    """``at`` as written on a command line or in a URL (comma-separated, maybe repeated), as
    ``evaluate`` takes it: a named set alone, else versions (digits) and labels."""
    items = [part.strip() for value in values for part in value.split(",") if part.strip()]
    if len(items) == 1 and items[0] in _NAMED:
        return items[0]
    return [int(i) if i.isascii() and i.isdigit() else i for i in items]


_PROGRESS_DELAY_S = 2.0


def evaluate(
    ctx: Context,
    dataset: Any,
    *,
    at: str | Sequence[At] | At = "snapshots",
    mode: str | None = None,
    top_k: int | None = None,
    metrics: Sequence[str] | None = None,
    judge: Any = None,
    read_only: bool = False,
) -> HistoryMatrix:
    """``read_only``: the matrix as logged, read back: nothing is searched, logged or asked of
    a model, and a version not evaluated yet is a NotFoundError."""
    e = _Evaluation(ctx, dataset, at, mode, top_k, metrics, judge)
    done = _read_back(ctx, e.evaluation_id, e.versions)
    todo = [v for v in e.versions if v not in done]
    if todo and read_only:
        listed = ", ".join(map(str, todo[:10])) + (" ..." if len(todo) > 10 else "")
        raise NotFoundError(
            f"{e.data.name!r} has not been evaluated with this plan at version(s) {listed}; evaluate it "
            "first (proj.evaluate, `ragtt eval`, POST /evaluate)"
        )
    if todo:
        # The file it came from, so a reader of the log can name it (the sidebar's "%ragtt eval" line).
        source = str(dataset) if isinstance(dataset, str | PathLike) else None
        done.update(_search(ctx, e.data, e.plan, e.metrics, e.judge, e.generate, e.evaluation_id, todo, source))
    return e.matrix(done, len(todo))


class _Evaluation:
    """What ``evaluate``'s arguments name: the dataset, plan, metrics, columns and the
    evaluation's id (a hash of them), checked before anything is read or searched."""

    def __init__(
        self,
        ctx: Context,
        dataset: Any,
        at: str | Sequence[At] | At,
        mode: str | None,
        top_k: int | None,
        metrics: Sequence[str] | None,
        judge: Any,
    ) -> None:
        self.ctx = ctx
        self.data = as_dataset(dataset)
        self.judge = as_judge(judge)
        ctx.check_embedder()
        self.plan = ctx.plan(top_k=top_k, mode=mode)
        self.metrics = wanted_metrics(self.data, metrics, self.plan.top_k, self.judge is not None)
        self.generate = needs_answer(self.metrics)
        self.columns = resolve_columns(ctx, at)
        self.evaluation_id = _evaluation_id(ctx, self.data, self.plan, self.metrics, self.judge, self.generate)
        self.versions = list(dict.fromkeys(c.version for c in self.columns))

    def matrix(self, done: dict[int, list[dict[str, Any]]], computed: int) -> HistoryMatrix:
        reused = len(self.versions) - computed
        return build_matrix(
            self.ctx, self.data, self.plan, self.metrics, self.evaluation_id, self.columns, done, computed, reused
        )


def resolve_columns(ctx: Context, at: str | Sequence[At] | At) -> list[Column]:
    """The columns ``at`` names, in version order: "snapshots", "versions", "latest", or a list of
    versions, labels and datetimes (which may hold those three words too)."""
    from ragtt.index.snapshots import version_labels

    times = version_times(ctx)
    labels = version_labels(ctx)
    items = [at] if isinstance(at, int | str | datetime) else list(at)
    if not items:
        raise NotFoundError("at names no version: give 'snapshots', 'versions', 'latest' or a non-empty list")
    tags: dict[str, int] | None = None
    pairs: list[tuple[int, str | None]] = []
    for item in items:
        if item in _NAMED:
            pairs += _named(ctx, str(item), labels)
            continue
        version = ctx.resolve(item)
        if tags is None:
            tags = ctx.table.tags()
        pairs.append((version, item if isinstance(item, str) and item in tags else labels.get(version)))
    unique = sorted(dict.fromkeys(pairs), key=lambda p: p[0])  # stable: snapshots of one version keep their order
    return [Column(v, label, times.get(v, "")) for v, label in unique]


def version_times(ctx: Context) -> dict[int, str]:
    """Each version's time as the Timeline places it and ``at=<datetime>`` finds it
    (``EventLog.version_times``: a release date where the ingest gave one, else the commit
    time, never later than a later version's)."""
    from ragtt.events.time import format_ts

    return {v: format_ts(when) for v, when in ctx.log.version_times().items()}


def _named(ctx: Context, name: str, labels: dict[int, str]) -> list[tuple[int, str | None]]:
    from ragtt.index.snapshots import list_snapshots

    if name == "latest":
        return [(ctx.version, labels.get(ctx.version))]
    if name == "versions":  # every logged version but the empty table's creation
        return [(v, labels.get(v)) for v, _, op in ctx.log.versions.rows() if op != "create"]
    snaps = sorted(list_snapshots(ctx), key=lambda s: (s.index_version, s.created_at))
    if not snaps:
        raise NotFoundError(
            "the project has no snapshots to evaluate at; take some (proj.snapshot(label)) or pass "
            "at='versions' or at='latest'"
        )
    return [(s.index_version, s.label) for s in snaps]


def _evaluation_id(
    ctx: Context, data: EvalDataset, plan: RetrievalPlan, metrics: list[str], judge: LiteLLMJudge | None, generate: bool
) -> str:
    recipe = {
        "dataset": data.fingerprint,
        "plan": plan.to_dict(),
        "metrics": metrics,
        "judge": judge.identity if judge else None,
        "generator": getattr(ctx.generator, "model_id", type(ctx.generator).__name__) if generate else None,
    }
    return "eval-" + sha256_hex(json.dumps(recipe, sort_keys=True))[:20]


def _read_back(ctx: Context, evaluation_id: str, versions: list[int]) -> dict[int, list[dict[str, Any]]]:
    """version -> its logged cells, for the versions this evaluation has already searched."""
    wanted = set(versions)
    found: dict[int, list[dict[str, Any]]] = {}
    for event in ctx.log.query(types=ev.EVALUATION_CELLS):
        p = event.payload
        if p.get("evaluation_id") == evaluation_id and p["version"] in wanted:
            found.setdefault(int(p["version"]), p["cells"])
    if found and ctx.log.last(ev.HISTORY_PRUNED) is not None:
        # A prune may have forgotten some cells' runs: those versions are searched again.
        ids = [c["query_id"] for cells in found.values() for c in cells]
        logged = ctx.log.runs(ids, types=[ev.REPLAY_PREFIX + ev.QUERY_COMPLETED])
        found = {v: cells for v, cells in found.items() if all(logged[c["query_id"]] for c in cells)}
    return found


def _search(
    ctx: Context,
    data: EvalDataset,
    plan: RetrievalPlan,
    metrics: list[str],
    judge: LiteLLMJudge | None,
    generate: bool,
    evaluation_id: str,
    versions: list[int],
    source: str | None,
) -> dict[int, list[dict[str, Any]]]:
    from ragtt.timetravel.run import Run, execute_many, run_events

    texts = list(dict.fromkeys(i.question for i in data.items))
    vectors: dict[str, Any] = {}
    if plan.mode in ("vector", "hybrid"):  # each distinct question embedded (or read from the cache) once
        vectors = dict(zip(texts, ctx.cache.embed(ctx.embedder, texts)[0], strict=True))
    shingled = Shingled(ctx)
    progress = _progress(ctx, len(versions) * len(data.items))
    out: dict[int, list[dict[str, Any]]] = {}
    pool = ThreadPoolExecutor(1, thread_name_prefix="ragtt-evaluate")
    questions = [item.question for item in data.items]
    answers = [generate and bool(item.reference or item.must_contain or judge) for item in data.items]
    question_vectors = [vectors.get(q) for q in questions]
    by_passage = any(i.reference_contexts for i in data.items) and bool(
        {"context_recall", "context_precision"} & set(metrics)
    )
    config_id = ctx.config.config_id  # a hash of the config: once, not per cell
    fingerprint = data.fingerprint
    # The dataset's rows, once per content, with the first version's cells (what reasons read back).
    events: list[Event] = []
    if not ctx.log.exists(ev.EVALUATION_DATASET, doc_id=fingerprint):
        rows = {"fingerprint": fingerprint, "items": [i.to_dict() for i in data.items]}
        events.append(Event(ev.EVALUATION_DATASET, rows, doc_id=fingerprint))

    def search(version: int) -> tuple[list[Run], dict[str, str]]:
        """``version``'s questions searched together (one vector search, one trip for BM25), and
        its sources' documents when passages are matched: every read of the index a version
        needs, on the worker thread, while the main one scores and logs the version before."""
        runs = execute_many(ctx, questions, plan, version, generate=answers, vectors=question_vectors)
        return runs, shingled.keys(version) if by_passage else {}

    try:
        searching = pool.submit(search, versions[0])
        for k, version in enumerate(versions):
            cells = []
            runs, doc_keys = searching.result()
            if k + 1 < len(versions):
                searching = pool.submit(search, versions[k + 1])
            source_shingles = shingled.of(doc_keys)
            for item, run in zip(data.items, runs, strict=True):
                query_id = time_ordered_id()
                extra = {
                    "original_query_id": None,
                    "at": str(version),
                    "purpose": "evaluation",
                    "evaluation_id": evaluation_id,
                    "question_id": item.id,
                }
                events += run_events(run, query_id, prefix=ev.REPLAY_PREFIX, config_id=config_id, extra=extra)
                answer = run.generation.answer if run.generation is not None else None
                values = score(item, run.chunks, answer, metrics, source_shingles)
                unparseable: dict[str, str] = {}
                if judge is not None and answer is not None:
                    judged = [m for m in metrics if m in JUDGED_METRICS and (m != "correctness" or item.reference)]
                    if judged:
                        verdict = judge.verdict(item.question, answer, run.chunks, item.reference, judged)
                        events.append(
                            Event(
                                ev.JUDGE_VERDICT,
                                {
                                    "model": verdict.model,
                                    "messages": verdict.messages,
                                    "raw": verdict.raw,
                                    "scores": verdict.scores,
                                    "evaluation_id": evaluation_id,
                                },
                                query_id=query_id,
                                index_version=version,
                            )
                        )
                        if verdict.scores is None:
                            unparseable = dict.fromkeys(judged, verdict.raw)
                        else:
                            values.update(verdict.scores)
                cells.append(
                    {"question_id": item.id, "query_id": query_id, "values": values, "unparseable": unparseable}
                )
                if progress is not None:
                    progress.update(1)
            payload = {
                "evaluation_id": evaluation_id,
                "version": version,
                "metrics": metrics,
                "cells": cells,
                "dataset": data.name,
                "source": source,
                "dataset_fingerprint": fingerprint,
            }
            events.append(Event(ev.EVALUATION_CELLS, payload, index_version=version))
            ctx.log.append_many(events)  # the version's runs and cells together, or nothing
            events = []
            out[version] = cells
    finally:
        pool.shutdown(cancel_futures=True)
        if progress is not None:
            progress.close()
    return out


def _progress(ctx: Context, cells: int) -> Any:
    if not ctx.progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(
        total=cells,
        desc="ragtt evaluate",
        unit="cell",
        leave=False,
        delay=0 if cells >= _PROGRESS_MIN_CELLS else _PROGRESS_DELAY_S,
    )


def build_matrix(
    ctx: Context,
    data: EvalDataset,
    plan: RetrievalPlan,
    metrics: list[str],
    evaluation_id: str,
    columns: list[Column],
    done: dict[int, list[dict[str, Any]]],
    computed: int,
    reused: int,
) -> HistoryMatrix:
    """The matrix of ``columns`` from each version's logged cells (``done``: version -> cells)."""
    index = {item.id: qi for qi, item in enumerate(data.items)}
    cells: dict[str, list[list[float | None]]] = {m: [[None] * len(columns) for _ in data.items] for m in metrics}
    query_ids: list[list[str | None]] = [[None] * len(columns) for _ in data.items]
    unparseable = []
    for ci, column in enumerate(columns):
        for cell in done[column.version]:
            qi = index[cell["question_id"]]
            query_ids[qi][ci] = cell["query_id"]
            for metric, value in cell["values"].items():
                cells[metric][qi][ci] = float(value)
            for metric, raw in cell["unparseable"].items():
                unparseable.append(
                    {"question_id": cell["question_id"], "version": column.version, "metric": metric, "raw": raw}
                )
    bad = {u["metric"] for u in unparseable}
    present = [m for m in metrics if m in bad or any(v is not None for row in cells[m] for v in row)]
    items: list[EvalItem] = data.items
    return HistoryMatrix(
        dataset=data.name,
        evaluation_id=evaluation_id,
        plan=plan.to_dict(),
        metrics=sorted(present, key=metric_order),
        question_ids=[i.id for i in items],
        questions=[i.question for i in items],
        columns=columns,
        cells={m: cells[m] for m in present},
        query_ids=query_ids,
        unparseable=unparseable,
        computed_versions=computed,
        reused_versions=reused,
        explain=Reasons(ctx, items),
    )
