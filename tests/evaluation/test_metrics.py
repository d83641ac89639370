"""The metrics on hand-made runs, where each value can be worked out on paper."""

from __future__ import annotations

import math

import pytest

from ragtt.evaluation.dataset import EvalDataset
from ragtt.evaluation.metrics import answer_match, score
from ragtt.results import RetrievedChunk


def chunks(*sources: str) -> list[RetrievedChunk]:
    return [
        RetrievedChunk(f"c{rank}", "d", source, f"text of {source} number {rank}", rank, 1.0 / rank, {}, (0, 1))
        for rank, source in enumerate(sources, start=1)
    ]


def no_sources(source: str) -> frozenset[tuple[str, ...]]:
    return frozenset()


def test_ranked_metrics_count_documents_once_and_match_file_stems() -> None:
    item = EvalDataset.from_records([{"question": "q", "relevant": {"184": 3, "29": 1, "99": 2}}]).items[0]
    run = chunks("corpus/184.txt", "corpus/184.txt", "corpus/7.txt", "29")
    got = score(item, run, None, ["context_precision", "ndcg@4", "recall@4", "mrr"], no_sources)
    # ranked documents: 184 (3), 7 (0), 29 (1); the second chunk of 184 is dropped
    dcg = 3 / math.log2(2) + 1 / math.log2(4)
    ideal = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert got["ndcg@4"] == pytest.approx(dcg / ideal)
    assert got["recall@4"] == pytest.approx(2 / 3)
    assert got["mrr"] == 1.0
    # chunks relevant at ranks 1, 2, 4: (1/1 + 2/2 + 3/4) / 3
    assert got["context_precision"] == pytest.approx((1 + 1 + 0.75) / 3)


def test_context_precision_is_rank_weighted() -> None:
    item = EvalDataset.from_records([{"question": "q", "relevant": {"b.md": 1}}]).items[0]
    first = score(item, chunks("b.md", "a.md", "a.md"), None, ["context_precision"], no_sources)
    last = score(item, chunks("a.md", "a.md", "b.md"), None, ["context_precision"], no_sources)
    assert first["context_precision"] == 1.0
    assert last["context_precision"] == pytest.approx(1 / 3)


def test_answer_metrics() -> None:
    assert answer_match("Refunds: within the 30 days.", "a refund within 30 days") == pytest.approx(3 / 4)
    item = EvalDataset.from_records([{"question": "q", "must_contain": ["pip install", "venv"]}]).items[0]
    got = score(item, chunks("a.md"), "Run  PIP   install flask", ["contains"], no_sources)
    assert got == {"contains": 0.5}
    assert score(item, chunks("a.md"), "x", ["answer_match"], no_sources) == {}  # no reference: absent
