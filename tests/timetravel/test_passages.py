"""Passage pairing, grouped word runs (the "changed" card of a diff) and the words an edit
took out of a passage (a regression's reason)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

import ragtt
from ragtt.timetravel.passages import (
    Aboutness,
    PassagePair,
    held_copy,
    lost_words,
    pair_passages,
    similarity,
    word_runs,
)
from tests.conftest import corpus


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


# An entry rewritten between releases, whose chunk boundary moved: the old chunk holds ALPHA_KEY's
# entry and most of BETA_ROOT's; the new ALPHA_KEY entry grew, so its body is one chunk and
# BETA_ROOT went whole into the next, which shares more words with the old chunk than the
# rewritten ALPHA_KEY body does.
_OLD_DOC = """.. py:data:: ALPHA_KEY

    Tells the app which host and port it is bound to. Needed for subdomain routes.

    Default: ``None``

.. py:data:: BETA_ROOT

    Tells the app which path it is mounted under by the web server. This is used
    for building links outside of a request, when no dispatcher sets the path.

    Will be used for the cookie path if not set.

    Default: ``'/'``
"""
_NEW_DOC = """.. py:data:: ALPHA_KEY

    Tells the app which host and port it is bound to.

    Must be set when subdomain matching is on, so that the subdomain can be read
    from each request.

    Must be set for links built outside a request context.

    Default: ``None``

    .. versionchanged:: 3.1
        No longer limits requests to this one host.

.. py:data:: BETA_ROOT

    Tells the app which path it is mounted under by the web server. This is used
    for building links outside of a request, when no dispatcher sets the path.

    Will be used for the cookie path if not set.

    Default: ``'/'``
"""


def _doc_chunk(cid: str, doc: str, start: str, end: str | None) -> tuple[dict[str, str], tuple[str, int, int]]:
    a, b = doc.index(start), doc.index(end) if end is not None else len(doc)
    return {"chunk_id": cid, "source": "config.rst", "text": doc[a:b]}, (doc, a, b)


def test_the_entry_the_question_names_pairs_with_its_rewrite_not_with_the_next_entry() -> None:
    old, old_span = _doc_chunk("old", _OLD_DOC, ".. py:data:: ALPHA_KEY", "\n\n    Default: ``'/'``")
    alpha, alpha_span = _doc_chunk("alpha", _NEW_DOC, "    Must be set when", ".. py:data:: BETA_ROOT")
    beta, beta_span = _doc_chunk("beta", _NEW_DOC, "    .. versionchanged", None)
    spans = {"old": old_span, "alpha": alpha_span, "beta": beta_span}

    def paired(query: str) -> PassagePair:
        (pair,) = pair_passages([old], [alpha, beta], about=Aboutness(query=query, spans=spans))
        return pair

    # Words alone, and a question that names no entry, pair the old chunk with BETA_ROOT's.
    assert [p.right["chunk_id"] for p in pair_passages([old], [alpha, beta])] == ["beta"]
    assert paired("").right is beta and "subject" not in paired("").signals
    # "data" is on every entry's first line and names none of them.
    assert paired("Which data is it?").right is beta
    pair = paired("What is ALPHA_KEY?")
    assert pair.right is alpha and pair.subject == "alpha_key"
    assert pair.signals["bigrams"] < 0.6 <= pair.signals["subject"] == pair.similarity
    # The diff reads the whole entry on both sides: the new chunk's edge cut its first line.
    assert pair.left_text == _OLD_DOC[: _OLD_DOC.index("\n\n.. py:data:: BETA_ROOT")]
    assert pair.right_text == _NEW_DOC[: _NEW_DOC.index("\n\n.. py:data:: BETA_ROOT")]
    assert pair.runs[0] == (
        "equal",
        ".. py:data:: ALPHA_KEY\n\n    Tells the app which host and port it is bound to.\n\n    ",
    )
    assert pair.runs[-1] == ("insert", ".. versionchanged:: 3.1\n        No longer limits requests to this one host.")
    assert pair_passages([old], [alpha, beta], 0.9, Aboutness(query="What is ALPHA_KEY?", spans=spans)) == []


# A second entry under the same name (an alias documented apart, say): the name then says
# which entry it means in neither document.
_ALIAS = """
.. py:data:: {name}
    :noindex:

    The same key, read from the environment when the app is created.
"""


def test_a_name_two_entries_share_names_neither_and_the_words_pair() -> None:
    def paired(alias: str, query: str) -> PassagePair:
        """The chunks of the test above, their documents ending with an entry named ``alias``."""
        extra = _ALIAS.format(name=alias)
        old, old_span = _doc_chunk("old", _OLD_DOC + extra, ".. py:data:: ALPHA_KEY", "\n\n    Default: ``'/'``")
        alpha, alpha_span = _doc_chunk("alpha", _NEW_DOC + extra, "    Must be set when", ".. py:data:: BETA_ROOT")
        beta, beta_span = _doc_chunk("beta", _NEW_DOC + extra, "    .. versionchanged", extra)
        spans = {"old": old_span, "alpha": alpha_span, "beta": beta_span}
        (pair,) = pair_passages([old], [alpha, beta], about=Aboutness(query=query, spans=spans))
        return pair

    # ALPHA_KEY names two entries: the word rule's pair, as for a question that names none
    pair = paired("ALPHA_KEY", "What is ALPHA_KEY?")
    assert pair.right["chunk_id"] == "beta" and "subject" not in pair.signals
    unasked = paired("ALPHA_KEY", "")
    assert unasked.right["chunk_id"] == "beta" and pair.signals["bigrams"] == unasked.signals["bigrams"]
    # the same chunks, the alias under another name: ALPHA_KEY names its entry, which pairs
    once = paired("GAMMA_KEY", "What is ALPHA_KEY?")
    assert once.right["chunk_id"] == "alpha" and once.subject == "alpha_key"


def test_lost_words_are_the_runs_an_edit_took_out_of_the_passage() -> None:
    """Flask 2.0.0 rewrote 1.0's Python support sentence: what it lost is quoted, not its first
    words; "Python" is still in the document, but only far from the sentence, so it is lost."""
    releases = corpus("evolving", "flask")
    passage = (
        "We recommend using the latest version of Python 3. Flask supports Python 3.4 and newer, Python 2.7, and PyPy."
    )
    then = (releases / "2018-04-26_flask-1.0" / "docs" / "installation.rst").read_text(encoding="utf-8")
    now = (releases / "2021-05-11_flask-2.0.0" / "docs" / "installation.rst").read_text(encoding="utf-8")
    assert passage in " ".join(then.split())
    lost = lost_words(passage, now)
    assert lost == ["3", "3.4 and newer, Python 2.7, and PyPy"]
    assert lost[1] not in " ".join(now.split()) and "Python 2.7" in passage
    assert lost_words(passage, then) == []  # held whole: nothing lost


def test_the_held_copy_is_what_the_text_says_in_the_passage_s_place() -> None:
    """1.1.2's "Python 3.5" sentence held in 1.0's text, which says "3.4": the copy is 1.0's own
    words, so what 2.0.0 lost from it is "3.4", never the passage's "3.5"."""
    releases = corpus("evolving", "flask")
    passage = (
        "We recommend using the latest version of Python 3. Flask supports Python 3.5 and newer, Python 2.7, and PyPy."
    )
    then = (releases / "2018-04-26_flask-1.0" / "docs" / "installation.rst").read_text(encoding="utf-8")
    now = (releases / "2021-05-11_flask-2.0.0" / "docs" / "installation.rst").read_text(encoding="utf-8")
    held = held_copy(passage, then)
    assert held is not None and held in then
    assert " ".join(held.split()) == passage.replace("3.5", "3.4")
    assert lost_words(held, now) == ["3", "3.4 and newer, Python 2.7, and PyPy"]
    assert held_copy(passage, "Nothing of it here.") is None


def test_a_rewritten_or_removed_passage_has_no_lost_words() -> None:
    """The sample's refund sentence, rewritten at release-3 ("Annual plans can be refunded in
    full within 14 days"): a few words in common are no edited copy of it."""
    sample = Path(ragtt.__file__).parent / "sample"
    passage = "You can ask for a full refund within 30 days of any purchase, on any plan, monthly or annual."
    assert lost_words(passage, (sample / "release-2" / "refund-policy.md").read_text(encoding="utf-8")) == ["30"]
    assert lost_words(passage, (sample / "release-3" / "refund-policy.md").read_text(encoding="utf-8")) is None
    assert lost_words(passage, "Nothing of it here.") is None
    assert lost_words(passage, "") is None
