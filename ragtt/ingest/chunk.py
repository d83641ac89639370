"""Chunking that never loses track of where a chunk came from.

Every splitter works on spans of the original Markdown, never on copies, so a chunk's
``markdown[char_start:char_end] == text`` holds by construction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragtt.errors import ConfigError
from ragtt.ingest.types import Block, TextChunk

__all__ = ["build_chunks"]

Span = tuple[int, int]

# Separators of the recursive strategy, coarsest first; each matches the gap AFTER a piece.
_RECURSIVE = (
    re.compile(r"\n[ \t]*\n\s*"),  # paragraphs
    re.compile(r"\n"),  # lines
    re.compile(r"(?<=[.!?。！？])\s+"),  # sentences
    re.compile(r"[ \t]+"),  # words
)


def build_chunks(
    markdown: str,
    blocks: Sequence[Block] | None = None,
    max_size: int = 800,
    overlap: int = 120,
    strategy: str = "recursive",
) -> list[TextChunk]:
    """Split ``markdown`` into chunks of at most ``max_size`` characters.

    >>> [c.text for c in build_chunks("One.\\n\\nTwo.", max_size=5, overlap=0)]
    ['One.', 'Two.']
    """
    if max_size < 1 or overlap < 0 or overlap >= max_size:
        raise ConfigError(f"need 0 <= overlap < max_size; got max_size={max_size}, overlap={overlap}")
    if strategy != "recursive":
        raise ConfigError(f"chunk strategy must be 'recursive'; got {strategy!r}")
    pieces = _split(markdown, 0, len(markdown), max_size, 0)
    spans = _merge(markdown, pieces, max_size, overlap)
    return [TextChunk(markdown[s:e], s, e) for s, e in spans]


def _split(text: str, start: int, end: int, max_size: int, level: int) -> list[Span]:
    """Cut [start, end) into pieces of at most max_size, at the coarsest separator that works."""
    if end - start <= max_size:
        return [(start, end)]
    for depth in range(level, len(_RECURSIVE)):
        cuts = [m.end() for m in _RECURSIVE[depth].finditer(text, start, end) if start < m.end() < end]
        if not cuts:
            continue
        pieces: list[Span] = []
        prev = start
        for cut in [*cuts, end]:
            if cut > prev:
                pieces.extend(_split(text, prev, cut, max_size, depth + 1))
                prev = cut
        return pieces
    return [(s, min(s + max_size, end)) for s in range(start, end, max_size)]


def _merge(text: str, pieces: list[Span], max_size: int, overlap: int) -> list[Span]:
    """Greedily join adjacent pieces up to max_size, starting each chunk with up to
    ``overlap`` characters of the previous one's trailing pieces."""
    chunks: list[Span] = []
    current: list[Span] = []
    for piece in pieces:
        if current and piece[1] - current[0][0] > max_size:
            chunks.append((current[0][0], current[-1][1]))
            keep: list[Span] = []
            for prev in reversed(current):
                if piece[1] - prev[0] > max_size or current[-1][1] - prev[0] > overlap:
                    break
                keep.insert(0, prev)
            current = keep
        current.append(piece)
    if current:
        chunks.append((current[0][0], current[-1][1]))
    out: list[Span] = []
    for s, e in chunks:
        s, e = _strip(text, s, e)
        if e > s and (not out or (s, e) != out[-1]):
            out.append((s, e))
    return out


def _strip(text: str, start: int, end: int) -> Span:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
