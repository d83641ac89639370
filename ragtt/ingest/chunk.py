"""Chunking that never loses track of where a chunk came from.

Every splitter works on spans of the original Markdown, never on copies, so a chunk's
``markdown[char_start:char_end] == text`` holds by construction, for every strategy:

* ``recursive``: paragraphs, then lines, sentences, words, as far down as needed;
* ``markdown``: one section per heading, split recursively only when too long;
* ``sentence``: whole sentences packed up to ``max_size``, overlapping by sentences;
* ``fixed``: windows of ``max_size`` characters every ``max_size - overlap``;
* ``structural``: one chunk per layout block (a PDF's blocks; without blocks, a Markdown
  file's blocks: paragraphs, headings, lists, fenced code), adjacent blocks merged up to
  ``max_size``, a heading always opening a new chunk; a block is split (recursively) only
  when it alone exceeds ``max_size``. Its regions are the blocks' own boxes, unmerged.

Markdown tables (which the PDF loader writes with ``IngestOptions(tables=True)``, and any
.md file may hold) are carved out first, whatever the strategy: one roll-up chunk for the
table (row groups under ``max_size`` when it is longer, the header repeated in their
``context``) plus one ``table_row`` chunk per row. A row's header cannot sit inside its
text without breaking the charspan, so it travels in ``TextChunk.context`` and
``TextChunk.embed_text`` puts it in front: the row is found by what its columns mean,
and its span and page box are still those of the row alone.
"""

from __future__ import annotations

import functools
import re
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ragtt.errors import ConfigError
from ragtt.ingest.provenance import RegionIndex
from ragtt.ingest.types import Block, Region, TextChunk

__all__ = ["STRATEGIES", "ChunkPlan", "build_chunks", "plan_chunks"]

Span = tuple[int, int]

# Separators of the recursive strategy, coarsest first; each matches the gap AFTER a piece.
_RECURSIVE = (
    re.compile(r"\n[ \t]*\n\s*"),  # paragraphs
    re.compile(r"\n"),  # lines
    re.compile(r"(?<=[.!?。！？])\s+"),  # sentences
    re.compile(r"[ \t]+"),  # words
)
_SENTENCE_LEVEL = 2
_SENTENCE_END = re.compile(r"\n[ \t]*\n\s*|(?<=[.!?])\s+|(?<=[。！？])\s*")
_HEADING = re.compile(r"^#{1,6}[ \t]", re.MULTILINE)
_PIPE_LINE = re.compile(r"^[^\S\n]*\|[^\n]*", re.MULTILINE)
_TABLE_RULE = re.compile(r"\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")


@dataclass(frozen=True)
class ChunkPlan:
    """Where a document's chunks lie, without their texts: ``chunks(i, j)`` makes chunks
    i..j-1 on demand, so a 200 MB document's chunks never all sit in memory at once."""

    markdown: str
    starts: array[int]
    ends: array[int]
    tagged: dict[int, tuple[str, str]]  # chunk number -> (kind, context), for table chunks
    regions: Callable[[int, int], tuple[Region, ...]] | None = None

    def __len__(self) -> int:
        return len(self.starts)

    def embed_size(self, i: int) -> int:
        """Characters of chunk i's ``embed_text`` (what a batch's byte bound counts)."""
        context = self.tagged.get(i, ("", ""))[1]
        return self.ends[i] - self.starts[i] + (len(context) + 1 if context else 0)

    def chunks(self, start: int = 0, stop: int | None = None) -> list[TextChunk]:
        out = []
        for i in range(start, len(self) if stop is None else min(stop, len(self))):
            s, e = self.starts[i], self.ends[i]
            kind, context = self.tagged.get(i, ("text", ""))
            out.append(TextChunk(self.markdown[s:e], s, e, self.regions(s, e) if self.regions else (), kind, context))
        return out


def build_chunks(
    markdown: str,
    blocks: Sequence[Block] | None = None,
    max_size: int = 800,
    overlap: int = 120,
    strategy: str = "recursive",
    *,
    tables: bool = True,
) -> list[TextChunk]:
    """Split ``markdown`` into chunks of at most ``max_size`` characters (a table row is
    never split); with ``blocks`` each chunk carries its page regions.

    >>> [c.text for c in build_chunks("One.\\n\\nTwo.", max_size=5, overlap=0)]
    ['One.', 'Two.']
    """
    return plan_chunks(markdown, blocks, max_size, overlap, strategy, tables=tables).chunks()


def plan_chunks(
    markdown: str,
    blocks: Sequence[Block] | None = None,
    max_size: int = 800,
    overlap: int = 120,
    strategy: str = "recursive",
    *,
    tables: bool = True,
) -> ChunkPlan:
    """``build_chunks``'s chunks as spans (8 bytes each), texts left in ``markdown``."""
    if max_size < 1 or overlap < 0 or overlap >= max_size:
        raise ConfigError(f"need 0 <= overlap < max_size; got max_size={max_size}, overlap={overlap}")
    splitter = _STRATEGIES.get(strategy)
    if splitter is None:
        raise ConfigError(f"chunk strategy must be one of {list(STRATEGIES)}; got {strategy!r}")
    if strategy == "structural":
        splitter = functools.partial(_structural, blocks=blocks)
    starts: array[int] = array("q")
    ends: array[int] = array("q")
    tagged: dict[int, tuple[str, str]] = {}

    def prose(start: int, end: int) -> None:
        for s, e in splitter(markdown, start, end, max_size, overlap):
            starts.append(s)
            ends.append(e)

    prose_start = 0
    for table in _tables(markdown) if tables else []:
        prose(prose_start, table[0][0])
        for s, e, kind, context in _table_chunks(markdown, table, max_size):
            tagged[len(starts)] = (kind, context)
            starts.append(s)
            ends.append(e)
        prose_start = table[-1][1]
    prose(prose_start, len(markdown))
    index = RegionIndex(blocks) if blocks else None
    regions = (index.block_regions if strategy == "structural" else index.regions_for) if index is not None else None
    return ChunkPlan(markdown, starts, ends, tagged, regions)


def _recursive(text: str, start: int, end: int, max_size: int, overlap: int) -> list[Span]:
    return _merge(text, _split(text, start, end, max_size, 0), max_size, overlap)


def _sentences(text: str, start: int, end: int, max_size: int, overlap: int) -> list[Span]:
    pieces: list[Span] = []
    prev = start
    for cut in [*(m.end() for m in _SENTENCE_END.finditer(text, start, end)), end]:
        if prev < cut <= end:
            pieces.extend(_split(text, prev, cut, max_size, _SENTENCE_LEVEL + 1))
            prev = cut
    return _merge(text, pieces, max_size, overlap)


def _sections(text: str, start: int, end: int, max_size: int, overlap: int) -> list[Span]:
    """One run of chunks per heading's section; no chunk straddles two sections."""
    cuts = [m.start() for m in _HEADING.finditer(text, start, end) if m.start() > start]
    out: list[Span] = []
    for s, e in zip([start, *cuts], [*cuts, end], strict=True):
        out.extend(_recursive(text, s, e, max_size, overlap))
    return out


def _fixed(text: str, start: int, end: int, max_size: int, overlap: int) -> list[Span]:
    out: list[Span] = []
    for s in range(start, end, max_size - overlap):
        span = _strip(text, s, min(s + max_size, end))
        if span[1] > span[0] and (not out or span[1] > out[-1][1]):
            out.append(span)
        if s + max_size >= end:
            break
    return out


_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_BLANK = re.compile(r"^[ \t]*$")


def _structural(
    text: str, start: int, end: int, max_size: int, overlap: int, blocks: Sequence[Block] | None = None
) -> list[Span]:
    out: list[Span] = []
    current: Span | None = None
    for s, e, heading in _units(text, start, end, blocks):
        if e - s > max_size:  # the one case a block is cut: it alone does not fit
            if current is not None:
                out.append(current)
                current = None
            out.extend(_recursive(text, s, e, max_size, overlap))
            continue
        if current is not None and (heading or e - current[0] > max_size):
            out.append(current)
            current = None
        current = (s, e) if current is None else (current[0], e)
    if current is not None:
        out.append(current)
    spans = [_strip(text, s, e) for s, e in out]
    return [(s, e) for s, e in spans if e > s]


def _units(text: str, start: int, end: int, blocks: Sequence[Block] | None) -> list[tuple[int, int, bool]]:
    """(start, end, is a heading) of each block inside [start, end), in order; text between
    blocks that no block covers is a unit of its own, so nothing is dropped."""
    if not blocks:
        return _markdown_blocks(text, start, end)
    units: list[tuple[int, int, bool]] = []
    cursor = start
    for b in sorted(blocks, key=lambda b: (b.char_start, b.char_end)):
        s, e = max(b.char_start, cursor), min(b.char_end, end)
        if e <= s:
            continue
        if text[cursor:s].strip():
            units.extend(_markdown_blocks(text, cursor, s))
        units.append((s, e, b.kind == "heading"))
        cursor = e
    if text[cursor:end].strip():
        units.extend(_markdown_blocks(text, cursor, end))
    return units


def _markdown_blocks(text: str, start: int, end: int) -> list[tuple[int, int, bool]]:
    """Paragraphs (runs of non-blank lines), headings, fenced code blocks (blank lines and all)."""
    units: list[tuple[int, int, bool]] = []
    block_start: int | None = None
    fenced = False
    pos = start
    for line in text[start:end].split("\n"):
        line_end = pos + len(line)
        if fenced or _FENCE.match(line):
            if block_start is None:
                block_start = pos
            if _FENCE.match(line):
                fenced = not fenced
        elif _HEADING.match(line):
            if block_start is not None:
                units.append((block_start, pos, False))
                block_start = None
            units.append((pos, line_end, True))
        elif _BLANK.match(line):
            if block_start is not None:
                units.append((block_start, pos, False))
                block_start = None
        elif block_start is None:
            block_start = pos
        pos = line_end + 1
    if block_start is not None:
        units.append((block_start, end, False))
    return [(s, e, h) for s, e, h in units if text[s:e].strip()]


_STRATEGIES: dict[str, Callable[..., list[Span]]] = {
    "recursive": _recursive,
    "markdown": _sections,
    "sentence": _sentences,
    "fixed": _fixed,
    "structural": _structural,
}
STRATEGIES = tuple(_STRATEGIES)


def _tables(text: str) -> list[list[Span]]:
    """Markdown tables as lists of line spans: header, rule, rows. Only lines that start
    with a pipe are visited, never a split copy of the whole text."""
    found: list[list[Span]] = []
    cursor = 0
    for header in _PIPE_LINE.finditer(text):
        if header.start() < cursor or header.end() >= len(text):
            continue
        rule = _line(text, header.end() + 1)
        if not _TABLE_RULE.match(text, rule[0], rule[1]):
            continue
        lines = [header.span(), rule]
        while lines[-1][1] < len(text) and (row := _PIPE_LINE.match(text, lines[-1][1] + 1)) is not None:
            lines.append(row.span())
        found.append(lines)
        cursor = lines[-1][1]
    return found


def _line(text: str, start: int) -> Span:
    end = text.find("\n", start)
    return start, len(text) if end < 0 else end


def _table_chunks(text: str, table: list[Span], max_size: int) -> list[tuple[int, int, str, str]]:
    header = text[table[0][0] : table[0][1]].strip()
    rows = table[2:]
    out: list[tuple[int, int, str, str]] = []
    group_start, context = table[0][0], ""
    for i, row in enumerate(rows):
        if row[1] - group_start > max_size and i > 0:
            out.append((group_start, rows[i - 1][1], "table", context))
            group_start, context = row[0], header
    out.append((group_start, table[-1][1], "table", context))
    for row in rows:
        start, end = _strip(text, *row)
        out.append((start, end, "table_row", header))
    return out


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
