"""Golden passages: the evidence a golden query must keep finding, matched by content.

A passage counts as retrieved when its chunk id is in the top-k, or when both hold:

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
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from ragtt._hashing import sha256_hex
from ragtt.index.retrieve import tokens
from ragtt.results import Result, RetrievedChunk

__all__ = [
    "DEFAULT_MATCH",
    "REACH",
    "GoldenPassage",
    "PassageRef",
    "PassageScore",
    "containment",
    "score_passages",
    "shingles",
    "text_shingles",
]

DEFAULT_MATCH = 0.8
REACH = 0.2
SHINGLE = 3
_NEW_EVIDENCE = 0.5  # a retrieved chunk sharing less than this with every golden passage is new evidence
_SHINGLED = 4096  # passages and chunks whose shingles are kept


@dataclass(frozen=True)
class GoldenPassage(Result):
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
class PassageRef(Result):
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
        found = (
            f"{self.similarity:.2f} of it golden"
            if self.in_source is None
            else f"{self.similarity:.2f} of it retrieved, {self.in_source:.2f} still in the source"
        )
        return f"{self.source} {self.first_words!r} ({found})"


@dataclass(frozen=True)
class PassageScore:
    recall: float
    missing: list[PassageRef]
    replaced_by: list[PassageRef]
    # per passage, in order: the source it was found in (None: missing)
    found_in: list[str | None] = field(default_factory=list)


@functools.lru_cache(maxsize=_SHINGLED)
def shingles(text: str) -> frozenset[tuple[str, ...]]:
    """``text_shingles`` of a passage or chunk, cached: an evaluation scores the same chunks at
    version after version (whole documents go through ``text_shingles`` uncached)."""
    return text_shingles(text)


def text_shingles(text: str, size: int = SHINGLE) -> frozenset[tuple[str, ...]]:
    """Word ``size``-grams of ``text`` (case- and width-folded); a shorter text is one shingle."""
    words = tokens(text)
    if len(words) <= size:
        return frozenset([tuple(words)] if words else [])
    # each run of ``size`` words, as a tuple: the shorter slices end the zip
    return frozenset(zip(*(words[i:] for i in range(size)), strict=False))


def containment(part: AbstractSet[tuple[str, ...]], whole: AbstractSet[tuple[str, ...]]) -> float:
    """Share of ``part``'s shingles found in ``whole`` (1.0 for an empty part)."""
    return 1.0 if not part else len(part & whole) / len(part)


def score_passages(
    passages: Sequence[GoldenPassage],
    chunks: Sequence[RetrievedChunk],
    source_text: Callable[[str], str | None],
    match: float = DEFAULT_MATCH,
    *,
    source_shingles: Callable[[str], AbstractSet[tuple[str, ...]]] | None = None,
) -> PassageScore:
    """Passage recall of ``chunks`` against ``passages``, the passages that are missing, and the
    retrieved chunks that carry none of the golden passages (what replaced them).

    ``source_text(source)`` is a source's current text, None when it is gone
    (``source_shingles``, when given, is its shingles instead: a caller scoring many runs
    caches them). A passage with no source (a reference passage given as plain text) may be
    found in any retrieved source, by the same two measures.
    """
    ids = {c.chunk_id for c in chunks}
    by_source: dict[str, set[tuple[str, ...]]] = {}
    for c in chunks:
        by_source.setdefault(c.source, set()).update(shingles(c.text))
    in_sources: dict[str, AbstractSet[tuple[str, ...]]] = {}

    def of_source(source: str) -> AbstractSet[tuple[str, ...]]:
        if source not in in_sources:
            if source_shingles is not None:
                in_sources[source] = source_shingles(source)
            else:
                text = source_text(source)
                in_sources[source] = text_shingles(text) if text is not None else frozenset()
        return in_sources[source]

    found_in: list[str | None] = []
    missing = []
    golden_shingles: set[tuple[str, ...]] = set()
    for p in passages:
        own = shingles(p.text)
        golden_shingles |= own
        if p.chunk_id and p.chunk_id in ids:
            found_in.append(next(c.source for c in chunks if c.chunk_id == p.chunk_id))
            continue
        best = (-1.0, 0.0, p.source)
        for source in [p.source] if p.source else sorted(by_source):
            retrieved = containment(own, by_source.get(source, set()))
            in_source = containment(own, of_source(source))
            if in_source >= match and retrieved >= REACH:
                found_in.append(source)
                break
            best = max(best, (retrieved, in_source, source))
        else:
            found_in.append(None)
            retrieved, in_source, source = best
            missing.append(
                PassageRef(p.chunk_id, source, p.first_words, round(max(retrieved, 0.0), 4), round(in_source, 4))
            )
    golden_ids = {p.chunk_id for p in passages}
    replaced = []
    for c in chunks:
        share = containment(shingles(c.text), golden_shingles)
        if c.chunk_id not in golden_ids and share < _NEW_EVIDENCE:
            replaced.append(PassageRef(c.chunk_id, c.source, _first_words(c.text), round(share, 4)))
    found = sum(s is not None for s in found_in)
    recall = 1.0 if not passages else found / len(passages)
    return PassageScore(recall, missing, replaced, found_in)


def _first_words(text: str, n: int = 8) -> str:
    words = text.split()
    return " ".join(words[:n]) + (" …" if len(words) > n else "")
