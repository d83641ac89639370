"""The PDF loader: route every page, read it with the engine chosen, write Markdown.

Registered for ".pdf" at import (``ragtt.ingest.loaders`` imports this module lazily, so
PyMuPDF is only loaded when a PDF is met). Pages are numbered from 1 everywhere; boxes
are PDF points in PyMuPDF's top-left frame of the UNROTATED page, clipped to it.
"""

from __future__ import annotations

from typing import Any

import pymupdf

from ragtt.errors import IngestError
from ragtt.ingest.engines import resolve_engines, run_ocr, run_vision
from ragtt.ingest.layout import MarkdownWriter, Paragraph, paragraphs_from_dict, paragraphs_from_markdown
from ragtt.ingest.loaders import register_loader
from ragtt.ingest.route import RouteThresholds, decide, text_signals
from ragtt.ingest.tables import table_paragraphs
from ragtt.ingest.types import IngestOptions, PageRoute, ParsedDocument

__all__ = ["load_pdf"]

Box = tuple[float, float, float, float]

# The text layer without embedded images: their pixels are never needed here, and decoding
# them is most of what bare get_text("dict") costs.
TEXT_FLAGS = pymupdf.TEXTFLAGS_DICT & ~pymupdf.TEXT_PRESERVE_IMAGES


def load_pdf(data: bytes, source: str, options: IngestOptions) -> ParsedDocument:
    """Parse a PDF's bytes; raises IngestError for a file that cannot be read at all."""
    doc = open_pdf(data, source)
    thresholds = options.thresholds or RouteThresholds()
    engines, absent = resolve_engines(options)
    writer = MarkdownWriter()
    routes: list[PageRoute] = []
    warnings: list[str] = []
    with doc:
        for index in range(doc.page_count):
            number = index + 1
            try:
                route, paragraphs, notes = _read_page(doc[index], number, options, thresholds, engines, absent)
            except Exception as exc:  # one unreadable page must not lose the others
                routes.append(PageRoute(number, "none", {}, f"page could not be read: {exc}"))
                warnings.append(f"{source} page {number}: could not be read ({type(exc).__name__}: {exc})")
                continue
            routes.append(route)
            warnings.extend(f"{source} page {number}: {note}" for note in notes)
            for paragraph in paragraphs:
                writer.paragraph(number, paragraph)
    return ParsedDocument(source, writer.markdown, writer.blocks, routes, warnings)


def open_pdf(data: bytes, source: str) -> pymupdf.Document:
    """Open bytes as a PDF or say, in words a person can act on, why not."""
    if not data:
        raise IngestError(f"{source}: empty file (0 bytes); nothing to ingest")
    if not data.lstrip()[:1024].startswith(b"%PDF") and b"%PDF" not in data[:1024]:
        raise IngestError(f"{source}: not a PDF (no %PDF header; starts with {data[:16]!r})")
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as exc:  # MuPDF raises FileDataError and plain RuntimeErrors
        raise IngestError(f"{source}: corrupt PDF that MuPDF cannot repair ({exc})") from None
    if doc.needs_pass and not doc.authenticate(""):
        doc.close()
        raise IngestError(f"{source}: encrypted PDF that needs a password; decrypt it first (qpdf --decrypt)")
    if doc.page_count == 0:
        doc.close()
        raise IngestError(f"{source}: PDF has no pages")
    return doc


def _read_page(
    page: pymupdf.Page,
    number: int,
    options: IngestOptions,
    thresholds: RouteThresholds,
    engines: tuple[str, ...],
    absent: dict[str, str],
) -> tuple[PageRoute, list[Paragraph], list[str]]:
    box = _page_box(page)
    page_dict = page.get_text("dict", flags=TEXT_FLAGS)
    text = "\n".join(
        "".join(span["text"] for span in line["spans"])
        for block in page_dict["blocks"]
        if block["type"] == 0
        for line in block["lines"]
    )
    signals: dict[str, Any] = text_signals(text)
    signals["image_coverage"] = _image_coverage(page, box)
    signals["vector_curves"] = _curves(page) if signals["chars"] < thresholds.thin_chars else None
    signals["rotation"] = page.rotation
    reread, reason = decide(signals, thresholds)
    notes: list[str] = []
    if reread:
        for engine in engines:
            try:
                paragraphs = _reread(page, engine, options, box)
            except Exception as exc:  # a failing engine re-routes the page to the next one
                notes.append(f"{engine} engine failed ({type(exc).__name__}: {exc}); re-routed")
                absent = {**absent, engine: f"failed ({exc})"}
                continue
            return PageRoute(number, engine, signals, reason), paragraphs, notes
        why = "; ".join(f"{name}: {msg}" for name, msg in absent.items()) or "no re-read engine is configured"
        notes.append(f"NOT RE-READ: {reason}, but no engine could re-read it ({why}); kept the text layer")
        reason = f"{reason}; no engine could re-read it, kept the text layer"
    skip: list[Box] = []
    tables: list[tuple[Box, Paragraph]] = []
    if options.tables and signals["chars"]:
        tables = table_paragraphs(page, box, page_dict)
        skip = [area for area, _ in tables]
    paragraphs = paragraphs_from_dict(page_dict, box, skip=skip)
    if tables:
        paragraphs = _place_tables(paragraphs, tables)
    return PageRoute(number, "text", signals, reason), paragraphs, notes


def _reread(page: pymupdf.Page, engine: str, options: IngestOptions, box: Box) -> list[Paragraph]:
    if engine == "ocr":
        result = run_ocr(page, options.ocr_languages, options.ocr_dpi)
        matrix = result.to_page

        def to_page(point: tuple[float, float]) -> tuple[float, float]:
            p = pymupdf.Point(point) * matrix
            return (p.x, p.y)

        return paragraphs_from_dict(result.page_dict, box, transform=to_page, kind="ocr")
    return paragraphs_from_markdown(run_vision(page, options), box)


def _place_tables(paragraphs: list[Paragraph], tables: list[tuple[Box, Paragraph]]) -> list[Paragraph]:
    """Put each table before the first paragraph that starts below its top edge."""
    out: list[Paragraph] = []
    pending = sorted(tables, key=lambda t: t[0][1])
    for paragraph in paragraphs:
        top = min(line.bbox[1] for line in paragraph.lines)
        while pending and pending[0][0][1] <= top:
            out.append(pending.pop(0)[1])
        out.append(paragraph)
    out.extend(table for _, table in pending)
    return out


def _page_box(page: pymupdf.Page) -> Box:
    """The unrotated page rect in the frame text coordinates use (origin at the crop box)."""
    crop = page.cropbox
    return (0.0, 0.0, crop.width, crop.height)


def _image_coverage(page: pymupdf.Page, box: Box) -> float:
    """Share of the page under images, capped at 1 (overlapping images count twice: a
    scan with an image per layer still reads as covered, which is what matters).
    Image boxes come in the unrotated frame, like text."""
    if not page.get_images():  # the resource list is cheap; the image walk is not
        return 0.0
    area = (box[2] - box[0]) * (box[3] - box[1]) or 1.0
    covered = 0.0
    for info in page.get_image_info():
        rect = pymupdf.Rect(info["bbox"]) & pymupdf.Rect(box)
        if not rect.is_empty:
            covered += rect.width * rect.height
    return round(min(covered / area, 1.0), 4)


def _curves(page: pymupdf.Page) -> int:
    """Bezier segments drawn on the page: glyphs drawn as outlines are made of them."""
    return sum(1 for path in page.get_cdrawings() for item in path["items"] if item[0] == "c")


register_loader(".pdf", load_pdf)
