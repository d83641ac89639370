from __future__ import annotations

import sqlite3
import warnings
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ragtt._sqlite import connect
from ragtt.errors import NotFoundError, StoreError, SupersessionError, ValidationError
from ragtt.temporal import Assertion, AssertionStore, Citation, Episode, Link, MissingExcerptWarning, RetrievalQuery
from ragtt.temporal.schema import MIGRATIONS, SCHEMA_VERSION, ExtensionColumn, SchemaExtensions
from tests.temporal.conftest import NS, Fact, episode, make


def valid_ids(store: AssertionStore, at: float) -> list[str]:
    return store.snapshot(NS, at)["id"].to_list()


def test_supersession_closes_predecessor_at_successor_start(store: AssertionStore, fact: Fact) -> None:
    fact("a1", "refunds take 14 days", 100)
    fact("a2", "refunds take 30 days", 200, supersedes_id="a1")
    old = store.get_assertion("a1")
    assert old is not None and old.valid_until == 200
    assert valid_ids(store, 199.999) == ["a1"]
    assert valid_ids(store, 200) == ["a2"]  # half-open: at the boundary only the successor is valid
    assert valid_ids(store, 99) == []
    history = store.snapshot(NS, 300, include_superseded=True)
    assert history["id"].to_list() == ["a1", "a2"]
    assert history["valid_at_position"].to_list() == [False, True]
    assert history["superseded_by"].to_list() == ["a2", None]


@pytest.mark.parametrize(
    ("setup", "successor", "reason"),
    [
        ([], make("b", "x", 200, supersedes_id="missing"), "does not exist"),
        (
            [make("a", "x", 100, namespace="other", episode_id="e-other")],
            make("b", "x", 200, supersedes_id="a"),
            "is in namespace 'other'",
        ),
        ([make("a", "x", 100)], make("b", "x", 100, supersedes_id="a"), "must start after"),
        ([make("a", "x", 100)], make("b", "x", 50, supersedes_id="a"), "must start after"),
        ([make("a", "x", 100, valid_until=150)], make("b", "x", 200, supersedes_id="a"), "closed at 150"),
        (
            [make("a", "x", 100), make("b", "y", 200, supersedes_id="a")],
            make("c", "z", 300, supersedes_id="a"),
            "closed at 200",
        ),
    ],
)
def test_supersession_refusals_write_nothing(
    store: AssertionStore, setup: list[Assertion], successor: Assertion, reason: str
) -> None:
    store.init_namespace("other")
    episode(store, "e1")
    episode(store, "e-other", "other")
    for a in setup:
        store.write_assertion(a)
    before = {a.id: store.get_assertion(a.id) for a in setup}
    with pytest.raises(SupersessionError, match=reason):
        store.write_assertion(successor)
    assert store.get_assertion(successor.id) is None
    assert {a.id: store.get_assertion(a.id) for a in setup} == before


def test_already_superseded_is_refused_even_when_closed_at_the_same_position(store: AssertionStore, fact: Fact) -> None:
    fact("a", "x", 100)
    fact("b", "y", 200, supersedes_id="a")
    with pytest.raises(SupersessionError, match="already supersedes it"):
        fact("c", "z", 200.0 + 0, supersedes_id="a")


def test_predecessor_closed_at_exactly_the_successor_start_is_accepted(store: AssertionStore, fact: Fact) -> None:
    fact("a", "x", 100)
    store.advanced.close_assertion("a", 150)
    fact("b", "y", 150, supersedes_id="a")
    assert valid_ids(store, 150) == ["b"]
    assert store.get_assertion("a").valid_until == 150  # type: ignore[union-attr]


def test_batch_refuses_two_successors_of_one_predecessor(store: AssertionStore, fact: Fact) -> None:
    fact("a", "x", 100)
    batch = [make("b", "y", 200, supersedes_id="a"), make("c", "z", 300, supersedes_id="a")]
    with pytest.raises(SupersessionError) as info:
        store.write_assertions(batch)
    assert len(info.value.errors) == 1
    assert store.get_assertion("b") is None and store.get_assertion("a").valid_until is None  # type: ignore


def test_batch_may_hold_a_chain(store: AssertionStore, fact: Fact) -> None:
    fact("a", "v1", 100)
    store.write_assertions([make("b", "v2", 200, supersedes_id="a"), make("c", "v3", 300, supersedes_id="b")])
    assert [store.get_assertion(i).valid_until for i in "abc"] == [200, 300, None]  # type: ignore[union-attr]


def test_a_bad_item_fails_the_whole_batch_and_lists_every_problem(store: AssertionStore, fact: Fact) -> None:
    fact("a", "x", 100)
    batch = [make("n1", "fine", 100), make("a", "duplicate id", 100), make("n2", "bad ep", 100, episode_id="nope")]
    with pytest.raises(ValidationError) as info:
        store.write_assertions(batch)
    assert any("'a' already exists" in e for e in info.value.errors)
    assert any("'nope' does not exist" in e for e in info.value.errors)
    assert store.get_assertion("n1") is None


def test_model_validation_lists_every_error() -> None:
    with pytest.raises(ValidationError) as info:
        Assertion("", "ns", "fact", "", 10, 1.5, "e", [], valid_until=5)
    text = " | ".join(info.value.errors)
    for part in (
        "id must not be empty",
        "content must not be empty",
        "confidence",
        "valid_until (5)",
        "at least one citation",
    ):
        assert part in text
    with pytest.raises(ValidationError, match="finite"):
        Assertion("a", "ns", "fact", "x", float("nan"), 0.5, "e", [Citation("c", "e", "r", "x")])
    with pytest.raises(ValidationError, match="excerpt_end"):
        Citation("c", "e", "r", "x", excerpt_start=5, excerpt_end=2)
    with pytest.raises(ValidationError, match="itself"):
        Link("l", "ns", "a", "a", "rel", 0)


def test_datetimes_become_unix_seconds() -> None:
    when = datetime(2024, 1, 1, tzinfo=UTC)
    a = Assertion("a", "ns", "fact", "x", when, 0.5, "e", [Citation("c", "e", "r", "x")])
    assert a.valid_from == when.timestamp()
    assert a.is_valid_at(when) and not a.is_valid_at(when.timestamp() - 1)


def test_missing_excerpt_warns(store: AssertionStore) -> None:
    episode(store)
    bare = Assertion("a", NS, "fact", "x", 1, 0.5, "e1", [Citation("c", "e1", "doc#1")])
    with pytest.warns(MissingExcerptWarning, match="without an excerpt"):
        store.write_assertion(bare)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        store.write_citation("a", Citation("c2", "e1", "doc#2", "quoted text"))
    assert [c.id for c in store.get_assertion("a").citations] == ["c", "c2"]  # type: ignore[union-attr]


def test_episode_bundle_is_one_transaction(store: AssertionStore) -> None:
    store.init_namespace(NS)
    ep = Episode("e9", NS, 5, datetime(2024, 1, 1, tzinfo=UTC), "chat", "hi")
    good = [make("x1", "one", 5, episode_id="e9"), make("x2", "two", 5, episode_id="e9")]
    link = Link("l1", NS, "x1", "x2", "related", 5)
    assert store.write_episode_bundle(ep, good, [link]) == (ep, 2, 1)
    with pytest.raises(ValidationError):
        store.write_episode_bundle(
            Episode("e10", NS, 6, 6.0, "chat", "hi"),
            [make("x3", "t", 6, episode_id="e10")],
            [Link("l2", NS, "x3", "missing", "related", 6)],
        )
    assert store.get_episode("e10") is None and store.get_assertion("x3") is None


def test_close_assertion_rules(store: AssertionStore, fact: Fact) -> None:
    fact("a", "x", 100)
    with pytest.raises(ValidationError, match="after valid_from"):
        store.advanced.close_assertion("a", 100)
    store.advanced.close_assertion("a", 120)
    with pytest.raises(ValidationError, match="already closed"):
        store.advanced.close_assertion("a", 130)
    with pytest.raises(NotFoundError):
        store.advanced.close_assertion("zzz", 130)


def test_unknown_namespace_and_default_namespace(store: AssertionStore) -> None:
    with pytest.raises(NotFoundError, match="init_namespace"):
        store.write_episode(Episode("e", "nowhere", 0, 0.0, "t", "c"))
    info = store.namespaces.ensure(NS)  # the store's default namespace is created on first use
    assert info.embedding_dimension == 64 and info.embedding_model == "ragtt-hash-v1-64"
    with pytest.raises(Exception, match="exists with embedding_dimension 64"):
        store.init_namespace(NS, 32)


def test_given_connection_stays_open_and_foreign_keys_are_on(tmp_path: Path) -> None:
    from ragtt._sqlite import connect

    conn = connect(tmp_path / "x.db")
    store = AssertionStore.open(conn)
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()
    assert conn.execute("SELECT COUNT(*) FROM assertions").fetchone()[0] == 0  # still usable
    with pytest.raises(StoreError, match="closed"):
        store.init_namespace("x")
    owned = AssertionStore.open(tmp_path / "y.db")
    raw = owned.internals.conn
    owned.close()
    with pytest.raises(Exception, match="closed"):
        raw.execute("SELECT 1")


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    AssertionStore.open(tmp_path / "s.db").close()
    conn = sqlite3.connect(tmp_path / "s.db")
    conn.execute("INSERT INTO schema_migrations VALUES (999, 0)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer"):
        AssertionStore.open(tmp_path / "s.db")


def test_a_version_1_store_migrates_to_batch_indexed_full_text(tmp_path: Path) -> None:
    # a store as version 1 left it: the insert trigger indexed each row as it was written
    path = tmp_path / "v1.db"
    conn = connect(path, foreign_keys=True)
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL)")
    for sql in dict(MIGRATIONS)[1]:
        conn.execute(sql)
    conn.execute("INSERT INTO schema_migrations VALUES (1, 0)")
    conn.execute("INSERT INTO namespaces (name, created_at) VALUES (?, 0)", (NS,))
    conn.execute("INSERT INTO episodes VALUES ('e1', ?, 0, '2024-01-01', 'note', 'source', NULL)", (NS,))
    conn.execute(
        "INSERT INTO assertions (id, namespace, type, content, valid_from, confidence, source_episode_id, created_at) "
        "VALUES ('old', ?, 'fact', 'refunds take fourteen days', 1, 0.9, 'e1', 0)",
        (NS,),
    )
    conn.execute("INSERT INTO citations VALUES ('c-old', 'old', 'e1', 'ref:old', 'fourteen days', NULL, NULL, NULL)")
    conn.close()
    with AssertionStore.open(path) as store:
        assert store.schema_version == SCHEMA_VERSION == 2
        with store.internals.read() as raw:  # the test inspects the schema behind the API
            triggers = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
        assert triggers == {"assertions_fts_ad", "assertions_fts_au"}
        store.write_assertions([make("new", "refunds now take thirty days", 5), make("other", "unrelated", 6)])
        res = store.retrieve(RetrievalQuery(NS, 10, query_text="refunds", strategy="bm25"))
        assert sorted(res.ids) == ["new", "old"]  # the migrated row and the new one, each once
        store.rebuild_fts()
        assert sorted(store.retrieve(RetrievalQuery(NS, 10, query_text="refunds", strategy="bm25")).ids) == [
            "new",
            "old",
        ]
        with store.internals.read() as raw:  # FTS5's own check: the index holds exactly the content rows
            raw.execute("INSERT INTO assertions_fts(assertions_fts) VALUES ('integrity-check')")
    with AssertionStore.open(path) as again:  # a migrated store opens without migrating twice
        assert again.schema_version == 2


def test_an_assertion_read_back_is_the_one_written_field_for_field(tmp_path: Path) -> None:
    # records read back are rebuilt without validating again (models.stored): each must still
    # hold every field, with the values and types validation would give them
    ext = SchemaExtensions(columns=[ExtensionColumn("assertions", "tenant", "TEXT", "acme")])
    with AssertionStore.open(tmp_path / "r.db", schema_extensions=ext) as store:
        episode(store)
        cited = Citation("c1", "e1", "doc#7", "fourteen days", 3, 16, metadata={"page": 2, "boxes": [[1, 2, 3, 4]]})
        written = Assertion(
            "a1",
            NS,
            "policy",
            "Refunds take fourteen days",
            datetime(2024, 1, 1, tzinfo=UTC),
            1,
            "e1",
            [Citation("c0", "e1", "doc#1", None), cited],  # read back in id order
            valid_until=1.8e9,
            entity_id="refunds",
            entity_type="topic",
            metadata={"b": 1, "a": [True, None]},
            extensions={"tenant": "globex"},
        )
        with pytest.warns(MissingExcerptWarning):  # c0 quotes nothing: excerpt None must read back as None
            store.write_assertion(written)
        store.write_assertion(make("a2", "plain", 5))
        for original in (written, store.get_assertion("a2")):
            loaded = store.get_assertion(original.id)  # type: ignore[union-attr]
            assert loaded == original and loaded is not original
            assert set(vars(loaded)) == set(Assertion.__dataclass_fields__)
            revalidated = Assertion(**{name: getattr(loaded, name) for name in Assertion.__dataclass_fields__})
            assert [(n, type(v)) for n, v in vars(loaded).items()] == [
                (n, type(getattr(revalidated, n))) for n in vars(loaded)
            ]
            for citation in loaded.citations:
                assert set(vars(citation)) == set(Citation.__dataclass_fields__)
                assert citation == Citation(**vars(citation))
        assert [c.id for c in store.get_assertion("a1").citations] == ["c0", "c1"]  # type: ignore[union-attr]
