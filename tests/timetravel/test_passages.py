"""Passage pairing and grouped word runs (the "changed" card of a diff)."""

from __future__ import annotations

import itertools

import pytest

from ragtt.timetravel.passages import PassagePair, pair_passages, similarity, word_runs


def _sides(runs: list[tuple[str, str]]) -> tuple[str, str]:
    old = "".join(t for op, t in runs if op != "insert")
    new = "".join(t for op, t in runs if op != "delete")
    return old, new


def test_word_runs_are_grouped_not_interleaved() -> None:
    a = "You can ask for a refund within 30 days of purchase. Contact support."
    b = "Annual plans can be refunded within 14 days of purchase. Contact support."
    runs = word_runs(a, b)
    assert [op for op, _ in runs] == ["delete", "insert", "equal"]
    assert runs[0][1].startswith("You can ask") and runs[1][1].startswith("Annual plans can be")
    old, new = _sides(runs)
    assert old == a and new == b


def test_word_runs_one_delete_and_one_insert_per_edit_and_whitespace_is_not_an_edit() -> None:
    a = (
        "SESSION_COOKIE_SAMESITE  restricts how cookies are sent\nwith requests from external sites. "
        "Can be set to 'Lax' or 'Strict'."
    )
    b = (
        "SESSION_COOKIE_SAMESITE restricts how cookies are sent with requests from external sites. "
        "Can be set to 'Lax' (recommended) or 'Strict'. See Set-Cookie options."
    )
    runs = word_runs(a, b)
    ops = [op for op, _ in runs]
    assert ops == ["equal", "insert", "equal", "insert"]  # two pure insertions stay two
    assert runs[1][1] == "(recommended) " and runs[3][1] == "See Set-Cookie options."
    for x, y in itertools.pairwise(ops):  # never two runs of one kind in a row
        assert x != y
    assert _sides(runs)[1] == b
    assert word_runs(a, a) == [("equal", a)]
    assert word_runs("", "new text") == [("insert", "new text")]
    assert word_runs("old text", "") == [("delete", "old text")]


def test_pair_passages_pairs_edits_of_the_same_source_and_leaves_rewrites_unpaired() -> None:
    left = [
        {
            "chunk_id": "l1",
            "source": "refund-policy.md",
            "text": "Refunds are available within 30 days of "
            "purchase for monthly and annual plans. Contact billing to start a refund request today.",
        },
        {"chunk_id": "l2", "source": "refund-policy.md", "text": "Gift cards cannot be refunded."},
        {
            "chunk_id": "l3",
            "source": "other.md",
            "text": "Refunds are available within 30 days of purchase "
            "for monthly and annual plans. Contact billing to start a refund request today.",
        },
    ]
    right = [
        {"chunk_id": "r1", "source": "refund-policy.md", "text": "Our office hours are nine to five."},
        {
            "chunk_id": "r2",
            "source": "refund-policy.md",
            "text": "Refunds are available within 14 days of "
            "purchase for monthly and annual plans. Contact billing to start a refund request today.",
        },
    ]
    pairs = pair_passages(left, right)
    assert len(pairs) == 1 and isinstance(pairs[0], PassagePair)
    pair = pairs[0]
    assert (pair.left["chunk_id"], pair.right["chunk_id"]) == ("l1", "r2")  # same source only, not l3
    assert 0.6 <= pair.similarity < 1 and pair.source == "refund-policy.md"
    assert ("delete", "30 ") in pair.runs and ("insert", "14 ") in pair.runs
    assert pair_passages(left, right, threshold=0.95) == []
    assert pair.to_dict()["left"]["chunk_id"] == "l1"
    with pytest.raises(ValueError, match="between 0 and 1"):
        pair_passages(left, right, threshold=60)


def test_each_chunk_pairs_once_most_similar_first() -> None:
    base = "the request context is pushed when a request starts and popped when it ends"
    left = [{"source": "s", "text": base + " in flask"}, {"source": "s", "text": base}]
    right = [{"source": "s", "text": base}]
    pairs = pair_passages(left, right)
    assert len(pairs) == 1 and pairs[0].left is left[1] and pairs[0].similarity == 1.0
    assert similarity(base, base.upper()) == 1.0 and similarity("a b c", "x y z") == 0.0
