"""Page rendering, bad input with a .pdf name, parse() and the public surface."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest

import ragtt.ingest
from ragtt.errors import IngestError, NotFoundError
from ragtt.ingest import parse, pixel_box, render_page
from ragtt.ingest.types import Region

from .conftest import pdf_dir


def test_render_page_is_a_cached_png_of_the_displayed_page() -> None:
    path = pdf_dir() / "pdfjs__rotation.pdf"
    png = render_page(path, 2)
    assert png.startswith(b"\x89PNG") and render_page(path, 2) is png
    pix = pymupdf.Pixmap(png)
    assert (pix.width, pix.height) == (1188, 918)  # landscape: /Rotate 90 applied, zoom 1.5
    with pytest.raises(NotFoundError, match="numbered 1 to 2"):
        render_page(path, 3)


def test_pixel_box_puts_a_region_of_a_rotated_page_on_its_image(tmp_path: Path) -> None:
    doc = parse(pdf_dir() / "pdfjs__rotation.pdf")
    block = next(b for b in doc.blocks if b.page == 2)
    x0, y0, x1, y1 = pixel_box(pdf_dir() / "pdfjs__rotation.pdf", Region(2, *block.bbox))
    assert 0 <= x0 < x1 <= 1188 and 0 <= y0 < y1 <= 918
    assert x1 - x0 > y1 - y0  # the upward-running line is horizontal once displayed


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty file"),
        (b"hello, I am a text file", "not a PDF"),
        (b"%PDF-1.7\n" + b"\x00garbage" * 50, "corrupt PDF"),
    ],
)
def test_bad_bytes_with_a_pdf_name_fail_with_a_reason(tmp_path: Path, data: bytes, reason: str) -> None:
    path = tmp_path / "bad.pdf"
    path.write_bytes(data)
    with pytest.raises(IngestError, match=reason):
        parse(path)


def test_encrypted_pdf_fails_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "locked.pdf"
    with pymupdf.open(pdf_dir() / "pypdf__crazyones.pdf") as doc:
        doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="secret", owner_pw="owner")
    with pytest.raises(IngestError, match=r"password.*decrypt"):
        parse(path)


def test_parse_reports_missing_and_unsupported_files(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="cannot be read"):
        parse(tmp_path / "absent.pdf")
    (tmp_path / "x.docx").write_bytes(b"x")
    with pytest.raises(IngestError, match=r"no loader for '\.docx'.*\.pdf"):
        parse(tmp_path / "x.docx")


def test_public_names_are_pinned() -> None:
    assert ragtt.ingest.__all__ == [
        "IngestOptions",
        "LocatedChunks",
        "RegionIndex",
        "RouteThresholds",
        "build_chunks",
        "locate_chunks",
        "parse",
        "pixel_box",
        "render_page",
    ]
    for name in ragtt.ingest.__all__:
        assert getattr(ragtt.ingest, name) is not None


def test_importing_ingest_stays_light() -> None:
    code = "import sys, ragtt.ingest; print(sorted(m for m in ('pymupdf', 'fitz', 'litellm') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_loader_registry_finds_the_pdf_loader() -> None:
    from ragtt.ingest.loaders import loader_for
    from ragtt.ingest.pdf import load_pdf

    assert loader_for("Report.PDF") is load_pdf


def test_parse_stays_a_function_whatever_was_imported_first() -> None:
    import importlib

    import ragtt.ingest

    importlib.import_module("ragtt.ingest.parsing")
    assert callable(ragtt.ingest.parse) and ragtt.ingest.parse.__name__ == "parse"
