"""Cranfield as a BEIR folder: its qrels' corpus ids are the project's source names, and each
cell's nDCG@10 is what an independent computation from the cell's ranked ids gives."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

import pytest

import ragtt
from tests.conftest import corpus


@pytest.fixture(scope="module")
def cranfield(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ragtt.Project]:
    beir = corpus("cranfield", "beir_format")
    texts = {}
    for line in (beir / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        if doc["text"].strip():  # documents 471 and 995 are empty
            texts[doc["_id"]] = doc["text"]
    path = tmp_path_factory.mktemp("cranfield") / "proj"
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest_texts(texts)
        yield proj


def qrels() -> dict[str, dict[str, int]]:
    """Read here on its own, not through EvalDataset: query-id (by position, as BEIR numbers them) -> doc -> grade."""
    out: dict[str, dict[str, int]] = {}
    lines = corpus("cranfield", "beir_format", "qrels", "test.tsv").read_text(encoding="utf-8").splitlines()
    for line in lines[1:]:
        qid, doc, grade = line.split("\t")
        out.setdefault(qid, {})[doc] = int(grade)
    return out


def ndcg_at_10(ranked_sources: list[str], judged: dict[str, int]) -> float:
    seen: list[str] = []
    for source in ranked_sources:  # a document split into chunks counts once, at its best rank
        if source not in seen:
            seen.append(source)
    dcg = sum(judged.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(seen[:10]) if judged.get(doc, 0) > 0)
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:10]
    return dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal))


def test_ndcg_at_10_equals_an_independent_computation(cranfield: ragtt.Project) -> None:
    dataset = ragtt.EvalDataset.load(corpus("cranfield", "beir_format"))
    judged = qrels()
    assert len(dataset) == len(judged) == 225
    assert dataset.items[2].id == "3" and dataset.items[2].question.startswith("what problems of heat conduction")
    matrix = cranfield.evaluate(dataset, at="latest", mode="bm25", top_k=10)
    assert [c.version for c in matrix.columns] == [cranfield.version]
    assert matrix.metrics == ["context_precision", "ndcg@10", "recall@10", "mrr"]
    checked = 0
    for qi, qid in enumerate(matrix.question_ids):
        if not any(g > 0 for g in judged[qid].values()):
            assert matrix.cells["ndcg@10"][qi][0] is None  # nothing relevant to find: absent, not 0
            continue
        ranked = [c["source"] for c in cranfield.run(str(matrix.query_ids[qi][0])).chunks]
        assert matrix.cells["ndcg@10"][qi][0] == pytest.approx(ndcg_at_10(ranked, judged[qid]), abs=1e-6)
        checked += 1
    assert checked > 200
    mean = sum(v for row in matrix.cells["ndcg@10"] for v in row if v is not None) / checked
    assert 0.2 < mean < 0.6  # a plain BM25 reaches about 0.36 on Cranfield


def test_the_same_evaluation_twice_reads_back(cranfield: ragtt.Project) -> None:
    dataset = ragtt.EvalDataset.load(corpus("cranfield", "beir_format"))
    first = cranfield.evaluate(dataset, at="latest", mode="bm25", top_k=10)
    before = cranfield.events.frame(types=["replay.retrieval.executed"]).height
    second = cranfield.evaluate(dataset, at="latest", mode="bm25", top_k=10)
    assert cranfield.events.frame(types=["replay.retrieval.executed"]).height == before
    assert second.computed_versions == 0
    assert second.frame().equals(first.frame())
