"""Pair "then" and "now" passages by content, and diff a pair into grouped word runs.

An edited passage gets a new chunk id (ids hash the text), so a diff of two runs sees one
chunk leave and one enter. ``pair_passages`` puts them back together: chunks of the same
source whose word-bigram similarity reaches ``threshold`` are paired, most similar first,
each chunk at most once. ``word_runs`` diffs a pair into runs that read as edits (one
deletion run, then one insertion run, per edit) rather than interleaved words.

>>> word_runs("Refunds within 30 days.", "Refunds within 14 days.")
[('equal', 'Refunds within '), ('delete', '30 '), ('insert', '14 '), ('equal', 'days.')]
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragtt.results import Result

__all__ = ["DEFAULT_THRESHOLD", "PassagePair", "pair_passages", "similarity", "word_runs"]

DEFAULT_THRESHOLD = 0.6
# A word with the whitespace after it; leading whitespace of a text belongs to its first word.
_TOKEN = re.compile(r"\s*\S+\s*")
_WORD = re.compile(r"\w+")
# Replacements separated by at most this many equal words are one edit: "You can ask" ->
# "Annual plans can be" reads as one rewrite, not as "You|Annual plans" + "can" + "ask|be".
# (Pure insertions or deletions around a word read fine and stay apart.)
_BRIDGE_WORDS = 2


@dataclass(frozen=True)
class PassagePair(Result):
    """A "then" chunk and the "now" chunk that carries the same passage, edited.

    ``left`` and ``right`` are the chunks as given to ``pair_passages``; ``runs`` is
    ``word_runs(left.text, right.text)``.
    """

    left: Any
    right: Any
    similarity: float
    runs: list[tuple[str, str]]

    @property
    def source(self) -> str:
        return str(_get(self.left, "source"))

    def __repr__(self) -> str:
        edits = sum(op != "equal" for op, _ in self.runs)
        return (
            f"PassagePair({self.source}, {_get(self.left, 'chunk_id', '')[:10]} -> "
            f"{_get(self.right, 'chunk_id', '')[:10]}, similarity {self.similarity:.2f}, {edits} edit runs)"
        )


def pair_passages(
    left_chunks: Sequence[Any], right_chunks: Sequence[Any], threshold: float = DEFAULT_THRESHOLD
) -> list[PassagePair]:
    """Pairs of (then, now) chunks of the same source with ``similarity >= threshold``.

    A chunk is any object with ``source`` and ``text`` attributes (``DiffChunk``,
    ``RetrievedChunk``...) or a mapping with those keys. Pairing is greedy, most similar
    first, each chunk in at most one pair; the pairs come in ``left_chunks`` order. The
    chunks left unpaired are the truly added and removed ones ("no counterpart").
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be between 0 and 1; got {threshold!r}")
    right_by_source: dict[str, list[int]] = {}
    for j, chunk in enumerate(right_chunks):
        right_by_source.setdefault(_get(chunk, "source"), []).append(j)
    right_shingles: dict[int, Counter[tuple[str, ...]]] = {}
    candidates: list[tuple[float, int, int]] = []
    for i, chunk in enumerate(left_chunks):
        others = right_by_source.get(_get(chunk, "source"), [])
        if not others:
            continue
        mine = _shingles(_get(chunk, "text"))
        size = mine.total()
        for j in others:
            if j not in right_shingles:
                right_shingles[j] = _shingles(_get(right_chunks[j], "text"))
            other = right_shingles[j].total()
            if size + other and 2 * min(size, other) / (size + other) < threshold:
                continue  # even full overlap of the shorter one could not reach the threshold
            score = _dice(mine, right_shingles[j])
            if score >= threshold:
                candidates.append((score, i, j))
    candidates.sort(key=lambda c: (-c[0], c[1], c[2]))
    used_left: set[int] = set()
    used_right: set[int] = set()
    chosen: list[tuple[int, int, float]] = []
    for score, i, j in candidates:
        if i in used_left or j in used_right:
            continue
        used_left.add(i)
        used_right.add(j)
        chosen.append((i, j, score))
    chosen.sort()
    return [
        PassagePair(
            left_chunks[i],
            right_chunks[j],
            round(score, 4),
            word_runs(_get(left_chunks[i], "text"), _get(right_chunks[j], "text")),
        )
        for i, j, score in chosen
    ]


def similarity(a: str, b: str) -> float:
    """Dice coefficient of the two texts' word bigrams (case-folded): 1.0 for the same words."""
    return _dice(_shingles(a), _shingles(b))


def word_runs(a: str, b: str) -> list[tuple[str, str]]:
    """``a`` -> ``b`` as runs ``(op, text)``, op one of "equal", "delete", "insert".

    Words are compared without their whitespace, so re-wrapped lines are equal; equal runs
    carry ``b``'s text. Each edit is one "delete" run followed by one "insert" run (either may
    be missing), and replacements separated by one or two equal words are merged into one,
    so the runs never interleave single words. Joining the equal and insert runs gives ``b``
    exactly; joining the equal and delete runs gives ``a`` up to whitespace.
    """
    old, new = _TOKEN.findall(a), _TOKEN.findall(b)
    matcher = difflib.SequenceMatcher(None, [t.strip() for t in old], [t.strip() for t in new], autojunk=False)
    runs: list[tuple[str, str]] = []
    pending_old: list[str] = []
    pending_new: list[str] = []
    opcodes = matcher.get_opcodes()
    for k, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        bridge = (
            tag == "equal"
            and i2 - i1 <= _BRIDGE_WORDS
            and bool(pending_old)
            and bool(pending_new)
            and k + 1 < len(opcodes)
            and opcodes[k + 1][0] == "replace"
        )
        if tag != "equal" or bridge:
            pending_old += old[i1:i2]
            pending_new += new[j1:j2]
            continue
        _flush(runs, pending_old, pending_new)
        runs.append(("equal", "".join(new[j1:j2])))
    _flush(runs, pending_old, pending_new)
    return runs


def _flush(runs: list[tuple[str, str]], old: list[str], new: list[str]) -> None:
    if old:
        runs.append(("delete", "".join(old)))
    if new:
        runs.append(("insert", "".join(new)))
    old.clear()
    new.clear()


def _shingles(text: str) -> Counter[tuple[str, ...]]:
    words = _WORD.findall(text.casefold())
    if len(words) < 2:
        return Counter((w,) for w in words)
    return Counter(itertools.pairwise(words))


def _dice(a: Counter[tuple[str, ...]], b: Counter[tuple[str, ...]]) -> float:
    size_a, size_b = a.total(), b.total()
    if not size_a + size_b:
        return 1.0
    if len(a) > len(b):
        a, b = b, a
    # (Counter & Counter builds a new Counter: 5x slower than this walk over the smaller one.)
    common = sum(min(n, b[k]) for k, n in a.items() if k in b)
    return 2 * common / (size_a + size_b)


def _get(chunk: Any, name: str, default: Any = None) -> Any:
    if isinstance(chunk, Mapping):
        return chunk.get(name, default)
    return getattr(chunk, name, default)
