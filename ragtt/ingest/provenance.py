"""Where a chunk came from: its span in the Markdown and its boxes on the page.

``RegionIndex`` answers "which page areas does markdown[start:end] cover?" from the
loader's Blocks; ``locate_chunks`` finds spans for chunks that were cut elsewhere (by
another splitter, or typed by a person) when their whitespace no longer matches.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragtt.ingest.types import Block, Region, TextChunk

__all__ = ["LocatedChunks", "RegionIndex", "locate_chunks"]

Box = tuple[float, float, float, float]


class RegionIndex:
    """An interval index over block spans: blocks sorted by start with a running maximum
    of their ends, so a query bisects to the last block starting before ``end`` and walks
    back only while some earlier block can still reach ``start`` (O(log n + hits)).

    >>> index = RegionIndex([Block(1, (0, 0, 100, 10), 0, 10)])
    >>> index.regions_for(0, 5)
    (Region(page=1, x0=0.0, y0=0.0, x1=50.0, y1=10.0),)
    """

    def __init__(self, blocks: Sequence[Block]) -> None:
        self._blocks = sorted(blocks, key=lambda b: (b.char_start, b.char_end))
        self._starts = [b.char_start for b in self._blocks]
        self._reach: list[int] = []
        reach = -1
        for block in self._blocks:
            reach = max(reach, block.char_end)
            self._reach.append(reach)

    def __len__(self) -> int:
        return len(self._blocks)

    def blocks_for(self, start: int, end: int) -> list[Block]:
        """Blocks whose span overlaps [start, end), in Markdown order."""
        hits: list[Block] = []
        i = bisect.bisect_left(self._starts, end) - 1
        while i >= 0 and self._reach[i] > start:
            block = self._blocks[i]
            if block.char_end > start and block.char_start < end:
                hits.append(block)
            i -= 1
        hits.reverse()
        return hits

    def block_regions(self, start: int, end: int) -> tuple[Region, ...]:
        """The boxes of the blocks that markdown[start:end] touches, each whole and unmerged:
        the regions of a chunk made of whole blocks (the ``structural`` strategy)."""
        return tuple(Region(b.page, *map(float, b.bbox)) for b in self.blocks_for(start, end))

    def regions_for(self, start: int, end: int) -> tuple[Region, ...]:
        """The page boxes of markdown[start:end]: each block's box, narrowed along its
        writing direction when a single-line block is only partly covered (in proportion
        to the characters covered), then merged per page where boxes of one column touch.
        """
        boxes: list[tuple[int, Box, tuple[float, float] | None]] = []
        for block in self.blocks_for(start, end):
            x0, y0, x1, y1 = block.bbox
            box: Box = (float(x0), float(y0), float(x1), float(y1))
            if block.dir is not None and (block.char_start < start or block.char_end > end):
                box = _narrow(box, block, max(start, block.char_start), min(end, block.char_end))
            boxes.append((block.page, box, block.dir))
        return tuple(Region(page, *box) for page, box in _merge(boxes))


def _narrow(box: Box, block: Block, start: int, end: int) -> Box:
    """The part of a single-line block's box that ``[start, end)`` covers, in proportion to its
    characters; the whole line box when that part would be narrower than one glyph.

    Proportional widths are estimates: a one- or two-character clip of a wide block came out
    0.4-2 pt wide on the PDF corpus, a sliver nobody can see (and maybe beside the glyph it
    means). The line's height is the em of its font, the widest a glyph gets: a clip narrower
    than that falls back to the line box, which a person can see and which holds the text.
    """
    length = block.char_end - block.char_start
    if length <= 0 or block.dir is None:
        return box
    f0 = (start - block.char_start) / length
    f1 = (end - block.char_start) / length
    x0, y0, x1, y1 = box
    dx, dy = block.dir
    if abs(dx) >= abs(dy):
        w = x1 - x0
        if (f1 - f0) * w < y1 - y0:
            return box
        return (x0 + f0 * w, y0, x0 + f1 * w, y1) if dx >= 0 else (x1 - f1 * w, y0, x1 - f0 * w, y1)
    h = y1 - y0
    if (f1 - f0) * h < x1 - x0:
        return box
    return (x0, y0 + f0 * h, x1, y0 + f1 * h) if dy >= 0 else (x0, y1 - f1 * h, x1, y1 - f0 * h)


def _merge(boxes: list[tuple[int, Box, tuple[float, float] | None]]) -> list[tuple[int, Box]]:
    """Join each box into the last region of its page when it continues it: the next line
    of the same column, or the next cell of the same row (judged against the previous
    line alone, so a column's top line never joins a tall region of the column before)."""
    out: list[tuple[int, Box]] = []
    last: dict[int, tuple[int, Box]] = {}  # page -> (index in out, previous raw box)
    for page, box, direction in boxes:
        vertical = direction is not None and abs(direction[1]) > abs(direction[0])
        if page in last:
            j, previous = last[page]
            merged = out[j][1]
            if _same_column(merged, box, vertical) or _same_row(previous, box, vertical):
                out[j] = (
                    page,
                    (min(merged[0], box[0]), min(merged[1], box[1]), max(merged[2], box[2]), max(merged[3], box[3])),
                )
                last[page] = (j, box)
                continue
        last[page] = (len(out), box)
        out.append((page, box))
    return out


def _axes(vertical: bool) -> tuple[tuple[int, int], tuple[int, int]]:
    """(along the text, across the text) coordinate indexes of a box."""
    return ((1, 3), (0, 2)) if vertical else ((0, 2), (1, 3))


def _same_column(region: Box, box: Box, vertical: bool) -> bool:
    along, across = _axes(vertical)
    overlap = min(region[along[1]], box[along[1]]) - max(region[along[0]], box[along[0]])
    gap = max(region[across[0]], box[across[0]]) - min(region[across[1]], box[across[1]])
    return overlap > 0 and gap <= max(box[across[1]] - box[across[0]], 1.0)


def _same_row(previous: Box, box: Box, vertical: bool) -> bool:
    _, across = _axes(vertical)
    shared = min(previous[across[1]], box[across[1]]) - max(previous[across[0]], box[across[0]])
    line = min(previous[across[1]] - previous[across[0]], box[across[1]] - box[across[0]])
    return shared >= max(line, 1.0) / 2


@dataclass(frozen=True)
class LocatedChunks:
    """``chunks[i]`` is where ``texts[i]`` lies in the Markdown, or None when it was not
    found; ``misses`` lists those indexes so nothing is dropped silently."""

    chunks: tuple[TextChunk | None, ...]
    misses: tuple[int, ...]

    @property
    def found(self) -> list[TextChunk]:
        return [c for c in self.chunks if c is not None]


_WS = re.compile(r"\s+")


def locate_chunks(markdown: str, texts: Sequence[str], blocks: Sequence[Block] | None = None) -> LocatedChunks:
    """Find each text in ``markdown``, tolerating any difference in whitespace.

    A found chunk's ``text`` is the exact Markdown span (so ``markdown[start:end] ==
    text`` holds even when the input's whitespace differed) and, with ``blocks``, it
    carries its regions. Texts are searched in order from the previous hit, then from
    the top, so repeated passages map to successive occurrences.

    >>> located = locate_chunks("a  b\\nc", ["a b c", "zzz"])
    >>> located.chunks[0].text, located.misses
    ('a  b\\nc', (1,))
    """
    squeezed, offsets = _squeeze(markdown)
    index = RegionIndex(blocks) if blocks else None
    chunks: list[TextChunk | None] = []
    misses: list[int] = []
    cursor = 0
    for i, text in enumerate(texts):
        needle = " ".join(text.split())
        at = squeezed.find(needle, cursor) if needle else -1
        if at < 0 and needle:
            at = squeezed.find(needle)
        if at < 0:
            chunks.append(None)
            misses.append(i)
            continue
        start, end = offsets[at], offsets[at + len(needle) - 1] + 1
        regions = index.regions_for(start, end) if index is not None else ()
        chunks.append(TextChunk(markdown[start:end], start, end, regions))
        cursor = at + 1
    return LocatedChunks(tuple(chunks), tuple(misses))


def _squeeze(text: str) -> tuple[str, list[int]]:
    """``text`` with every whitespace run as one space and no edge whitespace, and the
    offset in ``text`` of each character kept."""
    parts: list[str] = []
    offsets: list[int] = []
    pos = 0
    for match in _WS.finditer(text):
        if match.start() > pos:
            if parts:
                parts.append(" ")
                offsets.append(pos - 1)
            parts.append(text[pos : match.start()])
            offsets.extend(range(pos, match.start()))
        pos = match.end()
    if pos < len(text):
        if parts:
            parts.append(" ")
            offsets.append(pos - 1)
        parts.append(text[pos:])
        offsets.extend(range(pos, len(text)))
    return "".join(parts), offsets
