from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragtt._sqlite import driver
from ragtt.errors import ValidationError
from ragtt.index.embedders import HashEmbedder
from ragtt.temporal import (
    AssertionStore,
    Candidate,
    LinearScorer,
    RetrievalQuery,
    RetrievalResult,
    RRFScorer,
    ScoringContext,
)
from tests.temporal.conftest import NS, Fact, episode, make

DIM = 16


def unit(i: int, dim: int = DIM) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[i] = 1.0
    return v


@pytest.fixture(params=[True, False], ids=["memory", "sqlite-vec"])
def vstore(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """A store searched through the in-memory matrix, and one through the vec0 KNN."""
    with AssertionStore.open(tmp_path / "v.db", embedding_dimension=DIM, vector_cache=request.param) as s:
        episode(s)
        yield s


def test_valid_claims_are_not_crowded_out_by_invalid_neighbours(vstore: AssertionStore) -> None:
    # 200 superseded near-duplicates of the query sit closer than the one valid claim
    rng = np.random.default_rng(0)
    q = unit(0)
    near = np.stack([q + 0.01 * rng.standard_normal(DIM).astype(np.float32) for _ in range(200)])
    olds = [make(f"old{i}", f"old claim {i}", 10, valid_until=20) for i in range(200)]
    vstore.write_assertions(olds, near)
    far = (unit(0) * 0.2 + unit(1)).astype(np.float32)
    vstore.write_assertion(make("valid", "the valid claim", 30), far)
    res = vstore.retrieve(RetrievalQuery(NS, 50, query_embedding=q, strategy="vector", limit=1, candidate_limit=1))
    assert res.ids == ["valid"]
    assert res.meta["vector_backend"] == ("memory" if vstore.vector_cache else "sqlite-vec")
    at15 = vstore.retrieve(RetrievalQuery(NS, 15, query_embedding=q, strategy="vector", limit=5))
    assert len(at15) == 5 and all(i.startswith("old") for i in at15.ids)
    hist = vstore.retrieve(
        RetrievalQuery(NS, 50, query_embedding=q, strategy="vector", limit=300, include_superseded=True)
    )
    assert len(hist) == 201
    before = vstore.retrieve(RetrievalQuery(NS, 5, query_embedding=q, strategy="vector"))
    assert before.ids == []  # nothing had started yet


def test_both_backends_agree_and_follow_supersession(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((300, DIM)).astype(np.float32)
    ids_by_backend = []
    for cache in (True, False):
        with AssertionStore.open(tmp_path / f"b{cache}.db", embedding_dimension=DIM, vector_cache=cache) as s:
            episode(s)
            s.write_assertions([make(f"a{i}", f"claim {i}", i) for i in range(300)], vectors)
            q = vectors[7] + 0.1
            s.retrieve(RetrievalQuery(NS, 400, query_embedding=q, strategy="vector"))  # warm the matrix
            s.write_assertion(make("new7", "claim 7 revised", 350, supersedes_id="a7"), vectors[7])
            out = []
            for anchor in (100, 349, 350, 400):
                res = s.retrieve(RetrievalQuery(NS, anchor, query_embedding=q, strategy="vector", limit=10))
                out.append(res.ids)
                sims = [r.score_components["vector_similarity"] for r in res]
                assert sims == sorted(sims, reverse=True)
            assert "a7" in out[1] and "new7" not in out[1]
            assert "new7" in out[2] and "a7" not in out[2]
            ids_by_backend.append(out)
    assert ids_by_backend[0] == ids_by_backend[1]


def test_hybrid_includes_full_text_hits_the_vector_side_missed(tmp_path: Path) -> None:
    with AssertionStore.open(tmp_path / "h.db", embedding_dimension=DIM) as s:
        episode(s)
        s.write_assertions(
            [make(f"v{i}", f"filler sentence {i}", 1) for i in range(60)],
            np.stack([unit(0) + 0.001 * i for i in range(60)]),
        )
        s.write_assertion(make("kw", "the zebra clause applies", 1), unit(5))
        res = s.retrieve(
            RetrievalQuery(NS, 2, query_text="zebra", query_embedding=unit(0), limit=60, candidate_limit=10)
        )
        assert "kw" in res.ids
        kw = res[res.ids.index("kw")]
        assert "bm25" in kw.score_components and "vector_similarity" not in kw.score_components
        assert res.meta["vector_applied"] and res.meta["bm25_applied"]
        assert res.meta["candidate_count"] == 11


def test_full_text_side_filtered_on_the_matrix_equals_the_sql_join(tmp_path: Path) -> None:
    # with the matrix loaded the text side filters FTS5's best matches on its arrays; matches it
    # does not hold (another namespace, an assertion written without a vector) are checked in
    # SQL, and when too few of the over-fetched matches are admitted (early anchors, narrow
    # filters) the SQL join answers: every path must give the join's answer
    class Recording(RRFScorer):  # the candidates' filter columns, read from the matrix or from SQL
        def score_batch(self, candidates: Any, context: ScoringContext) -> list[float]:
            columns.append(
                sorted((c.id, c.valid_from, c.valid_until, c.confidence, c.type, c.entity_type) for c in candidates)
            )
            return super().score_batch(candidates, context)

    words = ["river", "bank", "loan", "fish", "boat", "rate", "stone"]
    results, candidates = [], []
    for cache in (True, False):
        rng = np.random.default_rng(5)  # the same rows and queries for both
        ranked: list[Any] = []
        columns: list[Any] = []
        path = tmp_path / f"t{cache}.db"
        with AssertionStore.open(path, embedding_dimension=DIM, vector_cache=cache, scorer=Recording()) as s:
            episode(s)
            s.init_namespace("other", DIM)
            episode(s, "e2", "other")
            items, vectors = [], []
            for i in range(240):
                text = " ".join(rng.choice(words, size=4))
                kw: dict[str, Any] = {
                    "type": ("fact", "preference")[i % 2],
                    "entity_type": (None, "person", "org")[i % 3],
                    "confidence": (0.7, 0.9, 0.3)[i % 3],  # 0.7 is below itself in float32
                }
                if i % 7 == 0 and i:
                    kw["supersedes_id"] = f"a{i - 7}"
                items.append(make(f"a{i}", text, i, **kw))
                vectors.append(rng.standard_normal(DIM).astype(np.float32))
            s.write_assertions(items, np.stack(vectors))
            s.write_assertions(
                [make(f"o{i}", "river bank loan", i, namespace="other", episode_id="e2") for i in range(30)],
                rng.standard_normal((30, DIM)).astype(np.float32),
            )
            s.write_assertions([make(f"t{i}", "zebra crossing", 100 + i) for i in range(12)])  # no vector
            for anchor in (50, 150, 300):
                for extra in ({}, {"min_confidence": 0.7}, {"assertion_types": ["fact"]}, {"entity_types": ["org"]}):
                    for history in (False, True):
                        query = RetrievalQuery(
                            NS,
                            anchor,
                            query_text="river loan boat zebra",
                            query_embedding=rng.standard_normal(DIM).astype(np.float32),
                            limit=25,
                            candidate_limit=40,
                            include_superseded=history,
                            **extra,
                        )
                        res = s.retrieve(query)
                        assert res.meta["vector_backend"] == ("memory" if cache else "sqlite-vec")
                        ranked.append([(r.id, dict(r.score_components)) for r in res])
            results.append(ranked)
            candidates.append(columns)
    assert candidates[0] == candidates[1]  # exactly: confidence 0.7 is not float32's 0.699999988
    for memory, sql in zip(*results, strict=True):  # cosines differ in the last bits between backends
        assert [aid for aid, _ in memory] == [aid for aid, _ in sql]
        for (_, a), (_, b) in zip(memory, sql, strict=True):
            assert a.pop("vector_similarity", None) == pytest.approx(b.pop("vector_similarity", None), abs=1e-6)
            assert a == b  # the BM25 scores and ranks exactly, the fused score
    hits = {aid for rows in results[0] for aid, _ in rows}
    assert any(aid.startswith("t") for aid in hits) and not any(aid.startswith("o") for aid in hits)


def test_text_query_is_embedded_with_the_store_embedder(store: AssertionStore, fact: Fact) -> None:
    fact("a", "the cat sat on the mat", 1)
    fact("b", "quarterly revenue grew", 1)
    res = store.retrieve(RetrievalQuery(NS, 5, query_text="cat mat", strategy="vector"))
    assert res.ids[0] == "a" and res.meta["vector_applied"] and not res.meta["bm25_applied"]
    res = store.retrieve(RetrievalQuery(NS, 5, query_text="revenue", strategy="bm25"))
    assert res.ids == ["b"] and not res.meta["vector_applied"]


def test_filters_apply_on_both_sides(store: AssertionStore, fact: Fact) -> None:
    fact("p", "alice likes tea", 1, type="preference", entity_type="person", confidence=0.4)
    fact("f", "alice works at acme", 1, type="fact", entity_type="person", confidence=0.95)
    fact("o", "acme likes tea too", 1, type="fact", entity_type="org", confidence=0.95)
    for strategy in ("hybrid", "vector", "bm25"):
        q = dict(namespace=NS, temporal_anchor=2, query_text="alice tea acme", strategy=strategy)
        assert set(store.retrieve(RetrievalQuery(**q, assertion_types=["fact"])).ids) == {"f", "o"}
        assert set(store.retrieve(RetrievalQuery(**q, entity_types=["person"])).ids) == {"p", "f"}
        assert set(store.retrieve(RetrievalQuery(**q, min_confidence=0.9)).ids) == {"f", "o"}


def test_trajectory_sets_predecessors_oldest_first(store: AssertionStore, fact: Fact) -> None:
    fact("v1", "plan costs 10", 1)
    fact("v2", "plan costs 12", 2, supersedes_id="v1")
    fact("v3", "plan costs 15", 3, supersedes_id="v2")
    fact("other", "plan name is gold", 1)
    res = store.retrieve(RetrievalQuery(NS, 10, query_text="plan costs", mode="trajectory"))
    chains = {r.id: [a.id for a in r.supersession_chain or []] for r in res}
    assert chains == {"v3": ["v1", "v2"], "other": []}
    snap = store.retrieve(RetrievalQuery(NS, 10, query_text="plan costs"))
    assert all(r.supersession_chain is None for r in snap)


def test_scorers(store: AssertionStore, fact: Fact) -> None:
    fact("old", "renewal policy text", 1)
    fact("new", "renewal policy text", 90)
    q = RetrievalQuery(NS, 100, query_text="renewal policy")
    default = store.retrieve(q)
    assert default.ids == ["new", "old"] or default.ids == ["old", "new"]
    assert default[0].score == pytest.approx(default[1].score)  # no recency unless asked for
    assert default.ids == sorted(default.ids)  # equal scores: deterministic id order
    store.scorer = RRFScorer(recency_weight=1.0)
    assert store.retrieve(q).ids == ["new", "old"]
    assert "recency" in store.retrieve(q)[0].score_components
    store.scorer = LinearScorer(recency_weight=0.5)
    res = store.retrieve(q)
    assert res.ids == ["new", "old"] and "linear_bm25" in res[0].score_components

    class Shortest:
        def score_batch(self, candidates: list[Candidate], context: ScoringContext) -> list[float]:
            assert context.anchor == 100 and context.position_range == (1, 90)
            return [-float(len(c.id)) for c in candidates]

    fact("x", "renewal", 5)
    store.scorer = Shortest()
    assert store.retrieve(q).ids[0] == "x"


def test_middleware_order_and_rewrites(store: AssertionStore, fact: Fact) -> None:
    fact("a", "apples are red", 1)
    fact("b", "bananas are yellow", 1)
    calls: list[str] = []

    class Hook:
        def __init__(self, name: str, rewrite: str | None = None) -> None:
            self.name, self.rewrite = name, rewrite

        def before(self, query: RetrievalQuery) -> RetrievalQuery | None:
            calls.append(f"{self.name}.before")
            if self.rewrite:
                import dataclasses

                return dataclasses.replace(query, query_text=self.rewrite)
            return None

        def after(self, query: RetrievalQuery, result: RetrievalResult) -> RetrievalResult | None:
            calls.append(f"{self.name}.after")
            return RetrievalResult(result.results, {**result.meta, "seen_by": self.name})

    store.middleware = (Hook("outer"), Hook("inner", rewrite="bananas"))
    res = store.retrieve(RetrievalQuery(NS, 5, query_text="apples"))
    assert calls == ["outer.before", "inner.before", "inner.after", "outer.after"]
    assert res.ids[0] == "b"  # the rewrite happened before the query was embedded and searched
    assert res.meta["seen_by"] == "outer"


def test_query_text_modes_and_errors(store: AssertionStore, fact: Fact) -> None:
    fact("a", "the quick brown fox", 1)
    fact("b", "brown quick", 1)
    phrase = store.retrieve(RetrievalQuery(NS, 5, query_text="quick brown", query_text_mode="phrase", strategy="bm25"))
    assert phrase.ids == ["a"]
    raw = store.retrieve(RetrievalQuery(NS, 5, query_text="quick NOT fox", query_text_mode="fts5", strategy="bm25"))
    assert raw.ids == ["b"]
    with pytest.raises(ValidationError, match="invalid FTS5 query"):
        store.retrieve(RetrievalQuery(NS, 5, query_text='"unbalanced', query_text_mode="fts5", strategy="bm25"))
    with pytest.raises(ValidationError, match="query_text or query_embedding"):
        store.retrieve(RetrievalQuery(NS, 5))
    with pytest.raises(ValidationError, match="dimensions"):
        store.retrieve(RetrievalQuery(NS, 5, query_embedding=np.ones(3)))
    with pytest.raises(ValidationError) as info:
        RetrievalQuery(NS, 5, "x", strategy="magic", limit=0, mode="movie")
    assert len(info.value.errors) == 3


def test_matrix_follows_writes_from_another_connection(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    reader = AssertionStore.open(path, embedder=HashEmbedder(32))
    writer = AssertionStore.open(path, embedder=HashEmbedder(32))
    episode(writer)
    writer.write_assertion(make("a", "solar panels on the roof", 1))
    q = RetrievalQuery(NS, 10, query_text="solar panels", strategy="vector")
    assert reader.retrieve(q).ids == ["a"]
    writer.write_assertion(make("b", "solar panels were removed", 5, supersedes_id="a"))
    assert reader.retrieve(q).ids == ["b"]
    assert reader.retrieve(RetrievalQuery(NS, 3, query_text="solar panels", strategy="vector")).ids == ["a"]
    reader.close()
    writer.close()


def test_result_reprs_escape_text(store: AssertionStore, fact: Fact) -> None:
    fact("a", "<script>alert(1)</script> refund", 1)
    res = store.retrieve(RetrievalQuery(NS, 2, query_text="refund"))
    assert "<script>" not in res._repr_html_() and "&lt;script&gt;" in res._repr_html_()
    assert "1 results" in repr(res)
    assert res.to_dict()["results"][0]["id"] == "a"
    assert res[0].assertion == store.get_assertion("a")


def _keyword_corpus(store: AssertionStore) -> None:
    episode(store)
    store.write_assertions(
        [make(f"v{i}", f"filler sentence {i}", 1) for i in range(60)],
        np.stack([unit(0) + 0.001 * i for i in range(60)]),
    )
    store.write_assertion(make("kw", "the zebra clause applies", 1), unit(5))


def test_full_text_ranks_on_the_helper_thread_while_the_vector_side_runs(tmp_path: Path) -> None:
    # the store's own connection: FTS5 ranks on the store's helper thread, which close() stops
    before = set(threading.enumerate())
    with AssertionStore.open(tmp_path / "t.db", embedding_dimension=DIM) as s:
        _keyword_corpus(s)
        query = RetrievalQuery(NS, 2, query_text="zebra clause", query_embedding=unit(0), limit=5)
        res = s.retrieve(query)
        assert "kw" in res.ids and res.meta["bm25_applied"] and res.meta["vector_backend"] == "memory"
        helpers = [t for t in set(threading.enumerate()) - before if t.name.startswith("ragtt-temporal")]
        assert len(helpers) == 1
        with pytest.raises(ValidationError, match="invalid FTS5 query"):  # raised on the helper, seen here
            s.retrieve(dataclasses.replace(query, query_text='"unbalanced', query_text_mode="fts5"))
        assert s.retrieve(query).ids == res.ids  # the connection is usable after the helper's failure
    assert not helpers[0].is_alive()


def test_an_interrupted_retrieve_waits_for_the_helper_before_it_lets_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ctrl-C while the caller waits for the full-text side: the read transaction must not end
    # (nor the next call start) while the helper still runs a query on the connection
    import ragtt.temporal.retrieve as retrieve_module

    release, finished = threading.Event(), threading.Event()
    text_hits, real_wait = retrieve_module._text_hits, retrieve_module.wait
    calls = []

    def slow_text_hits(*args: Any) -> Any:
        assert release.wait(30)
        out = text_hits(*args)
        finished.set()
        return out

    def interrupted_wait(futures: Any) -> Any:
        calls.append(len(calls))
        if len(calls) == 1:
            raise KeyboardInterrupt
        release.set()
        return real_wait(futures)

    with AssertionStore.open(tmp_path / "i.db", embedding_dimension=DIM) as s:
        _keyword_corpus(s)
        query = RetrievalQuery(NS, 2, query_text="zebra", query_embedding=unit(0), limit=5)
        want = s.retrieve(query).ids
        monkeypatch.setattr(retrieve_module, "_text_hits", slow_text_hits)
        monkeypatch.setattr(retrieve_module, "wait", interrupted_wait)
        with pytest.raises(KeyboardInterrupt):
            s.retrieve(query)
        assert finished.is_set() and len(calls) == 2  # raised only once the helper was done
        monkeypatch.undo()
        assert s.retrieve(query).ids == want


def test_a_store_whose_helper_is_gone_runs_the_text_side_itself(tmp_path: Path) -> None:
    # at interpreter shutdown concurrent.futures refuses new work: the caller's thread does it
    with AssertionStore.open(tmp_path / "g.db", embedding_dimension=DIM) as s:
        _keyword_corpus(s)
        query = RetrievalQuery(NS, 2, query_text="zebra", query_embedding=unit(0), limit=5)
        want = s.retrieve(query).ids
        assert s.internals.helper is not None
        s.internals.helper[1].shutdown()  # what interpreter shutdown does to every pool
        assert s.retrieve(query).ids == want


def test_a_connection_the_caller_owns_is_only_used_on_the_callers_thread(tmp_path: Path) -> None:
    # a connection opened with the driver's default check_same_thread refuses other threads:
    # on it, the full-text side runs on the caller's thread, with the same answer
    with AssertionStore.open(tmp_path / "own.db", embedding_dimension=DIM) as s:
        _keyword_corpus(s)
        want = s.retrieve(RetrievalQuery(NS, 2, query_text="zebra", query_embedding=unit(0), limit=5)).ids
    conn = driver().connect(str(tmp_path / "own.db"), isolation_level=None)
    try:
        with AssertionStore.open(conn, embedding_dimension=DIM) as s:
            res = s.retrieve(RetrievalQuery(NS, 2, query_text="zebra", query_embedding=unit(0), limit=5))
            assert res.ids == want and res.meta["vector_backend"] == "memory"
    finally:
        conn.close()


def test_equal_evidence_earns_an_equal_rank(tmp_path: Path) -> None:
    # competition ranks on each side (1, 1, 3): twins tie on both sides and in the fused score
    with AssertionStore.open(tmp_path / "r.db", embedding_dimension=DIM) as s:
        episode(s)
        s.write_assertions(
            [make("t2", "zebra crossing", 1), make("t1", "zebra crossing", 1), make("o", "zebra crossing ahead", 1)],
            np.stack([unit(0), unit(0), unit(0) + unit(1)]),
        )
        res = s.retrieve(RetrievalQuery(NS, 2, query_text="zebra", query_embedding=unit(0), limit=3))
    parts = {r.id: r.score_components for r in res}
    assert res.ids == ["t1", "t2", "o"]  # equal scores in id order
    assert [parts[i]["vector_rank"] for i in res.ids] == [1, 1, 3]
    assert [parts[i]["bm25_rank"] for i in res.ids] == [1, 1, 3]
    assert parts["t1"]["score"] == parts["t2"]["score"] > parts["o"]["score"]


def test_the_current_state_fast_path_admits_what_the_sql_filter_admits(tmp_path: Path) -> None:
    # at or after the latest start or end of any row the matrix reads validity from its open
    # flags; around that boundary (and after a later close moves it) both backends must agree
    rng = np.random.default_rng(4)
    vectors = rng.standard_normal((40, DIM)).astype(np.float32)
    seen = []
    for cache in (True, False):
        with AssertionStore.open(tmp_path / f"f{cache}.db", embedding_dimension=DIM, vector_cache=cache) as s:
            episode(s)
            s.write_assertions([make(f"a{i}", f"claim {i}", i) for i in range(30)], vectors[:30])
            s.write_assertions(
                [make(f"b{i}", f"claim {i} revised", 30 + i, supersedes_id=f"a{i}") for i in range(10)], vectors[30:]
            )
            runs = []
            for step in range(2):
                for anchor in (29, 38, 39, 39.5, 40, 1e6):
                    for history in (False, True):
                        query = RetrievalQuery(NS, anchor, query_embedding=vectors[0], strategy="vector", limit=40)
                        runs.append(sorted(s.retrieve(dataclasses.replace(query, include_superseded=history)).ids))
                if step == 0:
                    s.advanced.close_assertion("a20", 5e5)  # a later end than any start: the boundary moves
            seen.append(runs)
    assert seen[0] == seen[1]
    assert "a20" in seen[0][-4] and "a20" not in seen[0][-2]  # open at 40 after the close, ended at 1e6
