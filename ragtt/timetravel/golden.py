"""Passages matched by content: the golden passages a regression gate must keep finding,
and the "then"/"now" pairs of an edited passage in a diff.

Golden passages. A passage counts as retrieved when its chunk id is in the top-k, or when both hold:

* its source still carries it: at least ``match`` (default 0.8) of the passage's word
  3-shingles occur in the source's current text, so a removed or rewritten passage fails;
* retrieval still lands on it: at least ``REACH`` (0.2) of those shingles occur in the
  retrieved chunks of that source (pooled: a re-chunked passage often straddles two). 0.2
  is above the ~15% a mere neighbour shares through the default 120-character overlap.

Why two measures and not one share in the retrieved chunks: measured on Flask 2.2.3 -> 2.3.0
(BM25, top 4), of 13 answer passages that 2.3.0 keeps verbatim, 6 had under 0.8 of their
shingles in the new top-k at the SAME chunk size, because the edits upstream moved every
chunk boundary and the new top chunk holds only the half of the old one that the query is
about. Against the source's text the same 13 score 1.0 and every removed or rewritten
passage 0.76 or less; the smallest share of a kept passage in the new top-k was 0.22.

Pairs. An edited passage gets a new chunk id (ids hash the text), so a diff of two runs sees one
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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragtt._hashing import sha256_hex
from ragtt.index.retrieve import tokens
from ragtt.results import RetrievedChunk, _Result

__all__ = ["DEFAULT_MATCH", "DEFAULT_THRESHOLD", "REACH", "GoldenPassage", "PassagePair", "PassageRef", "PassageScore",
           "containment", "pair_passages", "score_passages", "shingles", "similarity", "word_runs"]

DEFAULT_MATCH = 0.8
REACH = 0.2
SHINGLE = 3
_NEW_EVIDENCE = 0.5  # a retrieved chunk sharing less than this with every golden passage is new evidence


@dataclass(frozen=True)
class GoldenPassage(_Result):
    """One passage a golden query retrieved when it was captured."""

    chunk_id: str
    source: str
    text_hash: str
    text: str

    @classmethod
    def from_chunk(cls, chunk: RetrievedChunk) -> GoldenPassage:
        return cls(chunk.chunk_id, chunk.source, sha256_hex(chunk.text), chunk.text)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GoldenPassage:
        return cls(str(data["chunk_id"]), str(data["source"]), str(data["text_hash"]), str(data["text"]))

    @property
    def first_words(self) -> str:
        return _first_words(self.text)


@dataclass(frozen=True)
class PassageRef(_Result):
    """A passage named in a report: where it is, how it starts, and how much of it was found.

    For a missing golden passage ``similarity`` is the share of it in the retrieved chunks and
    ``in_source`` the share its source still carries; for a retrieved chunk that replaced the
    golden ones, ``similarity`` is the share of it that the golden passages carry.
    """

    chunk_id: str
    source: str
    first_words: str
    similarity: float
    in_source: float | None = None

    def __str__(self) -> str:
        found = (f"{self.similarity:.2f} of it golden" if self.in_source is None else
                 f"{self.similarity:.2f} of it retrieved, {self.in_source:.2f} still in the source")
        return f"{self.source} {self.first_words!r} ({found})"


@dataclass(frozen=True)
class PassageScore:
    recall: float
    missing: list[PassageRef]
    replaced_by: list[PassageRef]


def shingles(text: str, size: int = SHINGLE) -> set[tuple[str, ...]]:
    """Word ``size``-grams of ``text`` (case- and width-folded); a shorter text is one shingle."""
    words = tokens(text)
    if len(words) <= size:
        return {tuple(words)} if words else set()
    return {tuple(words[i:i + size]) for i in range(len(words) - size + 1)}


def containment(part: set[tuple[str, ...]], whole: set[tuple[str, ...]]) -> float:
    """Share of ``part``'s shingles found in ``whole`` (1.0 for an empty part)."""
    return 1.0 if not part else len(part & whole) / len(part)


def score_passages(passages: Sequence[GoldenPassage], chunks: Sequence[RetrievedChunk],
                   source_text: Callable[[str], str | None], match: float = DEFAULT_MATCH) -> PassageScore:
    """Passage recall of ``chunks`` against ``passages``, the passages that are missing, and the
    retrieved chunks that carry none of the golden passages (what replaced them).

    ``source_text(source)`` is a source's current text, None when it is gone.
    """
    ids = {c.chunk_id for c in chunks}
    by_source: dict[str, set[tuple[str, ...]]] = {}
    for c in chunks:
        by_source.setdefault(c.source, set()).update(shingles(c.text))
    in_sources: dict[str, set[tuple[str, ...]]] = {}
    found, missing = 0, []
    golden_shingles: set[tuple[str, ...]] = set()
    for p in passages:
        own = shingles(p.text)
        golden_shingles |= own
        if p.chunk_id in ids:
            found += 1
            continue
        if p.source not in in_sources:
            text = source_text(p.source)
            in_sources[p.source] = shingles(text) if text is not None else set()
        retrieved = containment(own, by_source.get(p.source, set()))
        in_source = containment(own, in_sources[p.source])
        if in_source >= match and retrieved >= REACH:
            found += 1
        else:
            missing.append(PassageRef(p.chunk_id, p.source, p.first_words, round(retrieved, 4), round(in_source, 4)))
    golden_ids = {p.chunk_id for p in passages}
    replaced = []
    for c in chunks:
        share = containment(shingles(c.text), golden_shingles)
        if c.chunk_id not in golden_ids and share < _NEW_EVIDENCE:
            replaced.append(PassageRef(c.chunk_id, c.source, _first_words(c.text), round(share, 4)))
    recall = 1.0 if not passages else found / len(passages)
    return PassageScore(recall, missing, replaced)


def _first_words(text: str, n: int = 8) -> str:
    words = text.split()
    return " ".join(words[:n]) + (" …" if len(words) > n else "")


# -- pairs of then/now passages (diffs) ----------------------------------------------------

DEFAULT_THRESHOLD = 0.6
# A word with the whitespace after it; leading whitespace of a text belongs to its first word.
_TOKEN = re.compile(r"\s*\S+\s*")
_WORD = re.compile(r"\w+")
# Replacements separated by at most this many equal words are one edit: "You can ask" ->
# "Annual plans can be" reads as one rewrite, not as "You|Annual plans" + "can" + "ask|be".
# (Pure insertions or deletions around a word read fine and stay apart.)
_BRIDGE_WORDS = 2


@dataclass(frozen=True)
class PassagePair(_Result):
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
        return (f"PassagePair({self.source}, {_get(self.left, 'chunk_id', '')[:10]} -> "
                f"{_get(self.right, 'chunk_id', '')[:10]}, similarity {self.similarity:.2f}, {edits} edit runs)")


def pair_passages(left_chunks: Sequence[Any], right_chunks: Sequence[Any],
                  threshold: float = DEFAULT_THRESHOLD) -> list[PassagePair]:
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
    return [PassagePair(left_chunks[i], right_chunks[j], round(score, 4),
                        word_runs(_get(left_chunks[i], "text"), _get(right_chunks[j], "text")))
            for i, j, score in chosen]


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
        bridge = (tag == "equal" and i2 - i1 <= _BRIDGE_WORDS and bool(pending_old) and bool(pending_new)
                  and k + 1 < len(opcodes) and opcodes[k + 1][0] == "replace")
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
