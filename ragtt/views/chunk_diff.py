"""The ChunkDiff's model state (``_data``), computed from a DiffReport (and its Project, for the
lineage's reasons). No widget stack here: the notebook's ``ChunkDiff`` widget and ``ragtt serve``'s
``/ui`` both build on it.
"""

from __future__ import annotations

from typing import Any

from ragtt.views.wire import array

__all__ = ["build", "model"]


def model(proj: Any, left_id: str, right_id: str, *, generate: bool = True) -> dict[str, Any]:
    """The ChunkDiff's traits as a fresh widget has them: ``_data`` and ``selected``."""
    return {"_data": build(proj.diff(left_id, right_id, generate=generate), proj), "selected": []}


_OPS = {"equal": "e", "delete": "d", "insert": "i"}


def build(report: Any, proj: Any) -> dict[str, Any]:
    ids: list[str] = []
    sources: list[str] = []
    texts: list[str] = []
    ranks: tuple[list[int], list[int]] = ([], [])
    scores: tuple[list[float], list[float]] = ([], [])

    def add(c: Any, rl: int, rr: int, sl: float, sr: float) -> None:
        ids.append(c.chunk_id)
        sources.append(c.source)
        texts.append(c.text)
        for side, (rank, score) in enumerate(((rl, sl), (rr, sr))):
            ranks[side].append(rank)
            scores[side].append(score)

    nan = float("nan")
    for c in report.removed:
        add(c, c.rank, 0, c.score, nan)
    for k in report.kept:
        add(k, k.rank_before, k.rank_after, k.score_before, k.score_after)
    for c in report.added:
        add(c, 0, c.rank, nan, c.score)
    index = {cid: i for i, cid in enumerate(ids)}
    pairs = report.changed
    return {
        "left": {
            "id": report.left_id,
            "query": report.left_query,
            "version": report.left_version,
            "answer": report.left_answer,
        },
        "right": {
            "id": report.right_id,
            "query": report.right_query,
            "version": report.right_version,
            "answer": report.right_answer,
        },
        "labels": {str(v): name for v, name in report.labels.items()},
        "summary": {
            "rbo": report.rbo,
            "jaccard": report.jaccard,
            **report.counts,
            "answer_similarity": report.answer_similarity,
            "notes": list(report.notes),
            # the two runs asked different questions (None: the same question)
            "warning": report.warning,
            # the then -> now answer as word runs (ops as letters e/d/i), and which answers this
            # diff generated (side -> the logged replay that produced it)
            "answer_ops": "".join(_OPS[op] for op, _ in report.answer_runs),
            "answer_runs": [text for _, text in report.answer_runs],
            "generated": dict(report.generated),
        },
        "chunks": {
            "ids": ids,
            "sources": sources,
            "texts": texts,
            "rank_left": array(ranks[0], "int32"),
            "rank_right": array(ranks[1], "int32"),
            "score_left": array(scores[0], "float32"),
            "score_right": array(scores[1], "float32"),
        },
        # changed passages: chunk indexes then and now, similarity, and the runs (ops as letters e/d/i)
        "pairs": {
            "left": array([index[p.left.chunk_id] for p in pairs], "int32"),
            "right": array([index[p.right.chunk_id] for p in pairs], "int32"),
            "similarity": array([p.similarity for p in pairs], "float32"),
            "ops": ["".join(_OPS[op] for op, _ in p.runs) for p in pairs],
            "runs": [[text for _, text in p.runs] for p in pairs],
        },
        "reasons": proj.lineage(report.left_id, report.right_id).reasons() if proj is not None else {},
    }
