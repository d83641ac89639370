"""Ruled tables on a text page, written as Markdown tables (opt-in: ``IngestOptions.tables``).

PyMuPDF's ``find_tables`` costs about 0.1 s a page, a hundred times the text layer, so it
only runs when asked. Each row becomes one Markdown line whose Block is the row's box,
which lets the chunker make one chunk per row that still points at its row on the page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragtt.ingest.layout import Line, Paragraph, clip_box

if TYPE_CHECKING:
    import pymupdf

__all__ = ["table_paragraphs"]

Box = tuple[float, float, float, float]


def table_paragraphs(page: pymupdf.Page, page_box: Box, page_dict: dict[str, Any]) -> list[tuple[Box, Paragraph]]:
    """``(table box, table paragraph)`` for every table PyMuPDF finds on the page.

    Cell text is gathered from the same spans as the rest of the page (``page_dict``):
    ``Table.extract`` re-reads characters and puts a minus sign after its number.
    """
    spans = [
        (span["bbox"], span["text"])
        for block in page_dict["blocks"]
        if block["type"] == 0
        for line in block["lines"]
        for span in line["spans"]
        if span["text"].strip()
    ]
    out = []
    for table in page.find_tables().tables:
        if table.row_count < 2 or table.col_count < 2:
            continue
        lines = []
        for i, row in enumerate(table.rows):
            row_box = clip_box(tuple(row.bbox), page_box)
            lines.append(Line(_row([_cell(cell, spans) for cell in row.cells]), row_box, None))
            if i == 0:
                lines.append(Line(_rule(table.col_count), row_box, None))
        out.append((clip_box(tuple(table.bbox), page_box), Paragraph(tuple(lines), "table")))
    return out


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _cell(cell: tuple[float, float, float, float] | None, spans: list[tuple[Any, str]]) -> str:
    if cell is None:  # a merged cell's continuation
        return ""
    x0, y0, x1, y1 = cell
    inside = [
        (bbox[1], bbox[0], text)
        for bbox, text in spans
        if x0 <= (bbox[0] + bbox[2]) / 2 <= x1 and y0 <= (bbox[1] + bbox[3]) / 2 <= y1
    ]
    return " ".join(" ".join(text for _, _, text in sorted(inside)).split()).replace("|", "\\|")


def _rule(columns: int) -> str:
    return "|" + " --- |" * columns
