from __future__ import annotations

import json

import pytest

from ragtt.errors import ValidationError
from ragtt.temporal import AssertionStore, Link, RetrievalQuery
from tests.temporal.conftest import NS, Fact, episode, make


@pytest.fixture
def graph(store: AssertionStore, fact: Fact) -> AssertionStore:
    for aid in "abcdef":
        fact(aid, f"node {aid} content", 1)
    for lid, src, dst, kind, start, end in [
        ("l1", "a", "b", "causes", 1, None),
        ("l2", "b", "c", "causes", 1, None),
        ("l3", "a", "d", "related", 1, 10),  # expires at 10
        ("l4", "d", "e", "related", 1, None),
        ("l5", "c", "f", "causes", 20, None),  # starts at 20
        ("l6", "a", "c", "blocks", 1, None),
    ]:
        store.write_link(Link(lid, NS, src, dst, kind, start, end))
    return store


def ids(found: list) -> list[tuple[str, int]]:
    return [(c.assertion.id, c.depth) for c in found]


def test_connected_respects_link_validity_and_depth(graph: AssertionStore) -> None:
    assert ids(graph.connected("a", at=5)) == [("c", 1), ("b", 1), ("d", 1), ("e", 2)]
    assert ids(graph.connected("a", at=15)) == [("c", 1), ("b", 1)]  # l3 expired: d and e unreachable
    assert ids(graph.connected("a", at=25)) == [("c", 1), ("b", 1), ("f", 2)]
    assert ids(graph.connected("a")) == [("c", 1), ("b", 1), ("f", 2)]  # None: open links only
    assert ids(graph.connected("a", at=5, max_depth=1)) == [("c", 1), ("b", 1), ("d", 1)]
    assert ids(graph.connected("a", at=25, link_types=["causes"])) == [("b", 1), ("c", 2), ("f", 3)]
    assert ids(graph.connected("f", at=25, direction="out")) == []
    assert ids(graph.connected("f", at=25, direction="in", max_depth=1)) == [("c", 1)]
    path = graph.connected("a", at=25, link_types=["causes"])[-1].path
    assert [link.id for link in path] == ["l1", "l2", "l5"]


def test_superseded_nodes_drop_out(graph: AssertionStore, fact: Fact) -> None:
    fact("b2", "node b revised", 3, supersedes_id="b")
    assert ids(graph.connected("a", at=2, link_types=["causes"])) == [("b", 1), ("c", 2)]
    assert ids(graph.connected("a", at=4, link_types=["causes"])) == []


def test_find_path(graph: AssertionStore) -> None:
    assert [link.id for link in graph.find_path("a", "e", at=5) or []] == ["l3", "l4"]
    assert graph.find_path("a", "e", at=15) is None
    assert [link.id for link in graph.find_path("a", "f", at=25) or []] == ["l6", "l5"]
    assert graph.find_path("a", "f", at=25, max_depth=1) is None
    assert graph.find_path("f", "a", at=25) is None
    assert [link.id for link in graph.find_path("f", "a", at=25, direction="both") or []] == ["l5", "l6"]


def test_links_across_namespaces_must_be_explicit(graph: AssertionStore) -> None:
    graph.init_namespace("other")
    episode(graph, "eo", "other")
    graph.write_assertion(make("z", "elsewhere", 1, namespace="other", episode_id="eo"))
    with pytest.raises(ValidationError, match="allow_cross_namespace"):
        graph.write_link(Link("x1", NS, "a", "z", "related", 1))
    graph.write_link(Link("x1", NS, "a", "z", "related", 1), allow_cross_namespace=True)
    assert ("z", 1) in ids(graph.connected("a", at=25))
    with pytest.raises(ValidationError, match="does not exist"):
        graph.write_link(Link("x2", NS, "a", "nope", "related", 1))


def test_retrieve_expands_links(graph: AssertionStore) -> None:
    res = graph.retrieve(RetrievalQuery(NS, 5, query_text="node a", strategy="bm25", limit=1, expand_links=True))
    assert res.ids[0] == "a"
    linked = {r.id: (r.link_depth, r.linked_from) for r in res.results[1:]}
    assert linked == {"b": (1, "a"), "c": (1, "a"), "d": (1, "a")}
    assert all(r.score == pytest.approx(res[0].score * 0.5) for r in res.results[1:])


def test_context_fits_the_budget(store: AssertionStore, fact: Fact) -> None:
    for i in range(12):
        fact(f"a{i:02d}", f"policy clause {i} says the deposit is {i * 10} euros", 1)
    q = RetrievalQuery(NS, 2, query_text="policy deposit", limit=12)
    full = store.assemble_context(q, 10_000)
    assert not full.truncated and full.coverage["included"] == 12
    for formatter in ("prose", "structured", "json"):
        small = store.assemble_context(q, 120, formatter)
        assert small.truncated and 0 < small.coverage["included"] < 12
        assert small.token_count <= 120 and len(small.text) / 4 <= 120
        assert small.coverage["assertion_ids"] == [a.id for a in small.assertions]
        assert small.coverage["assertion_ids"] == full.coverage["assertion_ids"][: small.coverage["included"]]
        for a in small.assertions:
            assert a.content in small.text or formatter == "json"
        if formatter == "json":
            data = json.loads(small.text)
            assert [a["id"] for a in data["assertions"]] == small.coverage["assertion_ids"]
    words = store.assemble_context(q, 40, token_counter=lambda s: len(s.split()))
    assert words.token_count <= 40 and len(words.text.split()) <= 40
    tiny = store.assemble_context(q, 1)
    assert tiny.text == "" and tiny.truncated and tiny.coverage["position_range"] is None
    with pytest.raises(ValidationError):
        store.assemble_context(q, 100, "yaml")
    assert "&lt;" not in full._repr_html_() and "12 assertions" in full._repr_html_()
