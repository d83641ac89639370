"""A small PDF made for the demo notebooks: two pages with a text layer and one scanned page.

The scanned page is only a picture of rendered text (no text layer), so ragtt's router
must send it to OCR. It is generated on demand (nothing binary lives in the repository):

>>> from ragtt_nb.sample_pdf import write_sample_pdf
>>> path = write_sample_pdf("/tmp/acme-policy.pdf")  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["PAGES", "SCANNED_PAGE", "write_sample_pdf"]

PAGES: list[tuple[str, list[str]]] = [
    (
        "Acme Cloud: Refund and Billing Policy",
        [
            "Refunds. Customers may ask for a full refund within 30 days of purchase. After 30 days, "
            "refunds are prorated to the unused part of the billing period.",
            "How to ask. Open a ticket with the billing team and quote your invoice number. Refunds are "
            "paid to the original payment method within 10 business days.",
            "Annual plans. An annual plan cancelled in its first 60 days is refunded in full; later, "
            "the remaining whole months are refunded.",
        ],
    ),
    (
        "Service Levels",
        [
            "Availability. The Pro plan guarantees 99.9 percent monthly uptime. The Enterprise plan "
            "guarantees 99.95 percent and a named support engineer.",
            "Credits. When availability falls below the guarantee, the account is credited 10 percent of "
            "the monthly fee for each full hour of downtime, up to half the fee.",
            "Support hours. Standard support answers within one business day; priority support answers "
            "within four hours, every day of the year.",
        ],
    ),
    (
        "Data Retention (scanned appendix)",
        [
            "Backups are kept for 35 days.",
            "Deleted projects are purged after 14 days.",
            "Audit logs are kept for one year.",
        ],
    ),
]
SCANNED_PAGE = 3
"""The page that is only an image (pages numbered from 1)."""


def write_sample_pdf(path: str | Path) -> Path:
    """Write the sample PDF to ``path`` (overwriting it) and return the path."""
    import pymupdf

    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = pymupdf.open()
    for number, (title, paragraphs) in enumerate(PAGES, start=1):
        page = doc.new_page(width=595, height=842)  # A4 in points
        if number == SCANNED_PAGE:
            page.insert_image(page.rect, stream=_scan(title, paragraphs))
            continue
        _write(page, title, paragraphs)
    doc.set_metadata({"title": "Acme Cloud policy (ragtt sample)", "producer": "ragtt_nb.sample_pdf"})
    doc.save(out, garbage=3, deflate=True)
    doc.close()
    return out


def _write(page: object, title: str, paragraphs: list[str]) -> None:
    import pymupdf

    y = 72.0
    page.insert_text((72, y), title, fontsize=18, fontname="hebo")  # type: ignore[attr-defined]
    y += 30
    for text in paragraphs:
        box = pymupdf.Rect(72, y, 523, y + 90)
        page.insert_textbox(box, text, fontsize=11, fontname="helv")  # type: ignore[attr-defined]
        y += 100


def _scan(title: str, paragraphs: list[str]) -> bytes:
    """A 150 dpi grayscale picture of a text page, as a scanner would produce it."""
    import pymupdf

    src = pymupdf.open()
    page = src.new_page(width=595, height=842)
    y = 90.0
    page.insert_text((72, y), title, fontsize=20, fontname="hebo")
    for text in paragraphs:
        y += 40
        page.insert_text((72, y), text, fontsize=14, fontname="helv")
    pix = page.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY)
    png = bytes(pix.tobytes("png"))
    src.close()
    return png
