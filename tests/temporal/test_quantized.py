"""The in-memory vector search past one sealed block: 4-bit candidates, exact float32 rescoring.

The corpus is real text: Cranfield's abstracts, one assertion per sentence and per pair of
consecutive sentences (three sealed blocks, two segments, and a tail), embedded as the sum of a seeded
random vector per word, so neighbours share words the way real embeddings do.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragtt.temporal import Assertion, AssertionStore, Citation, Episode, RetrievalQuery
from ragtt.temporal.quantized import BLOCK_ROWS, FOLD, Int4Blocks, best_rows, int4_codes, segment_spans
from tests.conftest import corpus

NS = "kb"
DIM = 64
LIMIT = 10
SEALED = 3 * BLOCK_ROWS


def _embed(texts: list[str], vocab: dict[str, int], table: np.ndarray) -> np.ndarray:
    out = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
    for row, text in enumerate(texts):
        ids = [vocab.setdefault(w, len(vocab)) for w in re.findall(r"\w+", text.lower())]
        if ids:
            out[row] = table[np.asarray(ids) % len(table)].sum(axis=0)
    out[~out.any(axis=1), 0] = 1.0
    return out


@pytest.fixture(scope="module")
def cranfield(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = corpus("cranfield", "beir_format")
    texts: list[str] = []
    for line in (root / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        sentences = [s.strip() for s in json.loads(line)["text"].split(" . ") if s.strip()]
        texts += sentences + [f"{a} . {b}" for a, b in itertools.pairwise(sentences)]
    questions = [json.loads(line)["text"] for line in (root / "queries.jsonl").read_text().splitlines()][:60]
    table = np.random.default_rng(3).standard_normal((50_000, DIM)).astype(np.float32)
    vocab: dict[str, int] = {}
    texts = texts[: SEALED + BLOCK_ROWS // 4]  # three sealed blocks (segments of 2 and 1) and a tail
    vectors = _embed(texts, vocab, table)
    queries = _embed(questions, vocab, table)
    n = len(texts)
    assert n == SEALED + BLOCK_ROWS // 4
    rng = np.random.default_rng(5)
    closed = rng.random(n) < 0.15  # closed before the anchor: never a hit at it
    typ = np.where(rng.random(n) < 0.5, "fact", "note")
    path = tmp_path_factory.mktemp("quantized") / "kb.db"
    with AssertionStore.open(path, namespace=NS, embedding_dimension=DIM) as store:
        store.write_episode(Episode("ep", NS, 0, 0.0, "corpus", "cranfield"))
        items = [
            Assertion(
                f"s{i}",
                NS,
                str(typ[i]),
                text,
                float(i),
                0.9,
                "ep",
                [Citation(f"c{i}", "ep", f"cranfield#{i}", text)],
                valid_until=float(i + 1) if closed[i] else None,
            )
            for i, text in enumerate(texts)
        ]
        for lo in range(0, n, 5000):
            store.write_assertions(items[lo : lo + 5000], vectors[lo : lo + 5000])
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return path, unit, queries, closed, typ


def _exact(unit: np.ndarray, query: np.ndarray, admitted: np.ndarray, k: int) -> list[str]:
    scores = unit @ (query / np.linalg.norm(query))
    scores[~admitted] = -np.inf
    order = np.lexsort((np.arange(len(scores)), -scores))[:k]
    return [f"s{i}" for i in order]


def _ask(store: AssertionStore, query: np.ndarray, **kw: Any) -> Any:
    anchor = float(10**9)
    return store.retrieve(RetrievalQuery(NS, anchor, query_embedding=query, strategy="vector", limit=LIMIT, **kw))


def test_int4_candidates_recall_the_exact_top_k_over_the_valid_rows(cranfield: Any) -> None:
    path, unit, queries, closed, typ = cranfield
    with AssertionStore.open(path, namespace=NS) as store:
        cases = [({}, ~closed), ({"assertion_types": ["note"]}, ~closed & (typ == "note"))]
        for kw, admitted in cases:
            hits = 0
            for query in queries:
                res = _ask(store, query, **kw)
                assert res.meta["vector_quantized_rows"] == SEALED  # the 4-bit path ran
                assert all(admitted[int(i[1:])] for i in res.ids)  # never a closed or filtered row
                hits += len(set(res.ids) & set(_exact(unit, query, admitted, LIMIT)))
            assert hits / (LIMIT * len(queries)) >= 0.99, kw


def test_returned_similarities_are_the_exact_float32_ones(cranfield: Any) -> None:
    path, unit, queries, _, _ = cranfield
    with AssertionStore.open(path, namespace=NS) as store:
        for query in queries[:20]:
            res = _ask(store, query)
            q = (query / np.linalg.norm(query)).astype(np.float32)
            sims = [r.score_components["vector_similarity"] for r in res.results]
            exact = [float(unit[int(r.id[1:])] @ q) for r in res.results]
            np.testing.assert_allclose(sims, exact, rtol=0, atol=1e-6)
            assert sims == sorted(sims, reverse=True)


def test_quantized_results_are_the_same_on_every_run_and_open(cranfield: Any) -> None:
    path, _, queries, _, _ = cranfield
    with AssertionStore.open(path, namespace=NS) as store:
        first = [_ask(store, q).ids for q in queries[:10]]
        again = [_ask(store, q).ids for q in queries[:10]]
    with AssertionStore.open(path, namespace=NS) as reopened:
        fresh = [_ask(reopened, q).ids for q in queries[:10]]
    assert first == again == fresh


def test_a_block_admitting_fewer_rows_than_the_candidates_still_fills_the_top_k(tmp_path: Path) -> None:
    # every row of the three sealed blocks (segments of 2 and 1) is closed but three: the segments
    # pad their top-k with refused rows, which must never come back, while the open tail fills
    # the result; 8 dimensions are zero-padded to one group of 16
    n = SEALED + 500
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((n, 8)).astype(np.float32)
    keep = {5, BLOCK_ROWS + 7, 2 * BLOCK_ROWS + 9}
    with AssertionStore.open(tmp_path / "pad.db", namespace=NS, embedding_dimension=8) as store:
        store.write_episode(Episode("ep", NS, 0, 0.0, "corpus", "x"))
        items = [
            Assertion(
                f"s{i}",
                NS,
                "fact",
                f"row {i}",
                float(i),
                0.9,
                "ep",
                [Citation(f"c{i}", "ep", f"r#{i}", "row")],
                valid_until=None if i >= SEALED or i in keep else float(i + 1),
            )
            for i in range(n)
        ]
        store.write_assertions(items, vectors)
        res = store.retrieve(RetrievalQuery(NS, 1e9, query_embedding=vectors[5], strategy="vector", limit=LIMIT))
    admitted = np.zeros(n, dtype=bool)
    admitted[SEALED:] = True
    admitted[list(keep)] = True
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    assert res.meta["vector_quantized_rows"] == SEALED
    assert res.ids == _exact(unit, vectors[5], admitted, LIMIT)
    assert res.ids[0] == "s5"


def test_segments_follow_the_binary_digits_of_the_sealed_blocks() -> None:
    assert segment_spans(0) == []
    assert segment_spans(11) == [
        (0, 8 * BLOCK_ROWS),
        (8 * BLOCK_ROWS, 10 * BLOCK_ROWS),
        (10 * BLOCK_ROWS, 11 * BLOCK_ROWS),
    ]
    for blocks in range(1, 40):
        spans = segment_spans(blocks)
        assert spans[0][0] == 0 and spans[-1][1] == blocks * BLOCK_ROWS
        assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))  # contiguous, in order


def test_sealing_block_by_block_gives_the_candidates_of_sealing_at_once() -> None:
    # a growing namespace rebuilds only the segments whose span changed; what a search sees
    # must be what a store opened on the same rows sees
    rng = np.random.default_rng(2)
    matrix = rng.standard_normal((5 * BLOCK_ROWS + 10, 24)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    query = matrix[3 * BLOCK_ROWS + 1]
    grown = Int4Blocks(24)
    for size in range(BLOCK_ROWS - 1, len(matrix) + 1, BLOCK_ROWS // 2):
        grown.seal(matrix, size)
        once = Int4Blocks(24)
        once.seal(matrix, size)
        assert grown.rows == once.rows == size // BLOCK_ROWS * BLOCK_ROWS
        if not grown.rows:
            continue  # the search scores an unsealed matrix exactly
        mask = np.ones(grown.rows, dtype=bool)
        mask[::3] = False
        rows, approx = grown.top(query, mask, 50)
        for got, want in zip((rows, approx), once.top(query, mask, 50), strict=True):
            np.testing.assert_array_equal(got, want)
        assert len(rows) == 50 and mask[rows].all()
        every = grown.scores(query)  # the 50 returned are the 50 best admitted approximate scores
        np.testing.assert_array_equal(approx, every[rows])
        assert approx.min() >= np.sort(every[mask])[-50]
        assert (np.abs(approx - matrix[rows] @ query) <= _rounding_bound(matrix[rows], query, 32)).all()


@pytest.mark.parametrize("admit", [1.0, 0.5, 0.02, 0.0002])
@pytest.mark.parametrize("ties", [False, True])
def test_best_rows_are_the_exact_top_k_of_the_admitted_rows(admit: float, ties: bool) -> None:
    # the maxima bound must hold whatever the layout: the best rows bunched in a few groups,
    # most of them refused (the fallback to every admitted row), fewer admitted than k, ties
    rng = np.random.default_rng(3)
    scores = rng.standard_normal(128 * FOLD).astype(np.float32)
    scores[:300] += 3
    if ties:
        scores = np.round(scores, 1)
    admitted = rng.random(len(scores)) < admit
    for k in (1, 10, 200):
        got = best_rows(scores, admitted, k)
        assert admitted[got].all() and len(np.unique(got)) == len(got) == min(k, admitted.sum())
        best_first = np.sort(scores[admitted])[::-1]
        np.testing.assert_array_equal(np.sort(scores[got])[::-1], best_first[: len(got)])
    assert len(best_rows(scores, admitted, 0)) == len(best_rows(scores[:0], admitted[:0], 10)) == 0


def _rounding_bound(rows: np.ndarray, query: np.ndarray, group: int) -> np.ndarray:
    """How far a 4-bit code's product with the int8-rounded query can be from the exact cosine:
    half a code step per dimension (times the query there), and half a query step (times the
    row, as coded) there, summed per group."""
    dim = rows.shape[1]
    width = -(-dim // group) * group
    x, q = np.zeros((len(rows), width), np.float32), np.zeros(width, np.float32)
    x[:, :dim], q[:dim] = rows, query
    x, q = x.reshape(len(rows), -1, group), q.reshape(-1, group)
    code_step = np.abs(x).max(axis=2) / 7
    query_step = np.abs(q).max(axis=1) / 127
    coded = np.abs(x).sum(axis=2) + group * code_step / 2
    return (code_step / 2 * np.abs(q).sum(axis=1) + query_step / 2 * coded).sum(axis=1) + 1e-6


def test_int4_codes_reconstruct_each_group_within_half_a_step() -> None:
    rng = np.random.default_rng(4)
    rows = rng.standard_normal((300, 40)).astype(np.float32)
    rows[7] = 0.0  # an all-zero row keeps a finite scale
    packed, scales = int4_codes(rows, 16)  # 40 dimensions: three groups of 16, the last zero-padded
    assert packed.shape == (300, 3, 8) and scales.shape == (900,)
    codes = np.empty((300, 3, 16), dtype=np.uint8)
    codes[..., 0::2], codes[..., 1::2] = packed & 0xF, packed >> 4  # even dimension in the low nibble
    assert codes.min() >= 1 and codes.max() <= 15  # symmetric around the zero point 8
    back = (codes.astype(np.float32) - 8) * scales.reshape(300, 3, 1)
    back = back.reshape(300, 48)
    assert not back[:, 40:].any()
    steps = np.repeat(scales.reshape(300, 3), 16, axis=1)[:, :40]
    assert (np.abs(back[:, :40] - rows) <= steps / 2 + 1e-7).all()
    assert np.isfinite(scales).all() and not back[7].any()


@pytest.mark.parametrize("rows", [50, SEALED + 100], ids=["exact", "int4"])
def test_a_reindexed_assertion_is_searched_by_its_new_vector(tmp_path: Path, rows: int) -> None:
    """index_assertion replaces an embedding: the open store's matrix (and a sealed block's 4-bit
    codes) follow it, and so does another store's, through the change stamps."""
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((rows, 8)).astype(np.float32)
    old, new = np.eye(8, dtype=np.float32)[0], np.eye(8, dtype=np.float32)[1]
    vectors[3] = old  # in the first sealed block when there is one
    path = tmp_path / "re.db"

    def top(store: AssertionStore, query: np.ndarray) -> tuple[str, float]:
        res = store.retrieve(RetrievalQuery(NS, 1e9, query_embedding=query, strategy="vector", limit=LIMIT))
        return res.ids[0], res.results[0].score_components["vector_similarity"]

    with (
        AssertionStore.open(path, namespace=NS, embedding_dimension=8) as store,
        AssertionStore.open(path, namespace=NS, embedding_dimension=8) as other,
    ):
        store.write_episode(Episode("ep", NS, 0, 0.0, "corpus", "x"))
        items = [
            Assertion(f"s{i}", NS, "fact", f"row {i}", 0.0, 0.9, "ep", [Citation(f"c{i}", "ep", f"r#{i}", "row")])
            for i in range(rows)
        ]
        store.write_assertions(items, vectors)
        assert top(store, old) == ("s3", pytest.approx(1.0)) and top(other, old)[0] == "s3"
        store.index_assertion("s3", new)
        for reader in (store, other):
            assert top(reader, new) == ("s3", pytest.approx(1.0))
            assert top(reader, old)[0] != "s3"
