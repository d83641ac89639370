"""Acceptance on the real corpus: routes, extracted text, charspans, regions, twins, OCR."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

import pymupdf
import pytest

from ragtt.errors import IngestError
from ragtt.ingest import build_chunks
from ragtt.ingest.chunk import STRATEGIES
from ragtt.ingest.types import PageRoute, ParsedDocument

from .conftest import expectations, pdf_dir


def _squash(text: str) -> str:
    return " ".join(text.split())


def test_every_page_is_routed_as_expected(docs: dict[str, ParsedDocument]) -> None:
    wrong = []
    checked = 0
    for name, spec in expectations().items():
        if "route" not in spec:
            continue
        doc = docs[name]
        assert [r.page for r in doc.routes] == list(range(1, len(doc.routes) + 1)), name
        for route in doc.routes:
            want = spec["route"].get(str(route.page), spec["route"].get("*"))
            if want == "any":
                continue
            checked += 1
            if (want == "text") != (route.engine == "text"):
                wrong.append(f"{name} p{route.page}: want {want}, got {route.engine} ({route.reason})")
    assert not wrong, "\n".join(wrong)
    assert checked >= 90


def test_scanned_pages_are_read_by_ocr_not_left_empty(docs: dict[str, ParsedDocument]) -> None:
    doc = docs["ocrmypdf__c02-22.pdf"]
    assert doc.routes[0].engine == "ocr"
    assert len(doc.markdown) > 500
    assert {b.kind for b in doc.blocks} == {"ocr"}


def test_expected_strings_are_extracted(docs: dict[str, ParsedDocument]) -> None:
    missing = []
    for name, spec in expectations().items():
        if name not in docs:
            continue
        md = docs[name].markdown
        contains = spec.get("text_contains", [])
        for text in contains.values() if isinstance(contains, dict) else contains:
            if text not in md:
                missing.append(f"{name}: {text!r}")
        for text in spec.get("text_contains_nfkc", []):
            if text not in unicodedata.normalize("NFKC", md):
                missing.append(f"{name} (NFKC): {text!r}")
        for text in spec.get("text_contains_nows", []):
            if text not in re.sub(r"\s+", "", md):
                missing.append(f"{name} (no whitespace): {text!r}")
        for text in spec.get("reading_order_contains", {}).values():
            if text not in _squash(md):
                missing.append(f"{name} (reading order): {text!r}")
    assert not missing, "\n".join(missing)


def test_rotated_scans_are_turned_upright_before_ocr(docs: dict[str, ParsedDocument]) -> None:
    for name in [
        "docling__ocr_test_rotated_90.pdf",
        "docling__ocr_test_rotated_180.pdf",
        "docling__ocr_test_rotated_270.pdf",
    ]:
        assert "Docling bundles PDF document conversion" in _squash(docs[name].markdown), name


def test_multi_column_page_reads_column_by_column(docs: dict[str, ParsedDocument]) -> None:
    doc = docs["pdfplumber__federal-register-2020-17221.pdf"]
    page2 = [b for b in doc.blocks if b.page == 2]
    # Between running head and footer, each column (left x < 220, middle < 395, right)
    # is read entirely before the next.
    body = [b for b in page2 if 55 < b.bbox[1] < 745]
    columns = [0 if b.bbox[2] < 220 else 1 if b.bbox[2] < 395 else 2 for b in body]
    assert columns == sorted(columns)


def test_empty_file_fails_alone_with_a_clear_reason(parsed: dict[str, ParsedDocument | IngestError]) -> None:
    failures = {name: doc for name, doc in parsed.items() if isinstance(doc, IngestError)}
    assert list(failures) == ["pdfplumber__empty.pdf"]
    assert "empty file (0 bytes)" in str(failures["pdfplumber__empty.pdf"])
    assert len(parsed) - len(failures) == 45


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_chunk_is_an_exact_span_with_regions_inside_its_page(
    docs: dict[str, ParsedDocument], strategy: str
) -> None:
    for name, doc in docs.items():
        with pymupdf.open(pdf_dir() / name) as pdf:
            sizes = [(p.cropbox.width, p.cropbox.height) for p in pdf]
        for chunk in build_chunks(doc.markdown, doc.blocks, max_size=500, overlap=80, strategy=strategy):
            assert doc.markdown[chunk.char_start : chunk.char_end] == chunk.text, name
            assert chunk.regions, f"{name}: chunk without a region: {chunk.text[:60]!r}"
            for region in chunk.regions:
                width, height = sizes[region.page - 1]
                assert 0 <= region.x0 <= region.x1 <= width + 1e-6, (name, region)
                assert 0 <= region.y0 <= region.y1 <= height + 1e-6, (name, region)


def test_blocks_are_exact_in_reading_order_and_on_their_page(docs: dict[str, ParsedDocument]) -> None:
    for name, doc in docs.items():
        ends = [b.char_end for b in doc.blocks]
        starts = [b.char_start for b in doc.blocks]
        assert starts == sorted(starts) and all(s < e for s, e in zip(starts, ends, strict=True)), name
        assert [b.page for b in doc.blocks] == sorted(b.page for b in doc.blocks), name
        assert {b.kind for b in doc.blocks} <= {"text", "heading", "list", "table", "ocr"}


def test_rotated_twin_gives_the_same_chunks(docs: dict[str, ParsedDocument]) -> None:
    plain = docs["pdfplumber__nics-background-checks-2015-11.pdf"]
    turned = docs["pdfplumber__nics-background-checks-2015-11-rotated.pdf"]
    assert turned.routes[0].signals["rotation"] == 90
    for strategy in STRATEGIES:
        a = [c.text for c in build_chunks(plain.markdown, plain.blocks, strategy=strategy)]
        b = [c.text for c in build_chunks(turned.markdown, turned.blocks, strategy=strategy)]
        assert a == b and len(a) > 3


def test_rotated_page_boxes_follow_the_text_direction(docs: dict[str, ParsedDocument]) -> None:
    doc = docs["pdfjs__rotation.pdf"]
    second = [b for b in doc.blocks if b.page == 2]
    assert second and all(b.dir == (0.0, -1.0) for b in second)
    assert all(b.bbox[3] - b.bbox[1] > b.bbox[2] - b.bbox[0] for b in second)  # tall: text runs up
    assert doc.markdown.index("This is my second page") < doc.markdown.index("Second line here")


def test_ocr_of_linn_shares_most_words_with_ground_truth(docs: dict[str, ParsedDocument]) -> None:
    def words(text: str) -> Counter[str]:
        return Counter(re.findall(r"\w+", text.lower()))

    truth = words((pdf_dir() / "ocrmypdf__linn.txt").read_text(encoding="utf-8"))
    got = words(docs["ocrmypdf__linn.pdf"].markdown)
    shared = sum((truth & got).values()) / sum(truth.values())
    assert shared >= 0.6, f"only {shared:.0%} of linn.txt's words were read"


def test_routes_round_trip_and_carry_their_signals(docs: dict[str, ParsedDocument]) -> None:
    for doc in docs.values():
        for route in doc.routes:
            assert PageRoute.from_dict(route.to_dict()) == route
            assert {"chars", "control_ratio", "script_validity", "mojibake", "image_coverage"} <= set(route.signals)
            assert route.reason


def test_a_clean_corpus_parse_has_no_not_reread_warnings(docs: dict[str, ParsedDocument]) -> None:
    assert not [w for doc in docs.values() for w in doc.warnings if "NOT RE-READ" in w]
