"""Ruled tables on a text page, written as Markdown tables (opt-in: ``IngestOptions.tables``).

PyMuPDF's ``find_tables`` costs about 0.1 s a page, a hundred times the text layer, so it
only runs when asked. Each row becomes one Markdown line whose Block is the row's box,
which lets the chunker make one chunk per row that still points at its row on the page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragtt.ingest.layout import Line, Paragraph, clip_box

if TYPE_CHECKING:
    import pymupdf

__all__ = ["table_paragraphs"]

Box = tuple[float, float, float, float]


def table_paragraphs(page: pymupdf.Page, page_box: Box) -> list[tuple[Box, Paragraph]]:
    """``(table box, table paragraph)`` for every table PyMuPDF finds on the page."""
    out = []
    for table in page.find_tables().tables:
        rows = table.extract()
        if len(rows) < 2 or table.col_count < 2:
            continue
        box = clip_box(tuple(table.bbox), page_box)
        header_box = clip_box(tuple(table.rows[0].bbox), page_box)
        lines = [Line(_row(rows[0]), header_box, None), Line(_rule(table.col_count), header_box, None)]
        for cells, row in zip(rows[1:], table.rows[1:], strict=False):
            lines.append(Line(_row(cells), clip_box(tuple(row.bbox), page_box), None))
        out.append((box, Paragraph(tuple(lines), "table")))
    return out


def _row(cells: list[str | None]) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _cell(cell: str | None) -> str:
    return " ".join((cell or "").split()).replace("|", "\\|")


def _rule(columns: int) -> str:
    return "|" + " --- |" * columns
