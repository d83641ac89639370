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
  ``max_size=0`` (``PipelineConfig(chunk_size=0)``) is one chunk per block: none merged,
  none split, whatever its length (a table is one roll-up chunk and its rows).

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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ragtt.errors import ConfigError
from ragtt.ingest.provenance import RegionIndex
from ragtt.ingest.types import Block, Region, TextChunk
from ragtt.spooled_text import SpooledText

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

    markdown: str | SpooledText
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
    markdown: str | SpooledText,
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
    markdown: str | SpooledText,
    blocks: Sequence[Block] | None = None,
    max_size: int = 800,
    overlap: int = 120,
    strategy: str = "recursive",
    *,
    tables: bool = True,
) -> ChunkPlan:
    """``build_chunks``'s chunks as spans (8 bytes each), texts left in ``markdown``.

    A ``SpooledText`` (a long text file) is read in windows by the recursive strategy, with
    the spans it would have whole; the other strategies read it whole."""
    blockwise = max_size == 0 and overlap == 0 and strategy == "structural"  # one chunk per block
    if not blockwise and (max_size < 1 or overlap < 0 or overlap >= max_size):
        raise ConfigError(
            f"need 0 <= overlap < max_size (or max_size=0 and overlap=0 with strategy 'structural': one "
            f"chunk per block); got max_size={max_size}, overlap={overlap}, strategy={strategy!r}"
        )
    splitter = _STRATEGIES.get(strategy)
    if splitter is None:
        raise ConfigError(f"chunk strategy must be one of {list(STRATEGIES)}; got {strategy!r}")
    if isinstance(markdown, SpooledText):
        if strategy == "recursive" and not blocks:
            return _plan_windows(markdown, max_size, overlap, tables)
        markdown = markdown[:]
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
        for s, e, kind, context in _table_chunks(markdown, table, max_size or len(markdown)):
            tagged[len(starts)] = (kind, context)
            starts.append(s)
            ends.append(e)
        prose_start = table[-1][1]
    prose(prose_start, len(markdown))
    index = RegionIndex(blocks) if blocks else None
    regions = (index.block_regions if strategy == "structural" else index.regions_for) if index is not None else None
    return ChunkPlan(markdown, starts, ends, tagged, regions)


_WINDOW_CHARS = 1 << 20  # what the windowed plan reads at a time (more until a paragraph break allows a cut)


def _plan_windows(text: SpooledText, max_size: int, overlap: int, tables: bool) -> ChunkPlan:
    """``plan_chunks(text[:], strategy="recursive")``, reading ``text`` a window at a time.

    A window ends at a paragraph break (a blank line) followed by a line that starts with
    text. There the whole-text plan cuts too, whatever it scanned from: the break is a
    separator match of its own, and no table crosses a blank line. So a prose run that
    spans windows gets the same pieces window by window, and one ``_Merge`` carries the
    chunk being built across them; a run inside one window goes through ``_recursive`` as is.
    A text without such a break (a log, CSV lines) is one window: read whole, as before.
    """
    starts: array[int] = array("q")
    ends: array[int] = array("q")
    tagged: dict[int, tuple[str, str]] = {}
    buf, base = "", 0  # the window and what precedes it (for chunks begun there): buf[i] is text[base + i]
    merge: _Merge | None = None  # the prose run that goes on past the window ...
    last: Span | None = None  # ... and its last chunk (a repeat of it is dropped, as _merge does)

    def emit(span: Span) -> None:
        starts.append(span[0])
        ends.append(span[1])

    def prose(s: int, e: int, closes: bool) -> None:
        nonlocal merge, last
        if merge is None and closes:
            for cs, ce in _recursive(buf, s - base, e - base, max_size, overlap):
                emit((cs + base, ce + base))
            return
        merge = merge or _Merge(max_size, overlap)
        done = [merge.push((ps + base, pe + base)) for ps, pe in _paragraphs(buf, s - base, e - base, max_size)]
        if closes:
            done.append(merge.close())
            merge = None
        for chunk in done:
            if chunk is not None:
                cs, ce = _strip(buf, chunk[0] - base, chunk[1] - base)
                if ce > cs and (cs + base, ce + base) != last:
                    last = (cs + base, ce + base)
                    emit(last)
        if closes:
            last = None

    for a, window, final in _windows(text, max(_WINDOW_CHARS, 4 * max_size)):
        buf, base = buf[max(0, len(buf) - 2 * max_size) :] + window, a - min(len(buf), 2 * max_size)
        pos = a
        for table in _tables(window) if tables else []:
            prose(pos, table[0][0] + a, closes=True)
            for s, e, kind, context in _table_chunks(window, table, max_size):
                tagged[len(starts)] = (kind, context)
                emit((s + a, e + a))
            pos = table[-1][1] + a
        prose(pos, a + len(window), closes=final)
    return ChunkPlan(text, starts, ends, tagged)


def _windows(text: SpooledText, size: int) -> Iterator[tuple[int, str, bool]]:
    """(start, the window's text, whether it is the last) over ``text``, in order; each
    window but the last is at least ``size`` long and ends where ``_next_cut`` found."""
    pending, start, scanned = "", 0, 0
    for piece in text.pieces():
        pending += piece
        while len(pending) >= size:
            cut = _next_cut(pending, max(size, scanned))
            if cut is None:
                # No cut yet: the next scan starts at the whitespace that ends this text (a
                # break there may finish in the next piece), not at the window's start again.
                scanned = len(pending)
                while scanned > size and pending[scanned - 1].isspace():
                    scanned -= 1
                break
            yield start, pending[:cut], False
            start, pending, scanned = start + cut, pending[cut:], 0
    yield start, pending, True


def _next_cut(text: str, pos: int) -> int | None:
    """The end of the first paragraph break at or after ``pos`` that a line of text follows
    (its whitespace run ends inside ``text``, at a newline). Scanning from any position finds
    only such ends: a break's match always runs to the end of its whitespace."""
    for m in _RECURSIVE[0].finditer(text, pos):
        end = m.end()
        if end < len(text) and text[end - 1] == "\n":
            return end
    return None


def _paragraphs(text: str, start: int, end: int, max_size: int) -> list[Span]:
    """``_split``'s pieces of [start, end) at the paragraph level, as a longer run that
    [start, end) is a part of (cut at its ends) would get them."""
    pieces: list[Span] = []
    prev = start
    for cut in [*(m.end() for m in _RECURSIVE[0].finditer(text, start, end) if start < m.end() < end), end]:
        if cut > prev:
            pieces.extend(_split(text, prev, cut, max_size, 1))
            prev = cut
    return pieces


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
    if max_size == 0:  # one chunk per block
        return [(s, e) for s, e in (_strip(text, s, e) for s, e, _ in _units(text, start, end, blocks)) if e > s]
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
    merge = _Merge(max_size, overlap)
    chunks = [chunk for piece in pieces if (chunk := merge.push(piece)) is not None]
    if (chunk := merge.close()) is not None:
        chunks.append(chunk)
    out: list[Span] = []
    for s, e in chunks:
        s, e = _strip(text, s, e)
        if e > s and (not out or (s, e) != out[-1]):
            out.append((s, e))
    return out


class _Merge:
    """``_merge``'s joining a piece at a time: ``push`` gives the chunk a piece closes (its
    span before stripping), ``close`` the last one. The chunk being built never spans more
    than ``max_size`` characters, so it starts at most that far before the newest piece's end."""

    def __init__(self, max_size: int, overlap: int) -> None:
        self.max_size, self.overlap = max_size, overlap
        self.current: list[Span] = []

    def push(self, piece: Span) -> Span | None:
        current, done = self.current, None
        if current and piece[1] - current[0][0] > self.max_size:
            done = (current[0][0], current[-1][1])
            keep: list[Span] = []
            for prev in reversed(current):
                if piece[1] - prev[0] > self.max_size or current[-1][1] - prev[0] > self.overlap:
                    break
                keep.insert(0, prev)
            self.current = current = keep
        current.append(piece)
        return done

    def close(self) -> Span | None:
        return (self.current[0][0], self.current[-1][1]) if self.current else None


def _strip(text: str, start: int, end: int) -> Span:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
