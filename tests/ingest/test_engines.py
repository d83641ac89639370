"""Engine configuration fails fast by name; absent engines re-route; never silently."""

from __future__ import annotations

import pymupdf
import pytest

from ragtt.errors import ConfigError
from ragtt.ingest import parse
from ragtt.ingest.engines import resolve_engines, run_ocr
from ragtt.ingest.types import IngestOptions

from .conftest import pdf_dir, require_tesseract


def test_configured_engine_that_cannot_run_fails_fast_by_name() -> None:
    with pytest.raises(ConfigError, match=r"'ocr'.*klingon"):
        resolve_engines(IngestOptions(engines=("ocr",), ocr_languages="klingon"))
    with pytest.raises(ConfigError, match=r"'vision'.*vision_model"):
        resolve_engines(IngestOptions(engines=("vision",)))
    with pytest.raises(ConfigError, match="unknown PDF engine"):
        resolve_engines(IngestOptions(engines=("magic",)))
    with pytest.raises(ConfigError, match="'ocr'"):
        parse(pdf_dir() / "pypdf__crazyones.pdf", IngestOptions(engines=("ocr",), ocr_languages="klingon"))


def test_automatic_mode_skips_an_absent_engine_and_says_why() -> None:
    usable, absent = resolve_engines(IngestOptions(ocr_languages="klingon"))
    assert usable == () and set(absent) == {"ocr", "vision"}


def test_page_no_engine_can_reread_keeps_text_layer_and_warns_per_page() -> None:
    doc = parse(pdf_dir() / "ocrmypdf__cardinal.pdf", IngestOptions(engines=()))
    assert [r.engine for r in doc.routes] == ["text"] * 4
    assert all("kept the text layer" in r.reason for r in doc.routes)
    assert [w.split(": ")[0] for w in doc.warnings] == [
        f"{pdf_dir() / 'ocrmypdf__cardinal.pdf'} page {n}" for n in range(1, 5)
    ]
    assert all("NOT RE-READ" in w for w in doc.warnings)


def test_clean_pages_never_reach_a_slower_engine() -> None:
    options = IngestOptions(engines=("vision",), vision_model="gpt-4o", vision_kwargs={"mock_response": "x"})
    doc = parse(pdf_dir() / "udhr__udhr_Latn.VIE_Serif_12.pdf", options)
    assert {r.engine for r in doc.routes} == {"text"}


def test_vision_engine_reads_the_page_image_into_markdown() -> None:
    answer = "# LinnSequencer\n\nA MIDI sequencer.\n\n| a | b |\n| --- | --- |\n| 1 | 2 |"
    options = IngestOptions(engines=("vision",), vision_model="gpt-4o", vision_kwargs={"mock_response": answer})
    doc = parse(pdf_dir() / "ocrmypdf__linn.pdf", options)
    assert doc.routes[0].engine == "vision"
    assert doc.markdown == answer
    assert {b.kind for b in doc.blocks} == {"heading", "text", "table"}
    assert all(b.bbox == (0.0, 0.0, 612.0, 792.0) and b.dir is None for b in doc.blocks)


def test_a_failing_engine_reroutes_the_page_to_the_next() -> None:
    require_tesseract()
    options = IngestOptions(
        engines=("vision", "ocr"), vision_model="gpt-4o", vision_kwargs={"mock_response": Exception("quota")}
    )
    doc = parse(pdf_dir() / "docling__ocr_test.pdf", options)
    assert doc.routes[0].engine == "ocr"
    assert "Docling bundles" in doc.markdown
    assert any("vision engine failed" in w and "re-routed" in w for w in doc.warnings)


def test_ocr_boxes_land_where_the_text_layer_puts_the_text_on_a_rotated_page() -> None:
    require_tesseract()
    with pymupdf.open(pdf_dir() / "pdfjs__rotation.pdf") as doc:
        page = doc[1]
        assert page.rotation == 90
        truth = [b["bbox"] for b in page.get_text("dict")["blocks"] if b["type"] == 0]
        result = run_ocr(page, "eng", dpi=200)
        lines = [pymupdf.Rect(line["bbox"]) * result.to_page for b in result.page_dict["blocks"] for line in b["lines"]]
    assert lines
    for line in lines:  # every OCR line overlaps a text-layer block in the unrotated frame
        assert any((line & pymupdf.Rect(t)).get_area() > 0.5 * line.get_area() for t in truth), line
