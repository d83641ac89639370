from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from ragtt.errors import StoreError, ValidationError
from ragtt.index.embedders import HashEmbedder
from ragtt.temporal import AssertionStore, RetrievalQuery
from tests.temporal.conftest import NS, episode, make


def test_vectorless_namespace_is_full_text_only(store: AssertionStore) -> None:
    store.init_namespace("notes")
    episode(store, "en", "notes")
    store.write_assertion(make("n1", "the boiler was serviced", 1, namespace="notes", episode_id="en"))
    res = store.retrieve(RetrievalQuery("notes", 2, query_text="boiler"))
    assert res.ids == ["n1"]
    assert not res.meta["vector_applied"] and res.meta["bm25_applied"]
    assert "vectorless" in res.meta["warnings"][0]
    assert store.pending_indexing("notes") == []
    with pytest.raises(ValidationError, match="vectorless"):
        store.index_assertion("n1", np.ones(64))
    store.upgrade_namespace_to_vector("notes", 64)  # the store's embedder fits: indexed at once
    assert store.pending_indexing("notes") == []
    res = store.retrieve(RetrievalQuery("notes", 2, query_text="boiler", strategy="vector"))
    assert res.ids == ["n1"] and res.meta["vector_applied"]


@pytest.mark.parametrize("how", ["flag", "stdlib-connection"])
def test_store_runs_without_sqlite_vec(tmp_path: Path, how: str) -> None:
    path = tmp_path / "novec.db"
    if how == "flag":
        store = AssertionStore.open(path, embedder=HashEmbedder(32), sqlite_vec=False)
    else:  # this Python's own sqlite3 cannot load extensions at all
        conn = sqlite3.connect(path, isolation_level=None)
        store = AssertionStore.open(conn, embedder=HashEmbedder(32))
    assert not store.vector_enabled
    episode(store)
    store.write_assertion(make("a", "heat pump installed", 1))
    store.write_assertion(make("b", "heat pump replaced", 5, supersedes_id="a"))
    res = store.retrieve(RetrievalQuery(NS, 3, query_text="heat pump"))
    assert res.ids == ["a"] and not res.meta["vector_applied"]
    assert "sqlite-vec is not loaded" in res.meta["warnings"][0]
    assert store.retrieve(RetrievalQuery(NS, 6, query_text="heat pump")).ids == ["b"]
    assert store.pending_indexing(NS) == ["a", "b"]
    with pytest.raises(StoreError, match="sqlite-vec"):
        store.index_assertion("a")
    store.close()
    # a later store with sqlite-vec catches up on what was left pending
    with AssertionStore.open(path, embedder=HashEmbedder(32)) as later:
        assert later.index_pending(NS) == 2 and later.pending_indexing(NS) == []
        res = later.retrieve(RetrievalQuery(NS, 6, query_text="heat pump", strategy="vector"))
        assert res.ids == ["b"] and res.meta["vector_applied"]


def test_pending_indexing_without_embedder(tmp_path: Path) -> None:
    with AssertionStore.open(tmp_path / "p.db", embedding_dimension=4) as store:
        episode(store)
        store.write_assertions([make("a", "x", 1), make("b", "y", 1)])
        assert store.pending_indexing(NS) == ["a", "b"]
        store.index_assertion("a", [1, 0, 0, 0])
        assert store.pending_indexing(NS) == ["b"]
        res = store.retrieve(RetrievalQuery(NS, 2, query_embedding=[1, 0, 0, 0], strategy="vector"))
        assert res.ids == ["a"]
        store.write_assertions([make("c", "z", 1)], np.array([[0, 1, 0, 0]], dtype=np.float32))
        assert store.pending_indexing(NS) == ["b"]
        with pytest.raises(ValidationError, match="shape"):
            store.write_assertions([make("d", "w", 1)], np.ones((1, 5), dtype=np.float32))
