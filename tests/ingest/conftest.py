"""The PDF corpus, parsed once per test session (OCR costs seconds a page)."""

from __future__ import annotations

import json
import multiprocessing
import shutil
from concurrent.futures import ProcessPoolExecutor
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


def _parse(path: Path) -> ParsedDocument | IngestError:
    try:
        return parse(path)
    except IngestError as exc:
        return exc


@pytest.fixture(scope="session")
def parsed() -> dict[str, ParsedDocument | IngestError]:
    """Every corpus PDF through ``parse`` with default options; a failure is kept, not
    raised, so one bad file cannot hide what the others did. Two worker processes parse a
    file each at a time: one after the other, the corpus took 70 s of one core."""
    require_tesseract()
    paths = sorted(pdf_dir().glob("*.pdf"))
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
        return dict(zip((p.name for p in paths), pool.map(_parse, paths), strict=True))


@pytest.fixture(scope="session")
def docs(parsed: dict[str, ParsedDocument | IngestError]) -> dict[str, ParsedDocument]:
    return {name: doc for name, doc in parsed.items() if isinstance(doc, ParsedDocument)}
