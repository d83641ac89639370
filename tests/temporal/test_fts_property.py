from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragtt.temporal import AssertionStore, RetrievalQuery, match_expression
from tests.temporal.conftest import NS, episode, make

NASTY = st.sampled_from(
    [
        "",
        " ",
        '"',
        "'",
        "(",
        ")",
        "((",
        "*",
        "-",
        "^",
        "NEAR(a b)",
        "NEAR",
        "AND",
        "OR",
        "NOT",
        "a OR",
        "col:term",
        "content:x",
        '"unbalanced',
        "x*",
        "{a b}",
        "'; DROP TABLE assertions; --",
        "\x00",
        "🦓",
        "refund",
        "14",
        "days",
        "+",
        ":",
        "a NEAR/3 b",
        "\\",
        "%",
        "_",
        "\u200b",
        "ǅ",
    ]
)
TEXT = st.one_of(
    st.text(max_size=60),
    st.lists(st.one_of(NASTY, st.text(max_size=8)), max_size=8).map(" ".join),
)


def test_terms_query_quotes_every_word() -> None:
    assert match_expression('refund NEAR(x) "days"') == '"refund" OR "near" OR "x" OR "days"'
    assert match_expression('  ()"*  ') is None
    assert match_expression("a b", "phrase") == '"a b"'


def test_any_text_in_terms_mode_returns_a_list(tmp_path: Path) -> None:
    store = AssertionStore.open(tmp_path / "p.db", embedding_dimension=8)
    episode(store)
    store.write_assertions([make("a", "refunds take 14 days", 1), make("b", "NEAR the river, zebra 🦓", 1)])
    seen = {"count": 0, "hits": 0}

    @settings(max_examples=1200, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(text=TEXT, mode=st.sampled_from(["terms", "phrase"]))
    def check(text: str, mode: str) -> None:
        res = store.retrieve(RetrievalQuery(NS, 5, query_text=text, query_text_mode=mode, strategy="bm25"))
        assert isinstance(res.results, list)
        seen["count"] += 1
        seen["hits"] += bool(res.results)

    check()
    store.close()
    assert seen["count"] >= 1000
    assert seen["hits"] > 0  # the property ran real searches, not only empty ones
