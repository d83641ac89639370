"""Pair "then" and "now" passages by what they say and what they are about, and diff a pair
into grouped word runs.

An edited passage gets a new chunk id (ids hash the text), so a diff of two runs sees one
chunk leave and one enter. ``pair_passages`` puts them back together: chunks of the same
source whose similarity reaches ``threshold`` are paired, most similar first, each chunk at
most once. The similarity is the word-bigram overlap, or, with an ``Aboutness`` (what a diff
knows beyond the texts), the larger of that and how much the two are about the same thing:
shared rare terms, the query's terms, position in the document and embedding similarity. A
passage that was reformatted and edited at once (an RST table row become a ``py:data::``
block) shares few bigrams but the same rare terms. A pair about one subject (the rarest term
both share, e.g. ``SEND_FILE_MAX_AGE_DEFAULT``) is diffed over that subject's whole entry in
each document (its line and the lines indented under it), which a chunk boundary may cut.
The entry a question asks about (``What does SERVER_NAME do?``) pairs first: the chunks that
hold most of it on each side are its passage, even when a release rewrote it and the boundary
moved, so that its old chunk shares more words with the next entry's new chunk.
``word_runs`` diffs a pair into runs that read as edits (one deletion run, then one insertion
run, per edit) rather than interleaved words.

>>> word_runs("Refunds within 30 days.", "Refunds within 14 days.")
[('equal', 'Refunds within '), ('delete', '30 '), ('insert', '14 '), ('equal', 'days.')]
"""

from __future__ import annotations

import difflib
import functools
import itertools
import math
import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragtt.results import Result

__all__ = [
    "DEFAULT_THRESHOLD",
    "Aboutness",
    "PassagePair",
    "held_copy",
    "lost_words",
    "pair_passages",
    "similarity",
    "word_runs",
]

DEFAULT_THRESHOLD = 0.6
# A word with the whitespace after it; leading whitespace of a text belongs to its first word.
_TOKEN = re.compile(r"\s*\S+\s*")
_WORD = re.compile(r"\w+")
# Replacements separated by at most this many equal words are one edit: "You can ask" ->
# "Annual plans can be" reads as one rewrite, not as "You|Annual plans" + "can" + "ask|be".
# (Pure insertions or deletions around a word read fine and stay apart.)
_BRIDGE_WORDS = 2
# A text holds an edited copy of a passage when it keeps a run of at least this many of its
# words in a row and, around that run, at least this share of them; with less, the passage
# was rewritten or removed, and no words of it are "lost" (``lost_words``).
_ANCHOR_WORDS = 3
_EDITED_KEEPS = 0.5
_RUN_EDGES = " .,;:!?"  # what a lost run is quoted without: "Python 3." lost "3", not "3."
# How much each signal of ``Aboutness`` weighs; a signal a pair lacks (no vectors, no query
# term in either text) gives its weight to the others. The position in the document does
# not add to the mean but scales it, from 1 (same place) down to 1/2 (far apart): a passage
# that moved is still itself, but two neighbours that share words are not one passage.
ABOUT_WEIGHTS = {"rare_terms": 0.45, "query_terms": 0.2, "embedding": 0.2}
# Positions this far apart (as a share of the document) or more count as far apart.
_POSITION_SPAN = 0.25
# An entry (a subject's line and the lines indented under it) longer than this is not one passage.
_ENTRY_CHARS = 4000
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


@dataclass(frozen=True)
class Aboutness:
    """What a diff knows beyond two chunks' texts, for ``pair_passages``.

    ``query``: the question (its rare terms found in both texts pair them); ``vectors``: chunk
    id -> embedding; ``spans``: chunk id -> (its document's text, start, end), which gives the
    chunk's position in the document, the terms' rarity (over the documents' paragraphs) and
    the subject's whole entry. Any part may be empty.
    """

    query: str = ""
    vectors: Mapping[str, Any] = field(default_factory=dict)
    spans: Mapping[str, tuple[str, int, int]] = field(default_factory=dict)

    @functools.cached_property
    def documents(self) -> _Documents:
        """The documents of ``spans``, each read once however many pairings ask (a lineage
        pairs once per re-ingested source and direction with one Aboutness)."""
        return _Documents([text for text, _, _ in self.spans.values()])


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
    # The texts ``runs`` diffs: the chunks' own, or, for a pair about one subject, its entry
    # in each document (``subject``), which may reach past a chunk's edge.
    left_text: str = ""
    right_text: str = ""
    subject: str | None = None
    signals: dict[str, float] = field(default_factory=dict)  # bigrams, rare_terms, query_terms...

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
    left_chunks: Sequence[Any],
    right_chunks: Sequence[Any],
    threshold: float = DEFAULT_THRESHOLD,
    about: Aboutness | None = None,
) -> list[PassagePair]:
    """Pairs of (then, now) chunks of the same source with ``similarity >= threshold``.

    A chunk is any object with ``source`` and ``text`` attributes (``DiffChunk``,
    ``RetrievedChunk``...) or a mapping with those keys (and ``chunk_id`` for ``about``).
    The similarity is the word-bigram Dice coefficient or, with ``about``, the larger of that
    and the ``ABOUT_WEIGHTS`` mean of the signals, scaled by how near the two sit in their
    documents (``PassagePair.signals`` keeps each), and of ``subject``: for an entry the query
    names, the smaller of the shares of it the two chunks hold. Pairing is greedy, pairs that
    hold an asked entry first, then most similar first, each chunk in at most one pair; the
    pairs come in ``left_chunks`` order. The chunks left unpaired are the truly added and
    removed ones ("no counterpart").
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be between 0 and 1; got {threshold!r}")
    if about is not None:
        return _pair_about(left_chunks, right_chunks, threshold, about)
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
    return [
        _pair(left_chunks[i], right_chunks[j], score, {"bigrams": round(score, 4)})
        for i, j, score in _greedy(candidates)
    ]


def _pair(
    left: Any, right: Any, score: float, signals: dict[str, float], texts: tuple[str, str, str | None] | None = None
) -> PassagePair:
    a, b, subject = texts or (_get(left, "text"), _get(right, "text"), None)
    return PassagePair(left, right, round(score, 4), word_runs(a, b), a, b, subject, signals)


def _greedy(
    candidates: list[tuple[float, int, int]], first: Collection[tuple[int, int]] = ()
) -> list[tuple[int, int, float]]:
    """Most similar first (the pairs in ``first`` before all others), each side at most once;
    in left order."""
    candidates.sort(key=lambda c: ((c[1], c[2]) not in first, -c[0], c[1], c[2]))
    used_left: set[int] = set()
    used_right: set[int] = set()
    chosen: list[tuple[int, int, float]] = []
    for score, i, j in candidates:
        if i in used_left or j in used_right:
            continue
        used_left.add(i)
        used_right.add(j)
        chosen.append((i, j, score))
    return sorted(chosen)


@dataclass(frozen=True)
class _Side:
    """What pairing needs of one chunk, computed once (lineage pairs a few chunks with every
    chunk of their source)."""

    terms: set[str]
    shingles: Counter[tuple[str, ...]]
    size: int  # bigrams
    weight: float  # the terms' summed idf
    unit: Any  # its vector, normalised (None: none known)
    position: float | None
    held: dict[str, float]  # asked term -> the share of its entry in the chunk's document the chunk holds

    @classmethod
    def of(cls, about: Aboutness, chunk: Any, terms: set[str], idf: Any, asked: set[str]) -> _Side:
        shingles = _shingles(_get(chunk, "text"))
        vector = about.vectors.get(_get(chunk, "chunk_id"))
        norm = float(np.linalg.norm(vector)) if vector is not None else 0.0
        unit = np.asarray(vector, dtype=np.float64) / norm if norm else None
        held = _held(about, about.spans.get(_get(chunk, "chunk_id")), asked)
        return cls(terms, shingles, shingles.total(), sum(map(idf, terms)), unit, _position(about, chunk), held)


def _pair_about(
    left_chunks: Sequence[Any], right_chunks: Sequence[Any], threshold: float, about: Aboutness
) -> list[PassagePair]:
    left_terms = [_terms(_get(c, "text")) for c in left_chunks]
    right_terms = [_terms(_get(c, "text")) for c in right_chunks]
    idf = _idf(about, [*left_terms, *right_terms])
    asked = _terms(about.query)
    median = _median_idf(idf, left_terms, right_terms)
    query = {t for t in asked if idf(t) >= median}
    left = [_Side.of(about, c, t, idf, asked) for c, t in zip(left_chunks, left_terms, strict=True)]
    right = [_Side.of(about, c, t, idf, asked) for c, t in zip(right_chunks, right_terms, strict=True)]
    candidates: list[tuple[float, int, int]] = []
    signals: dict[tuple[int, int], dict[str, float]] = {}
    subjects: dict[tuple[int, int], str] = {}  # the pairs that hold the asked entry on both sides
    for i, lc in enumerate(left_chunks):
        for j, rc in enumerate(right_chunks):
            if _get(lc, "source") != _get(rc, "source"):
                continue
            found = _signals(left[i], right[j], idf, query)
            a, b = left[i].size, right[j].size
            if found["about"] >= threshold or not a + b or 2 * min(a, b) / (a + b) >= threshold:
                found["bigrams"] = round(_dice(left[i].shingles, right[j].shingles), 4)  # (else it cannot reach)
            held = {t: min(share, right[j].held[t]) for t, share in left[i].held.items() if t in right[j].held}
            subject = max(held, key=lambda t: (held[t], t), default=None)
            if subject is not None and held[subject] >= threshold:
                found["subject"] = round(held[subject], 4)
                subjects[(i, j)] = subject
            score = max(found.get("bigrams", 0.0), found["about"], found.get("subject", 0.0))
            if score >= threshold:
                candidates.append((score, i, j))
                signals[(i, j)] = found
    out = []
    for i, j, score in _greedy(candidates, subjects):
        lc, rc = left_chunks[i], right_chunks[j]
        out.append(
            _pair(
                lc,
                rc,
                score,
                signals[(i, j)],
                _subject_texts(about, lc, rc, left_terms[i] & right_terms[j], idf, query, subjects.get((i, j))),
            )
        )
    return out


def _signals(left: _Side, right: _Side, idf: Any, query: set[str]) -> dict[str, float]:
    """Rare terms, the query's terms, embedding and position, and ``about``, their blend."""
    shared = left.terms & right.terms
    lighter = min(left.weight, right.weight)
    found = {"rare_terms": sum(map(idf, shared)) / lighter if lighter else 0.0}
    asked = {t for t in query if t in left.terms or t in right.terms}
    if asked:
        found["query_terms"] = sum(map(idf, asked & shared)) / sum(map(idf, asked))
    if left.unit is not None and right.unit is not None:
        found["embedding"] = max(0.0, float(left.unit @ right.unit))
    if left.position is not None and right.position is not None:
        found["position"] = max(0.0, 1.0 - abs(left.position - right.position) / _POSITION_SPAN)
    weights = {k: w for k, w in ABOUT_WEIGHTS.items() if k in found}
    mean = sum(found[k] * w for k, w in weights.items()) / sum(weights.values())
    found["about"] = mean * (1 + found.get("position", 1.0)) / 2
    return {k: round(v, 4) for k, v in found.items()}


def _position(about: Aboutness, chunk: Any) -> float | None:
    span = about.spans.get(_get(chunk, "chunk_id"))
    return span[1] / max(1, len(span[0])) if span else None


def _terms(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if len(w) > 1}


def _idf(about: Aboutness, fallback: list[set[str]]) -> Any:
    """Term -> inverse document frequency over the documents' paragraphs (the Aboutness's,
    computed once for it), else over the chunks (``fallback``)."""
    return about.documents.idf or _idf_of(Counter(t for unit in fallback for t in unit), len(fallback))


def _idf_of(df: Mapping[str, int], n: int) -> Any:
    return functools.cache(lambda t: math.log(1 + (n - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)))


class _Documents:
    """The distinct documents an Aboutness places its chunks in: their paragraphs' term
    counts, the idf over them, and the entries each names, each computed once."""

    def __init__(self, texts: list[str]) -> None:
        self._texts = list({id(text): text for text in texts}.values())  # (a document shared by chunks: once)
        self._entries: dict[str, dict[str, tuple[int, int]]] = {}

    @functools.cached_property
    def idf(self) -> Any:
        """Term -> idf over every paragraph of the documents (None: no paragraphs)."""
        return _documents_idf(tuple(self._texts))

    def entries(self, text: str) -> dict[str, tuple[int, int]]:
        """``_named_entries(text)``, kept for this Aboutness (beyond the shared cache's bound)."""
        found = self._entries.get(text)
        if found is None:
            found = self._entries[text] = _named_entries(text)
        return found


@functools.lru_cache(maxsize=32)
def _documents_idf(texts: tuple[str, ...]) -> Any:
    """``_Documents.idf``: the same documents' once, however many Aboutness read them (the
    diffs of a history matrix between two versions all do)."""
    df: Counter[str] = Counter()
    n = 0
    for text in texts:
        counted, size = _paragraph_terms(text)
        df.update(counted)
        n += size
    return _idf_of(df, n) if n else None


@functools.lru_cache(maxsize=32)
def _paragraph_terms(text: str) -> tuple[Counter[str], int]:
    """(in how many of ``text``'s paragraphs each term is, how many paragraphs): a document's
    once, however many diffs read it."""
    units = [_terms(p) for p in _BLANK_LINE.split(text)]
    return Counter(t for unit in units for t in unit), len(units)


def _median_idf(idf: Any, *term_sets: list[set[str]]) -> float:
    """The query's terms that count are those rarer than the texts' median term ("value" is not)."""
    values = sorted(map(idf, set().union(*(terms for sets in term_sets for terms in sets))))
    return values[len(values) // 2] if values else 0.0


def _subject_texts(
    about: Aboutness, lc: Any, rc: Any, shared: set[str], idf: Any, query: set[str], asked: str | None = None
) -> tuple[str, str, str | None] | None:
    """The subject's entry in each document, when both chunks hold one and a chunk's edge
    cuts it (else None: the chunks' texts are the passages). The subject is ``asked`` (the
    asked entry both chunks hold most of) or the rarest term they share."""
    left, right = about.spans.get(_get(lc, "chunk_id")), about.spans.get(_get(rc, "chunk_id"))
    if left is None or right is None:
        return None
    if asked is not None:
        subject = asked
        entries = about.documents.entries
        left_entry, right_entry = entries(left[0]).get(asked), entries(right[0]).get(asked)
    elif shared:
        subject = max(shared, key=lambda t: (t in query, idf(t), t))
        left_entry, right_entry = _entry(*left, subject), _entry(*right, subject)
    else:
        return None
    if left_entry is None or right_entry is None:
        return None
    if all(span[1] <= entry[0] and entry[1] <= span[2] for span, entry in ((left, left_entry), (right, right_entry))):
        return None  # both chunks hold their whole entry: they are the passages
    return left[0][slice(*left_entry)], right[0][slice(*right_entry)], subject


def _entry(text: str, start: int, end: int, term: str) -> tuple[int, int] | None:
    """The span of the line inside [start, end) that first names ``term`` and of the lines
    indented under it (blank lines between them included), when there are such lines: a
    table row and its wrapped cells, a ``.. py:data::`` block, a list item. None for a term
    named in running prose."""
    found = re.search(rf"(?<!\w){re.escape(term)}(?!\w)", text[start:end], re.IGNORECASE)
    if found is None:
        return None
    line_start = text.rfind("\n", 0, start + found.start()) + 1
    line_end = text.find("\n", line_start)
    return _block(text, line_start, len(text) if line_end < 0 else line_end)


def _block(text: str, line_start: int, line_end: int) -> tuple[int, int] | None:
    """The span of the line [line_start, line_end) and of the lines indented under it, or None
    when none is (or the whole is longer than ``_ENTRY_CHARS``)."""
    first = text[line_start:line_end]
    indent = len(first) - len(first.lstrip())
    pos, last, nested = line_end, line_end, False
    while 0 <= pos < len(text):
        nxt = text.find("\n", pos + 1)
        line = text[pos + 1 : len(text) if nxt < 0 else nxt]
        if line.strip():
            if len(line) - len(line.lstrip()) <= indent:
                break
            nested, last = True, len(text) if nxt < 0 else nxt
            if last - line_start > _ENTRY_CHARS:
                return None
        pos = nxt
    if not nested:
        return None
    return line_start + indent, last


@functools.lru_cache(maxsize=32)
def _named_entries(text: str) -> dict[str, tuple[int, int]]:
    """Term -> the span of the one entry (a line and the lines indented under it, as
    ``_block`` reads it) that it names: ``server_name`` -> its ``.. py:data:: SERVER_NAME``
    block. An entry is named by the rarest terms of its first line (in the fewest of the
    document's paragraphs: not ``py`` nor ``data``, nor the ``do`` of a list item); a term
    that names several entries names none. One pass over the lines, a document's once."""
    df = _paragraph_terms(text)[0]
    named: dict[str, tuple[int, int] | None] = {}
    opened: list[list[int]] = []  # [start, end, indent, end of its last nested line] of the lines above

    def close(line_start: int, line_end: int, indent: int, last: int) -> None:
        terms = _terms(text[line_start:line_end]) if line_end < last <= line_start + _ENTRY_CHARS else ()
        rarest = min((df[t] for t in terms), default=0)
        for term in terms:
            if df[term] == rarest:
                named[term] = None if term in named else (line_start + indent, last)

    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        line = text[start:end]
        if line.strip():
            indent = len(line) - len(line.lstrip())
            while opened and opened[-1][2] >= indent:
                close(*opened.pop())
            for above in opened:
                above[3] = end
            opened.append([start, end, indent, end])
        start = end + 1
    while opened:
        close(*opened.pop())
    return {t: span for t, span in named.items() if span is not None}


def _held(about: Aboutness, span: tuple[str, int, int] | None, asked: set[str]) -> dict[str, float]:
    """Asked term -> the share of the entry it names in the chunk's document that the chunk
    (``span``) holds, for the terms that name an entry the chunk reaches into."""
    if span is None or not asked:
        return {}
    text, start, end = span
    entries = about.documents.entries(text)
    held = {}
    for term in asked:
        entry = entries.get(term)
        if entry is not None and min(entry[1], end) > max(entry[0], start):
            held[term] = (min(entry[1], end) - max(entry[0], start)) / (entry[1] - entry[0])
    return held


def similarity(a: str, b: str) -> float:
    """Dice coefficient of the two texts' word bigrams (case-folded): 1.0 for the same words."""
    return _dice(_shingles(a), _shingles(b))


def word_runs(a: str, b: str) -> list[tuple[str, str]]:
    """``a`` -> ``b`` as runs ``(op, text)``, op one of "equal", "delete", "insert".

    Words are compared by their letters and digits (without whitespace, markup and
    punctuation), so re-wrapped or re-marked-up lines are equal; equal runs
    carry ``b``'s text. Each edit is one "delete" run followed by one "insert" run (either may
    be missing), and replacements separated by one or two equal words are merged into one,
    so the runs never interleave single words. Joining the equal and insert runs gives ``b``
    exactly; joining the equal and delete runs gives ``a`` up to whitespace.
    """
    old, new = _TOKEN.findall(a), _TOKEN.findall(b)
    matcher = difflib.SequenceMatcher(None, [_key(t) for t in old], [_key(t) for t in new], autojunk=False)
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


def lost_words(passage: str, text: str) -> list[str] | None:
    """The runs of ``passage``'s words that ``text``, which holds an edited copy of it, lacks,
    in order: ``word_runs`` of the passage against the stretch of ``text`` around the longest
    run of words the two share (the passage's length either side: a word that ``text`` has
    only far from there is lost, not kept). None when ``text`` does not hold an edited copy
    (no run of ``_ANCHOR_WORDS`` words shared, or under ``_EDITED_KEEPS`` of them kept there).

    >>> lost_words("Refunds within 30 days of purchase.", "# Refunds\n\nRefunds within 14 days of purchase.")
    ['30']
    """
    copy = _edited_copy(passage, text)
    if copy is None:
        return None
    lost = (" ".join(run.split()).strip(_RUN_EDGES) for op, run in copy[1] if op == "delete")
    return [run for run in lost if run]


def held_copy(passage: str, text: str) -> str | None:
    """The stretch of ``text`` that holds an edited copy of ``passage``: from the first to the
    last of the passage's words it keeps there (what ``text`` says in the passage's place, its
    own words between them). None when ``text`` holds no edited copy (as ``lost_words``).

    >>> held_copy("Refunds within 30 days of purchase.", "Refunds. Refunds within 14 days of purchase. Returns.")
    'Refunds within 14 days of purchase.'
    """
    copy = _edited_copy(passage, text)
    if copy is None:
        return None
    window, runs = copy
    at, start, end = 0, -1, 0
    for op, run in runs:  # equal and insert runs join to ``window``: ``at`` is in it
        if op == "equal":
            start, end = (at if start < 0 else start), at + len(run)
        if op != "delete":
            at += len(run)
    return window[start:end].strip()


def _edited_copy(passage: str, text: str) -> tuple[str, list[tuple[str, str]]] | None:
    """The stretch of ``text`` around the longest run of words it shares with ``passage`` (the
    passage's length either side) and ``word_runs`` of the passage against it; None when
    ``text`` holds no edited copy of the passage."""
    at, anchor, size = 0, (0, 0), 0
    for op, run in word_runs(passage, text):  # equal and insert runs join to ``text``: ``at`` is in it
        words = len(run.split())
        if op == "equal" and words > size:
            anchor, size = (at, at + len(run)), words
        if op != "delete":
            at += len(run)
    if size < _ANCHOR_WORDS:
        return None
    window = text[max(0, anchor[0] - len(passage)) : anchor[1] + len(passage)]
    runs = word_runs(passage, window)
    if sum(len(run.split()) for op, run in runs if op == "equal") < _EDITED_KEEPS * len(passage.split()):
        return None
    return window, runs


def _key(token: str) -> str:
    """A word as compared: its letters and digits, so markup (``x``, :data:`x`) and
    punctuation around it are no edit; a token of punctuation only is itself."""
    return "".join(_WORD.findall(token)) or token.strip()


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
