"""What each metric counts, for one question's run at one version. Every value is in [0, 1];
a metric a question has nothing to score against (no references) is absent, never 0.

* ``context_recall``: the share of the question's reference passages the run found, by the
  golden-passage matching of ``ragtt test run`` (``ragtt.timetravel.golden``: by content,
  so re-chunking does not break it; a passage is only found while its source still holds it).
* ``context_precision``: RAGAS's rank-weighted precision, mean over the relevant ranks k of
  precision@k. A chunk is relevant when it carries a found reference passage (its chunk, or
  at least ``REACH`` of its words), or, with qrels only, when its chunk id or source is graded > 0.
* ``ndcg@k``, ``recall@k``, ``mrr``: against the graded qrels (``relevant``), over the
  ranked ids of the run: a chunk stands for its chunk id when the qrels judge it, else for
  its source (or the source's file name without extension, when that is the judged id), and
  a document's later chunks are dropped (ranks count documents, each at its
  best chunk's rank). nDCG uses linear gains, as trec_eval does.
* ``answer_match``: the share of the reference answer's words (case-folded, without a, an,
  the) that the answer holds, counted with multiplicity.
* ``contains``: the share of ``must_contain`` strings in the answer (case and spacing folded).
* ``faithfulness``, ``correctness``: an LLM judge's verdict (``ragtt.evaluation.judge``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from ragtt.errors import ConfigError
from ragtt.index.retrieve import tokens
from ragtt.timetravel.golden import DEFAULT_MATCH, REACH, PassageScore, containment, score_passages, shingles

if TYPE_CHECKING:
    from ragtt.evaluation.dataset import EvalDataset, EvalItem
    from ragtt.results import RetrievedChunk

__all__ = [
    "ANSWER_METRICS",
    "JUDGED_METRICS",
    "found_passages",
    "holds",
    "judged_id",
    "metric_order",
    "needs_answer",
    "score",
    "wanted_metrics",
]

RANKED = ("ndcg", "recall")  # named with their cut-off: ndcg@10
BASES = ("context_recall", "context_precision", "ndcg", "recall", "mrr", "answer_match", "contains")
ANSWER_METRICS = ("answer_match", "contains")
JUDGED_METRICS = ("faithfulness", "correctness")
ORDER = (*BASES, *JUDGED_METRICS)
_ARTICLES = frozenset({"a", "an", "the"})
# what each metric is scored against: a question without any of these leaves it absent
SCORED_AGAINST = {
    "context_recall": ("reference_contexts",),
    "context_precision": ("reference_contexts", "relevant"),
    "ndcg": ("relevant",),
    "recall": ("relevant",),
    "mrr": ("relevant",),
    "answer_match": ("reference",),
    "contains": ("must_contain",),
    "correctness": ("reference",),
}

SourceShingles = Callable[[str], AbstractSet[tuple[str, ...]]]


def metric_order(name: str) -> tuple[int, str]:
    """Sort key: the order the module docstring lists them in."""
    base = name.split("@")[0]
    return (ORDER.index(base) if base in ORDER else len(ORDER), name)


def wanted_metrics(dataset: EvalDataset, metrics: Sequence[str] | None, top_k: int, judge: bool) -> list[str]:
    """The metrics to compute, by name (``ndcg`` -> ``ndcg@top_k``); None: every one the data supports."""
    has = {c for c in {c for cs in SCORED_AGAINST.values() for c in cs} if any(getattr(i, c) for i in dataset.items)}
    if metrics is None:
        chosen = []
        if "reference_contexts" in has:
            chosen.append("context_recall")
        if has & {"reference_contexts", "relevant"}:
            chosen.append("context_precision")
        if "relevant" in has:
            chosen += [f"ndcg@{top_k}", f"recall@{top_k}", "mrr"]
        if "reference" in has:
            chosen.append("answer_match")
        if "must_contain" in has:
            chosen.append("contains")
        if judge:
            chosen += ["faithfulness", "correctness"] if "reference" in has else ["faithfulness"]
        if not chosen:
            raise ConfigError(
                "the dataset has nothing to score against: give reference_contexts, relevant, reference or "
                "must_contain, or a judge"
            )
        return chosen
    if isinstance(metrics, str):
        metrics = [metrics]
    if not metrics:
        raise ConfigError("metrics names no metric; leave it out for every metric the dataset can be scored on")
    out = []
    for name in metrics:
        base, _, cut = str(name).partition("@")
        if base not in ORDER or (cut and base not in RANKED) or (cut and not cut.isdigit()):
            raise ConfigError(
                f"unknown metric {name!r}; the metrics are context_recall, context_precision, ndcg@k, recall@k, "
                "mrr, answer_match, contains, faithfulness, correctness"
            )
        if base in JUDGED_METRICS and not judge:
            raise ConfigError(f"{base} is an LLM judge's verdict: pass judge='<litellm model>'")
        k = int(cut) if cut else top_k
        if base in RANKED and not 1 <= k <= top_k:
            raise ConfigError(f"{name} needs the top {k}, but runs retrieve {top_k}: pass top_k={k} (--top-k {k})")
        needed = SCORED_AGAINST.get(base, ())
        if needed and not has & set(needed):
            # every row would leave it absent: a matrix of nothing, not an answer
            raise ConfigError(
                f"{name} is scored against {' or '.join(needed)}, and no question of {dataset.name!r} has any"
            )
        out.append(f"{base}@{k}" if base in RANKED else base)
    return sorted(dict.fromkeys(out), key=metric_order)


def needs_answer(metrics: Sequence[str]) -> bool:
    return any(m in ANSWER_METRICS or m in JUDGED_METRICS for m in metrics)


def score(
    item: EvalItem,
    chunks: Sequence[RetrievedChunk],
    answer: str | None,
    metrics: Sequence[str],
    source_shingles: SourceShingles,
) -> dict[str, float]:
    """The computable metrics (all but the judged ones) of one run; absent ones are left out."""
    out: dict[str, float] = {}
    relevance: list[bool] | None = None
    if item.reference_contexts and ("context_recall" in metrics or "context_precision" in metrics):
        passages = item.reference_contexts
        found = found_passages(item, chunks, source_shingles)
        out["context_recall"] = found.recall
        passage_ids = {p.chunk_id for p in passages if p.chunk_id}
        carried = [(shingles(p.text), src) for p, src in zip(passages, found.found_in, strict=True) if src]
        relevance = [
            c.chunk_id in passage_ids
            or any(src == c.source and containment(own, shingles(c.text)) >= REACH for own, src in carried)
            for c in chunks
        ]
    gains = _gains(chunks, item.relevant) if item.relevant else None
    if relevance is None and gains is not None and any(g > 0 for g in item.relevant.values()):
        relevance = [item.relevant.get(judged_id(c, item.relevant), 0.0) > 0 for c in chunks]
    if relevance is not None and "context_precision" in metrics:
        out["context_precision"] = _rank_weighted_precision(relevance)
    positive = sorted((g for g in item.relevant.values() if g > 0), reverse=True)
    if gains is not None and positive:
        for name in metrics:
            base, _, cut = name.partition("@")
            if base == "ndcg":
                k = int(cut)
                ideal = _dcg(positive[:k])
                out[name] = _dcg(gains[:k]) / ideal
            elif base == "recall":
                out[name] = sum(g > 0 for g in gains[: int(cut)]) / len(positive)
        if "mrr" in metrics:
            out["mrr"] = next((1.0 / rank for rank, g in enumerate(gains, start=1) if g > 0), 0.0)
    if answer is not None and "answer_match" in metrics and item.reference:
        out["answer_match"] = answer_match(answer, item.reference)
    if answer is not None and "contains" in metrics and item.must_contain:
        out["contains"] = sum(holds(answer, s) for s in item.must_contain) / len(item.must_contain)
    return {k: out[k] for k in metrics if k in out}


def found_passages(item: EvalItem, chunks: Sequence[RetrievedChunk], source_shingles: SourceShingles) -> PassageScore:
    """Which of ``item``'s reference passages ``chunks`` found, and in which source (``found_in``):
    the golden-passage matching of ``ragtt test run``, against the sources' text at the run's version."""
    return score_passages(
        item.reference_contexts, chunks, lambda _: None, DEFAULT_MATCH, source_shingles=source_shingles
    )


def holds(answer: str, text: str) -> bool:
    """Whether ``answer`` holds ``text`` (a ``must_contain`` string), case and spacing folded."""
    return _fold(text) in _fold(answer)


def answer_match(answer: str, reference: str) -> float:
    """Normalized token recall of ``reference`` in ``answer`` (1.0 for a reference of no words)."""
    want = Counter(t for t in tokens(reference) if t not in _ARTICLES)
    if not want:
        return 1.0
    got = Counter(t for t in tokens(answer) if t not in _ARTICLES)
    return sum(min(n, got[t]) for t, n in want.items()) / want.total()


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


def _gains(chunks: Sequence[RetrievedChunk], relevant: dict[str, float]) -> list[float]:
    """The grades of the ranked ids: a chunk stands for its chunk id when that is judged, else
    for its source; an id repeated lower down (another chunk of the document) is dropped, so
    ranks count documents, each at its best chunk's rank."""
    seen: set[str] = set()
    gains = []
    for c in chunks:
        key = judged_id(c, relevant)
        if key not in seen:
            seen.add(key)
            gains.append(max(relevant.get(key, 0.0), 0.0))
    return gains


def judged_id(chunk: RetrievedChunk, relevant: dict[str, float]) -> str:
    """The id a chunk stands for in qrels: its chunk id when judged, else its source, or the
    source's file name without its extension when that is judged (BEIR's ``184`` for a
    source ingested as ``cranfield/184.txt``)."""
    if chunk.chunk_id in relevant or chunk.source in relevant:
        return chunk.chunk_id if chunk.chunk_id in relevant else chunk.source
    stem = PurePosixPath(chunk.source).stem
    return stem if stem in relevant else chunk.source


def _dcg(gains: Sequence[float]) -> float:
    return sum(g / math.log2(rank + 1) for rank, g in enumerate(gains, start=1))


def _rank_weighted_precision(relevance: Sequence[bool]) -> float:
    hits, total = 0, 0.0
    for k, relevant in enumerate(relevance, start=1):
        if relevant:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0
