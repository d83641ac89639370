"""From a PyMuPDF text dict to paragraphs in reading order, and from paragraphs to Markdown.

Reading order is decided in the frame where the page's dominant writing direction runs
left to right, so a page shown through /Rotate, a landscape table drawn sideways and
vertical CJK all read the same way, and a file and its /Rotate twin give identical text.
Within that frame a recursive XY-cut prefers column cuts: a multi-column page reads
column by column, a full-width heading or figure splits the page into bands first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ragtt.ingest.types import Block

__all__ = ["Line", "MarkdownWriter", "Paragraph", "clip_box", "paragraphs_from_dict", "paragraphs_from_markdown"]

Box = tuple[float, float, float, float]
Point = tuple[float, float]


@dataclass(frozen=True)
class Line:
    text: str
    bbox: Box  # unrotated page frame, clipped to the page
    dir: tuple[float, float] | None
    size: float = 0.0


@dataclass(frozen=True)
class Paragraph:
    lines: tuple[Line, ...]
    kind: str = "text"  # text | heading | list | table | ocr
    level: int = 0  # heading level; 0 writes the lines verbatim (already Markdown)


_BULLET = re.compile(r"^(?:[•◦▪▫●○■□‣⁃∙·\-–*]|\(?\d{1,3}[.)]|\(?[a-z][.)])(?:\s|$)")
_HEADING_MAX_CHARS = 150


def paragraphs_from_dict(
    page_dict: dict[str, Any],
    page_box: Box,
    transform: Callable[[Point], Point] | None = None,
    kind: str = "text",
    skip: Sequence[Box] = (),
) -> list[Paragraph]:
    """Paragraphs (PyMuPDF blocks) of a page in reading order.

    ``transform`` maps a box of the dict into the unrotated page frame (OCR output lives
    in the rendered image's frame); ``skip`` are areas (tables) written separately.
    """
    blocks: list[list[Line]] = []
    for block in page_dict.get("blocks", ()):
        if block.get("type", 0) != 0:
            continue
        lines: list[Line] = []
        for line in block["lines"]:
            text = " ".join("".join(span["text"] for span in line["spans"]).split())
            if not text:
                continue
            bbox: Box = tuple(line["bbox"])  # type: ignore[assignment]
            direction: Point = tuple(line["dir"])  # type: ignore[assignment]
            if transform is not None:
                bbox, direction = _map_box(bbox, transform), _map_dir(direction, transform)
            box = clip_box(bbox, page_box)
            if skip and _inside_any(box, skip):
                continue
            size = max((span["size"] for span in line["spans"]), default=0.0)
            lines.append(Line(text, box, _quantize(direction), size))
        if lines:
            blocks.append(lines)
    if not blocks:
        return []
    frame = _dominant_dir(line for lines in blocks for line in lines)
    ordered = _xy_cut([(_to_frame(_union(b), frame), b) for b in blocks])
    body = _body_size(line for lines in blocks for line in lines)
    return [_classify(lines, kind, body) for lines in ordered]


def paragraphs_from_markdown(markdown: str, page_box: Box) -> list[Paragraph]:
    """A vision model's Markdown as paragraphs; it says nothing about where on the page a
    line sits, so every line gets the whole page as its box and is never clipped."""
    out = []
    for part in re.split(r"\n\s*\n", markdown.strip()):
        rows = [row.rstrip() for row in part.splitlines() if row.strip()]
        if not rows:
            continue
        first = rows[0].lstrip()
        kind = "heading" if first.startswith("#") else "table" if first.startswith("|") else "text"
        if _BULLET.match(first):
            kind = "list"
        out.append(Paragraph(tuple(Line(row, page_box, None) for row in rows), kind))
    return out


class MarkdownWriter:
    """Appends paragraphs to one Markdown string, recording a Block per line."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self.blocks: list[Block] = []

    def _emit(self, text: str) -> tuple[int, int]:
        start = self._length
        self._parts.append(text)
        self._length += len(text)
        return start, self._length

    def paragraph(self, page: int, paragraph: Paragraph) -> None:
        if self._length:
            self._emit("\n\n")
        if paragraph.kind == "heading" and paragraph.level:
            prefix = "#" * paragraph.level + " "
            for i, line in enumerate(paragraph.lines):
                sep = prefix if i == 0 else " "
                start, end = self._emit(sep + line.text)
                self.blocks.append(Block(page, line.bbox, start + (len(sep) if i else 0), end, "heading", line.dir))
            return
        for i, line in enumerate(paragraph.lines):
            if i:
                self._emit("\n")
            start, end = self._emit(line.text)
            self.blocks.append(Block(page, line.bbox, start, end, paragraph.kind, line.dir))

    @property
    def markdown(self) -> str:
        return "".join(self._parts)


def _classify(lines: list[Line], kind: str, body: float) -> Paragraph:
    if kind != "text":
        return Paragraph(tuple(lines), kind)
    size = max(line.size for line in lines)
    chars = sum(len(line.text) for line in lines)
    if len(lines) <= 2 and chars <= _HEADING_MAX_CHARS and body and size >= 1.2 * body:
        return Paragraph(tuple(lines), "heading", 1 if size >= 1.6 * body else 2)
    if _BULLET.match(lines[0].text):
        return Paragraph(tuple(lines), "list")
    return Paragraph(tuple(lines), "text")


def _body_size(lines: Iterable[Line]) -> float:
    """The font size most characters are set in (the weighted mode)."""
    weights: dict[float, int] = {}
    for line in lines:
        key = round(line.size, 1)
        weights[key] = weights.get(key, 0) + len(line.text)
    return max(weights, key=lambda k: weights[k]) if weights else 0.0


def _quantize(direction: Sequence[float]) -> tuple[float, float]:
    dx, dy = direction
    if abs(dx) >= abs(dy):
        return (1.0, 0.0) if dx >= 0 else (-1.0, 0.0)
    return (0.0, 1.0) if dy > 0 else (0.0, -1.0)


def _map_box(box: Box, transform: Callable[[Point], Point]) -> Box:
    corners = [transform(p) for p in ((box[0], box[1]), (box[2], box[1]), (box[0], box[3]), (box[2], box[3]))]
    xs = [c[0] for c in corners]
    ys = [c[1] for c in corners]
    return (min(xs), min(ys), max(xs), max(ys))


def _map_dir(direction: Point, transform: Callable[[Point], Point]) -> Point:
    ox, oy = transform((0.0, 0.0))
    ax, ay = transform((direction[0] * 100, direction[1] * 100))
    return (ax - ox, ay - oy)


def _dominant_dir(lines: Iterable[Line]) -> tuple[float, float]:
    weights: dict[tuple[float, float], int] = {}
    for line in lines:
        if line.dir is not None:
            weights[line.dir] = weights.get(line.dir, 0) + len(line.text)
    return max(weights, key=lambda k: weights[k]) if weights else (1.0, 0.0)


def _to_frame(box: Box, d: tuple[float, float]) -> Box:
    """A box in the frame where direction ``d`` points right (u along, v down the lines)."""
    dx, dy = d
    us = (box[0] * dx + box[1] * dy, box[2] * dx + box[3] * dy)
    vs = (-box[0] * dy + box[1] * dx, -box[2] * dy + box[3] * dx)
    return (min(us), min(vs), max(us), max(vs))


def _union(lines: list[Line]) -> Box:
    return (
        min(line.bbox[0] for line in lines),
        min(line.bbox[1] for line in lines),
        max(line.bbox[2] for line in lines),
        max(line.bbox[3] for line in lines),
    )


def clip_box(box: Box, page: Box) -> Box:
    x0 = min(max(box[0], page[0]), page[2])
    y0 = min(max(box[1], page[1]), page[3])
    return (x0, y0, max(min(box[2], page[2]), x0), max(min(box[3], page[3]), y0))


def _inside_any(box: Box, areas: Sequence[Box]) -> bool:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return any(a[0] <= cx <= a[2] and a[1] <= cy <= a[3] for a in areas)


_GAP = 1.0  # points of overlap forgiven between neighbours (boxes touch on real files)


def _xy_cut(items: list[tuple[Box, list[Line]]]) -> list[list[Line]]:
    if len(items) <= 1:
        return [lines for _, lines in items]
    for axis in (0, 1):  # columns first, then bands
        groups = _split(items, axis)
        if len(groups) > 1:
            return [lines for group in groups for lines in _xy_cut(group)]
    return [lines for _, lines in sorted(items, key=lambda item: (item[0][1], item[0][0]))]


def _split(items: list[tuple[Box, list[Line]]], axis: int) -> list[list[tuple[Box, list[Line]]]]:
    """Groups separated by an empty band across the whole set, along u (0) or v (1)."""
    ordered = sorted(items, key=lambda item: item[0][axis])
    groups = [[ordered[0]]]
    reach = ordered[0][0][axis + 2]
    for item in ordered[1:]:
        if item[0][axis] >= reach - _GAP:
            groups.append([])
        groups[-1].append(item)
        reach = max(reach, item[0][axis + 2])
    return groups
