"""Issue 15.2 on real history: Flask releases as episodes, their config settings as assertions.

Each release from 1.0 on is an episode (position = its index); each ``.. py:data::`` setting is
an assertion about that setting, superseded when its text changes and closed when the docs drop
it. Links tie settings documented together; a link expires when the docs drop an endpoint.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragtt.errors import ValidationError
from ragtt.index.embedders import HashEmbedder
from ragtt.temporal import (
    Assertion,
    AssertionStore,
    Citation,
    Episode,
    ExtensionColumn,
    ExtensionTable,
    Link,
    RetrievalQuery,
    SchemaExtensions,
)
from ragtt.temporal.scoring import Candidate, ScoringContext
from tests.conftest import flask_releases

NS = "flask"


def _settings(release: Path) -> dict[str, str]:
    parts = re.split(r"^\.\. py:data:: (\w+)\s*$", (release / "docs" / "config.rst").read_text("utf-8"), flags=re.M)
    return {parts[i]: " ".join(parts[i + 1].split()) for i in range(1, len(parts), 2)}


class History:
    """What the fixture wrote: positions by release tag, the assertion id valid per (setting, tag)."""

    def __init__(self) -> None:
        self.position: dict[str, float] = {}
        self.claim: dict[tuple[str, str], str] = {}


def _write_history(store: AssertionStore) -> History:
    history = History()
    store.init_namespace(NS, 64)
    current: dict[str, tuple[str, str]] = {}  # setting -> (assertion id, text)
    releases = [r for r in flask_releases() if _settings(r)]
    for pos, release in enumerate(releases, start=1):
        tag = release.name.split("_flask-")[1]
        history.position[tag] = float(pos)
        settings = _settings(release)
        episode = Episode(
            f"flask-{tag}",
            NS,
            float(pos),
            f"{release.name[:10]}T00:00:00+00:00",
            "release",
            f"Flask {tag} docs/config.rst",
        )
        written = []
        for name, text in settings.items():
            before = current.get(name)
            if before is not None and before[1] == text:
                continue
            aid = f"{name}@{tag}"
            written.append(
                Assertion(
                    aid,
                    NS,
                    "config",
                    f"{name}: {text}",
                    float(pos),
                    0.9,
                    episode.id,
                    (Citation(f"cite-{aid}", episode.id, f"{release.name}/docs/config.rst", text[:120]),),
                    supersedes_id=before[0] if before else None,
                    entity_id=name,
                )
            )
            current[name] = (aid, text)
        store.write_episode_bundle(episode, written)
        for name in [n for n in current if n not in settings]:
            store.advanced.close_assertion(current.pop(name)[0], float(pos))
        for name, (aid, _) in current.items():
            history.claim[(name, tag)] = aid
    return history


class Recorder:
    def __init__(self, name: str, calls: list[str]) -> None:
        self.name, self.calls = name, calls

    def before(self, query: RetrievalQuery) -> None:
        self.calls.append(f"{self.name}.before")

    def after(self, query: RetrievalQuery, result: Any) -> None:
        self.calls.append(f"{self.name}.after")


@pytest.fixture
def calls() -> list[str]:
    return []


@pytest.fixture
def flask_store(tmp_path: Path, calls: list[str]) -> Iterator[tuple[AssertionStore, History]]:
    middleware = [Recorder("global1", calls), Recorder("global2", calls)]
    with AssertionStore.open(tmp_path / "flask.db", embedder=HashEmbedder(64), middleware=middleware) as store:
        yield store, _write_history(store)


def test_the_fixture_is_real_history(flask_store: tuple[AssertionStore, History]) -> None:
    store, h = flask_store
    removed = store.get_assertion(h.claim[("JSON_AS_ASCII", "2.2.3")])
    assert removed is not None and removed.valid_until == h.position["2.3.0"]
    assert ("JSON_AS_ASCII", "2.3.0") not in h.claim
    rewritten = h.claim[("SESSION_COOKIE_DOMAIN", "2.3.0")]
    assert store.get_assertion(rewritten).supersedes_id == h.claim[("SESSION_COOKIE_DOMAIN", "2.2.3")]  # type: ignore[union-attr]


def test_a_citation_of_another_namespaces_episode_is_refused(flask_store: tuple[AssertionStore, History]) -> None:
    store, h = flask_store
    store.init_namespace("django", 64)
    store.write_episode(Episode("django-4.2", "django", 1.0, "2023-04-03T00:00:00+00:00", "release", "Django docs"))
    stolen = Citation("c-stolen", "django-4.2", "django/docs/settings.txt", "SECRET_KEY")
    claim = Assertion(
        "SECRET_KEY@cross",
        NS,
        "config",
        "SECRET_KEY signs cookies",
        30.0,
        0.9,
        "flask-3.1.3",
        (stolen,),
        entity_id="SECRET_KEY",
    )
    for write in (
        lambda: store.write_assertion(claim),
        lambda: store.write_episode_bundle(
            Episode("flask-next", NS, 31.0, "2026-03-01T00:00:00+00:00", "release", "next"),
            [Assertion("SECRET_KEY@next", NS, "config", "SECRET_KEY", 31.0, 0.9, "flask-next", (stolen,))],
        ),
        lambda: store.write_citation(h.claim[("SECRET_KEY", "3.1.3")], stolen),
    ):
        with pytest.raises(ValidationError) as info:
            write()
        assert "'django'" in str(info.value) and f"'{NS}'" in str(info.value)
    assert store.get_assertion("SECRET_KEY@cross") is None and store.get_episode("flask-next") is None
    own = Citation("c-own", "flask-3.1.3", "docs/config.rst", "SECRET_KEY")
    assert store.write_citation(h.claim[("SECRET_KEY", "3.1.3")], own) == own


def test_connected_walks_expired_links_and_superseded_claims_with_include_superseded(
    flask_store: tuple[AssertionStore, History],
) -> None:
    store, h = flask_store
    json_ascii, json_sort = h.claim[("JSON_AS_ASCII", "2.2.3")], h.claim[("JSON_SORT_KEYS", "2.2.3")]
    removed_at = h.position["2.3.0"]
    store.write_link(
        Link("json-family", NS, json_ascii, json_sort, "documented_with", h.position["2.2.0"], removed_at)
    )  # the docs dropped both in 2.3.0
    server_name, old_domain = h.claim[("SERVER_NAME", "2.2.3")], h.claim[("SESSION_COOKIE_DOMAIN", "2.2.3")]
    store.write_link(Link("domain-fallback", NS, server_name, old_domain, "affects", h.position["1.0"]))
    after = h.position["3.0.0"]

    def reached(aid: str, **kw: Any) -> list[str]:
        return [c.assertion.id for c in store.connected(aid, **kw)]

    assert reached(json_ascii, at=h.position["2.2.3"]) == [json_sort]  # valid then: walked as before
    assert reached(json_ascii, at=after) == []  # the link expired at 2.3.0
    walked = store.connected(json_ascii, at=after, include_superseded=True)
    assert [c.assertion.id for c in walked] == [json_sort] and walked[0].path[0].id == "json-family"
    assert walked[0].assertion.valid_until == removed_at
    assert reached(json_ascii, at=h.position["2.1.0"], include_superseded=True) == []  # link not started yet
    assert reached(json_ascii, include_superseded=True) == [json_sort]  # None: the whole history
    assert store.find_path(json_ascii, json_sort, at=after) is None
    assert [link.id for link in store.find_path(json_ascii, json_sort, at=after, include_superseded=True) or []] == [
        "json-family"
    ]
    # SESSION_COOKIE_DOMAIN was rewritten in 2.3.0: its old claim is superseded, not valid after
    assert store.get_assertion(server_name).valid_until is not None  # type: ignore[union-attr]
    assert old_domain not in reached(server_name, at=after, max_depth=1)
    assert old_domain in reached(server_name, at=after, max_depth=1, include_superseded=True)


def test_per_call_middleware_runs_inside_the_global_list(
    flask_store: tuple[AssertionStore, History], calls: list[str]
) -> None:
    store, h = flask_store
    query = RetrievalQuery(NS, h.position["2.2.3"], "JSON_AS_ASCII serialize ASCII")
    result = store.retrieve(query, middleware=[Recorder("call1", calls), Recorder("call2", calls)])
    assert calls == [
        "global1.before",
        "global2.before",
        "call1.before",
        "call2.before",
        "call2.after",
        "call1.after",
        "global2.after",
        "global1.after",
    ]
    assert result.results[0].entity_id == "JSON_AS_ASCII"
    calls.clear()
    store.retrieve(query)
    assert calls == ["global1.before", "global2.before", "global2.after", "global1.after"]
    with pytest.raises(ValidationError, match="middleware must be a list"):
        store.retrieve(query, middleware=Recorder("bare", calls))  # type: ignore[arg-type]


class _Scorer:
    def __init__(self, make: Any) -> None:
        self.make = make

    def score_batch(self, candidates: Sequence[Candidate], context: ScoringContext) -> list[float]:
        return list(self.make(len(candidates)))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda n: [float("nan")] * n, "non-finite"),
        (lambda n: [1.0] * (n - 1) + [float("inf")], "non-finite"),
        (lambda n: [1.0] * (n + 1), "scores for"),
        (lambda n: ["high"] * n, "not a number"),
    ],
)
def test_a_scorer_with_nan_inf_or_the_wrong_count_raises(
    flask_store: tuple[AssertionStore, History], tmp_path: Path, make: Any, message: str
) -> None:
    _, h = flask_store
    with (
        AssertionStore.open(tmp_path / "flask.db", embedder=HashEmbedder(64), scorer=_Scorer(make)) as bad,
        pytest.raises(ValidationError, match=message),
    ):
        bad.retrieve(RetrievalQuery(NS, h.position["2.2.3"], "JSON_SORT_KEYS"))


class _Zero:
    """Same model id and dimension as the namespace's embedder, but a zero vector at query time."""

    def __init__(self, empty: bool = False) -> None:
        self.model_id, self.dim, self.empty = HashEmbedder(64).model_id, 64, empty

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.zeros((len(texts), 0 if self.empty else 64), dtype=np.float32)


def test_vector_strategy_without_a_vector_raises_and_hybrid_falls_back_with_a_warning(
    flask_store: tuple[AssertionStore, History], tmp_path: Path
) -> None:
    store, h = flask_store
    at = h.position["3.1.3"]
    assert store.retrieve(RetrievalQuery(NS, at, "SECRET_KEY", strategy="vector")).results  # it works with one
    with (
        AssertionStore.open(tmp_path / "flask.db") as no_embedder,
        pytest.raises(ValidationError, match=r"strategy 'vector' needs a query vector.*no embedder"),
    ):
        no_embedder.retrieve(RetrievalQuery(NS, at, "SECRET_KEY", strategy="vector"))
    with AssertionStore.open(tmp_path / "flask.db", embedder=_Zero()) as zero:  # type: ignore[arg-type]
        with pytest.raises(ValidationError, match="strategy 'vector' needs a query vector"):
            zero.retrieve(RetrievalQuery(NS, at, "SECRET_KEY", strategy="vector"))
        hybrid = zero.retrieve(RetrievalQuery(NS, at, "SECRET_KEY", strategy="hybrid"))
        assert hybrid.results and not hybrid.meta["vector_applied"]
        assert any("vector search skipped" in w for w in hybrid.meta["warnings"])
    # An embedder that returns no vector at all is broken: an error naming it and the query
    # (issue 30), whatever the strategy, never an answer from full text alone.
    with AssertionStore.open(tmp_path / "flask.db", embedder=_Zero(empty=True)) as broken:  # type: ignore[arg-type]
        for strategy in ("vector", "hybrid"):
            with pytest.raises(ValidationError, match=r"returned no vector for the query 'SECRET_KEY'"):
                broken.retrieve(RetrievalQuery(NS, at, "SECRET_KEY", strategy=strategy))
    store.init_namespace("flask-text")  # vectorless
    store.write_episode(Episode("t1", "flask-text", 1.0, "2023-04-25T00:00:00+00:00", "release", "2.3.0"))
    store.write_assertion(
        Assertion(
            "t-secret",
            "flask-text",
            "config",
            "SECRET_KEY signs the session cookie",
            1.0,
            0.9,
            "t1",
            (Citation("ct", "t1", "docs/config.rst", "SECRET_KEY"),),
        )
    )
    with pytest.raises(ValidationError, match="vectorless"):
        store.retrieve(RetrievalQuery("flask-text", 2.0, "SECRET_KEY", strategy="vector"))
    assert store.retrieve(RetrievalQuery("flask-text", 2.0, "SECRET_KEY", strategy="hybrid")).results


def test_extension_names_that_are_sql_keywords_work(tmp_path: Path) -> None:
    extensions = SchemaExtensions(
        columns=[
            ExtensionColumn("assertions", "order", "INTEGER", 0),
            ExtensionColumn("episodes", "select", "TEXT", "none"),
        ],
        tables=[ExtensionTable("where", [("group", "TEXT"), ("index", "INTEGER")])],
    )
    with AssertionStore.open(tmp_path / "kw.db", embedder=HashEmbedder(64), schema_extensions=extensions) as store:
        h = _write_history(store)
        aid = h.claim[("SECRET_KEY", "3.1.3")]
        assert store.get_assertion(aid).extensions == {"order": 0}  # type: ignore[union-attr]
        assert store.get_episode("flask-3.1.3").extensions == {"select": "none"}  # type: ignore[union-attr]
        store.write_episode(
            Episode("flask-x", NS, 99.0, "2026-03-01T00:00:00+00:00", "release", "x", extensions={"select": "picked"})
        )
        store.write_assertion(
            Assertion(
                "x",
                NS,
                "config",
                "SECRET_KEY x",
                99.0,
                0.9,
                "flask-x",
                (Citation("cx", "flask-x", "r", "x"),),
                extensions={"order": 7},
            )
        )
        assert store.get_assertion("x").extensions == {"order": 7}  # type: ignore[union-attr]
        frame = store.snapshot(NS, 99.0)
        assert "order" in frame.columns and 7 in frame["order"].to_list()
        found = store.retrieve(RetrievalQuery(NS, 99.0, "SECRET_KEY x"))
        assert found.results[0].extensions == {"order": 7}
    with AssertionStore.open(tmp_path / "kw.db", schema_extensions=extensions) as again:  # idempotent reopen
        assert again.get_assertion("x").extensions == {"order": 7}  # type: ignore[union-attr]


def test_expand_links_marks_hits_linked_from_other_hits(flask_store: tuple[AssertionStore, History]) -> None:
    store, h = flask_store
    at = h.position["2.2.3"]
    ascii_id, sort_id = h.claim[("JSON_AS_ASCII", "2.2.3")], h.claim[("JSON_SORT_KEYS", "2.2.3")]
    mimetype = h.claim[("JSONIFY_MIMETYPE", "2.2.3")]
    store.write_link(Link("l-sort", NS, ascii_id, sort_id, "documented_with", at))
    store.write_link(Link("l-mime", NS, sort_id, mimetype, "documented_with", at))
    result = store.retrieve(RetrievalQuery(NS, at, "JSON_AS_ASCII JSON_SORT_KEYS", limit=2, expand_links=True))
    by_id = {r.id: r for r in result.results}
    assert {r.id for r in result.results[:2]} == {ascii_id, sort_id}
    assert by_id[sort_id].linked_from == ascii_id and by_id[ascii_id].linked_from == sort_id
    assert by_id[mimetype].linked_from == sort_id and by_id[mimetype].link_depth == 1  # a neighbour, as before
    plain = store.retrieve(RetrievalQuery(NS, at, "JSON_AS_ASCII JSON_SORT_KEYS", limit=2))
    assert all(r.linked_from is None for r in plain.results)
