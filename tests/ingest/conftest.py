"""The PDF corpus, parsed once per test session (OCR costs seconds a page)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ragtt.errors import IngestError
from ragtt.ingest import parse
from ragtt.ingest.types import ParsedDocument
from tests.conftest import corpus


def pdf_dir() -> Path:
    return corpus("pdfs")


def expectations() -> dict[str, Any]:
    return json.loads((pdf_dir() / "expectations.json").read_text(encoding="utf-8"))


def require_tesseract() -> None:
    if shutil.which("tesseract") is None:
        pytest.fail("Tesseract is required: apt-get install tesseract-ocr tesseract-ocr-eng (./dev test does)")


@pytest.fixture(scope="session")
def parsed() -> dict[str, ParsedDocument | IngestError]:
    """Every corpus PDF through ``parse`` with default options; a failure is kept, not
    raised, so one bad file cannot hide what the others did."""
    require_tesseract()
    out: dict[str, ParsedDocument | IngestError] = {}
    for path in sorted(pdf_dir().glob("*.pdf")):
        try:
            out[path.name] = parse(path)
        except IngestError as exc:
            out[path.name] = exc
    return out


@pytest.fixture(scope="session")
def docs(parsed: dict[str, ParsedDocument | IngestError]) -> dict[str, ParsedDocument]:
    return {name: doc for name, doc in parsed.items() if isinstance(doc, ParsedDocument)}
