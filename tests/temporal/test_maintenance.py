from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import ragtt.temporal as temporal
from ragtt.errors import ConfigError, NamespaceLockedError, ValidationError
from ragtt.index.embedders import HashEmbedder
from ragtt.temporal import (
    AssertionStore,
    Citation,
    Episode,
    ExtensionColumn,
    ExtensionTable,
    RetrievalQuery,
    SchemaExtensions,
)
from tests.temporal.conftest import NS, Fact, episode, make


class Failing(HashEmbedder):
    def __init__(self, dim: int, fail_after: int) -> None:
        super().__init__(dim)
        self.model_id = "failing"
        self.calls = 0
        self.fail_after = fail_after

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        if self.calls > self.fail_after:
            raise RuntimeError("embedding service down")
        return super().embed(texts)


def test_reindex_swaps_in_a_new_dimension(store: AssertionStore, fact: Fact) -> None:
    for i in range(30):
        fact(f"a{i}", f"fact number {i} about tides", i)
    fact("new", "fact number 3 about tides revised", 40, supersedes_id="a3")
    old_table = store.namespaces.info(NS).vec_table
    info = store.reindex_namespace(NS, 32, HashEmbedder(32), batch_size=7)
    assert info.embedding_dimension == 32 and info.vec_table != old_table
    assert store.pending_indexing(NS) == []
    res = store.retrieve(RetrievalQuery(NS, 50, query_text="number 3 tides", strategy="vector", limit=50))
    assert len(res) == 30 and "new" in res.ids and "a3" not in res.ids  # validity survived the copy
    exact = store.retrieve(
        RetrievalQuery(
            NS,
            50,
            query_embedding=HashEmbedder(32).embed(["fact number 3 about tides revised"])[0],
            strategy="vector",
            limit=1,
        )
    )
    assert exact.ids == ["new"] and exact[0].score_components["vector_similarity"] == pytest.approx(1.0)
    assert (
        store.internals.conn.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = ?", (old_table,)).fetchone()[0]
        == 0
    )
    fact("after", "written after the reindex", 60)  # auto-indexing now uses the new embedder
    assert store.pending_indexing(NS) == []


def test_failed_reindex_leaves_the_old_index(store: AssertionStore, fact: Fact) -> None:
    for i in range(20):
        fact(f"a{i}", f"claim {i} on pumps", 1)
    q = RetrievalQuery(NS, 2, query_text="claim 4 pumps", strategy="vector")
    before = store.retrieve(q).ids
    info = store.namespaces.info(NS)
    with pytest.raises(RuntimeError, match="service down"):
        store.reindex_namespace(NS, 16, Failing(16, fail_after=1), batch_size=5)
    assert store.namespaces.info(NS) == info
    assert store.retrieve(q).ids == before
    tables = [
        r[0]
        for r in store.internals.conn.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE 'vec_%' AND sql LIKE 'CREATE VIRTUAL TABLE%'"
        )
    ]
    assert tables == [info.vec_table]
    assert store.internals.conn.execute("SELECT COUNT(*) FROM namespace_locks").fetchone()[0] == 0
    with pytest.raises(ConfigError, match="dimension"):
        store.reindex_namespace(NS, 8, HashEmbedder(16))


def test_reindex_lock_keeps_a_second_run_out(store: AssertionStore, fact: Fact, tmp_path: Path) -> None:
    fact("a", "x", 1)
    store.internals.conn.execute(
        "INSERT INTO namespace_locks VALUES (?, 'other', 1, ?, 0)", (NS, __import__("socket").gethostname())
    )
    with pytest.raises(NamespaceLockedError, match="being reindexed"):
        store.reindex_namespace(NS, 16, HashEmbedder(16))
    store.internals.conn.execute("UPDATE namespace_locks SET pid = 2147480000")  # a process that no longer exists
    store.reindex_namespace(NS, 16, HashEmbedder(16))
    assert store.namespaces.info(NS).embedding_dimension == 16


def test_rebuild_fts_with_another_tokenizer(store: AssertionStore, fact: Fact) -> None:
    fact("a", "photovoltaic installation", 1)
    q = RetrievalQuery(NS, 2, query_text="voltaic", strategy="bm25")
    assert store.retrieve(q).ids == []
    assert store.rebuild_fts("trigram") == "trigram"
    assert store.retrieve(q).ids == ["a"]
    fact("b", "voltaic pile", 1)  # triggers keep the rebuilt index in sync
    assert set(store.retrieve(q).ids) == {"a", "b"}
    for bad in ("unicode61'); DROP TABLE assertions; --", "icu", "unicode61 remove_diacritics 7"):
        with pytest.raises(ConfigError):
            store.rebuild_fts(bad)
    assert store.rebuild_fts("porter unicode61 remove_diacritics 1") == "porter unicode61 remove_diacritics 1"


def test_schema_extensions_are_validated_and_idempotent(tmp_path: Path) -> None:
    ext = SchemaExtensions(
        columns=[
            ExtensionColumn("assertions", "tenant", "TEXT", "acme"),
            ExtensionColumn("episodes", "channel", "text"),
        ],
        tables=[ExtensionTable("reviews", [("verdict", "TEXT"), ("score", "REAL")])],
    )
    path = tmp_path / "ext.db"
    with AssertionStore.open(path, embedding_dimension=8, schema_extensions=ext) as store:
        store.init_namespace(NS, 8)
        store.write_episode(Episode("e1", NS, 0, 0.0, "chat", "x", extensions={"channel": "email"}))
        store.write_assertion(make("a", "x", 1, extensions={"tenant": "globex"}))
        store.write_assertion(make("b", "y", 1))
        assert store.get_assertion("a").extensions == {"tenant": "globex"}  # type: ignore[union-attr]
        assert store.get_assertion("b").extensions == {"tenant": "acme"}  # type: ignore[union-attr]
        assert store.get_episode("e1").extensions == {"channel": "email"}  # type: ignore[union-attr]
        assert store.snapshot(NS, 2)["tenant"].to_list() == ["globex", "acme"]
        store.internals.conn.execute("INSERT INTO ext_reviews (assertion_id, verdict, score) VALUES ('a', 'ok', 1.0)")
        with pytest.raises(ValidationError, match="unknown extension columns"):
            store.write_assertion(make("c", "z", 1, extensions={"nope": 1}))
    with AssertionStore.open(path, schema_extensions=ext) as again:  # applied twice: nothing changes
        assert again.internals.conn.execute("SELECT COUNT(*) FROM ext_reviews").fetchone()[0] == 1
    changed = SchemaExtensions(columns=[ExtensionColumn("assertions", "tenant", "INTEGER")])
    with pytest.raises(ConfigError, match="cannot be changed"):
        AssertionStore.open(path, schema_extensions=changed)
    for bad in (
        lambda: ExtensionColumn("assertions", "x; DROP", "TEXT"),
        lambda: ExtensionColumn("assertions", "content", "TEXT"),
        lambda: ExtensionColumn("links", "x", "TEXT"),
        lambda: ExtensionColumn("assertions", "x", "JSONB"),
        lambda: ExtensionTable("t", [("id", "TEXT")]),
    ):
        with pytest.raises(ConfigError):
            bad()


def test_logger_and_metrics_hooks(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    seen: list[tuple[str, float, dict]] = []
    log = logging.getLogger("test.temporal")
    store = AssertionStore.open(
        tmp_path / "m.db",
        embedding_dimension=8,
        logger=log,
        metrics=lambda name, value, tags: seen.append((name, value, dict(tags))),
    )
    episode(store)
    with caplog.at_level(logging.INFO, logger="test.temporal"):
        store.write_assertion(make("a", "x", 1))  # no embedder: logged, left pending
    assert any("not indexing" in r.message for r in caplog.records)
    store.retrieve(RetrievalQuery(NS, 2, query_text="x"))
    names = [n for n, _, _ in seen]
    assert names == ["assertions.written", "retrieve.took_ms"]
    assert seen[1][2] == {"namespace": NS, "strategy": "hybrid"}
    store.metrics = lambda *a: 1 / 0  # a broken metrics sink never breaks a query
    store.retrieve(RetrievalQuery(NS, 2, query_text="x"))
    store.close()


def test_public_names_and_project_style_open(tmp_path: Path) -> None:
    assert sorted(temporal.__all__) == sorted(
        [
            "FORMATTERS",
            "AssembledContext",
            "Assertion",
            "AssertionStore",
            "Candidate",
            "Citation",
            "ConnectedAssertion",
            "Episode",
            "ExtensionColumn",
            "ExtensionTable",
            "LinearScorer",
            "Link",
            "Metrics",
            "MissingExcerptWarning",
            "NamespaceInfo",
            "RRFScorer",
            "RetrievalQuery",
            "RetrievalResult",
            "RetrievedAssertion",
            "SchemaExtensions",
            "Scorer",
            "ScoringContext",
            "estimate_tokens",
            "match_expression",
            "to_position",
            "validate_tokenizer",
        ]
    )
    for name in temporal.__all__:
        assert getattr(temporal, name) is not None
    # what Project does: open <project>/assertions.db with its embedder, positions in UNIX seconds
    store = AssertionStore.open(tmp_path / "proj" / "assertions.db", embedder=HashEmbedder())
    now = 1_700_000_000.0
    store.write_episode(Episode("q1", "default", now, now, "query", "what is the refund window?"))
    chunk = SimpleNamespace(
        chunk_id="ck1",
        doc_id="d1",
        source="policy.pdf",
        text="Refunds within 14 days.",
        charspan=(10, 33),
        regions=[(1, 72.0, 100.0, 300.0, 112.0)],
    )
    cite = Citation.from_chunk(chunk, episode_id="q1")
    assert (cite.source_ref, cite.excerpt, cite.excerpt_start, cite.excerpt_end) == ("ck1", chunk.text, 10, 33)
    assert cite.metadata == {
        "source": "policy.pdf",
        "doc_id": "d1",
        "charspan": [10, 33],
        "regions": [[1, 72.0, 100.0, 300.0, 112.0]],
    }
    store.write_assertion(
        temporal.Assertion("r1", "default", "policy", "refund window is 14 days", now, 0.8, "q1", [cite])
    )
    res = store.retrieve(RetrievalQuery("default", now + 1, query_text="refund window"))
    assert res.ids == ["r1"] and res.meta["vector_applied"]
    assert res[0].citations[0].metadata["regions"] == [[1, 72.0, 100.0, 300.0, 112.0]]  # type: ignore[index]
    store.close()
