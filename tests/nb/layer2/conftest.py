"""Fixtures for notebook layer II: projects for the drift scatter and the PDF overlay, and an
exported report holding both widgets. Browser fixtures come from tests/nb/conftest.py, the
parent conftest (one Chromium for the whole session,
every non-file request aborted)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import numpy as np
import pytest
from playwright.sync_api import expect

import ragtt
from ragtt.demo import sample_releases
from tests.conftest import corpus
from tests.nb.conftest import Offline, export

REAL_PDF = "docling__normal_4pages.pdf"
PAYLOADS = (
    "<script>window.__ran.push('script')</script>",
    "<img src=x onerror=\"window.__ran.push('img')\">",
    "<a href=\"javascript:window.__ran.push('href')\">click</a>",
)
QUESTION = "How many days do I have to ask for a refund?"


class Salted(ragtt.HashEmbedder):
    """A different embedder of the same size: the hash embedder's vectors with their
    dimensions shuffled and their signs flipped (a seeded permutation), so neighbours stay
    neighbours but the space is another one, as with another model."""

    def __init__(self, dim: int = 256) -> None:
        super().__init__(dim)
        self.model_id = f"salted-hash-v1-{dim}"
        rng = np.random.default_rng(dim)
        self._order, self._signs = rng.permutation(dim), rng.choice(np.array([-1.0, 1.0], np.float32), dim)

    def embed(self, texts: list[str]) -> np.ndarray:
        return (super().embed(texts)[:, self._order] * self._signs).astype(np.float32)


def evil_pdf(path: Path) -> Path:
    """A one-page PDF whose text layer carries the injection payloads."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    y = 80.0
    for line in ("Injection test page", *PAYLOADS):
        page.insert_text((60, y), line, fontsize=11)
        y += 40
    doc.save(path)
    doc.close()
    return path


@pytest.fixture(scope="session")
def widget_project(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A corpus PDF, an injection PDF and Markdown with payloads (v_a), then the sample's last
    release added (v_b); one query."""
    root = tmp_path_factory.mktemp("nb2")
    docs = root / "docs"
    docs.mkdir()
    shutil.copy(corpus("pdfs", REAL_PDF), docs / REAL_PDF)
    evil_pdf(docs / "evil.pdf")
    (docs / "evil.md").write_text("# Payloads\n\n" + "\n\n".join(PAYLOADS) + "\n", encoding="utf-8")
    with ragtt.Project.open(root / "proj", embedder=ragtt.HashEmbedder(), progress=False) as p:
        p.ingest(docs)
        v_a = p.version
        query = p.query("table of contents and layout", generate=False)
        p.ingest(list(sample_releases()[-1].iterdir()))
        return {"path": root / "proj", "docs": docs, "v_a": v_a, "v_b": p.version, "query_id": query.query_id}


@pytest.fixture
def wproj(widget_project: dict[str, Any]) -> Iterator[ragtt.Project]:
    with ragtt.Project.open(widget_project["path"], embedder=ragtt.HashEmbedder(), progress=False) as p:
        yield p


@pytest.fixture(scope="session")
def widgets_report(widget_project: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A notebook showing a DriftScatter, a PdfOverlay with a query and one over the injection
    PDF, executed (RAGTT_REPORT=1: every page embedded) and exported."""
    w = widget_project
    cells = [
        "import ragtt\nfrom ragtt_nb.drift_scatter import DriftScatter\nfrom ragtt_nb.pdf_overlay import PdfOverlay\n"
        f"proj = ragtt.Project.open({str(w['path'])!r}, embedder=ragtt.HashEmbedder(), progress=False)",
        f"DriftScatter(proj, {w['v_a']}, {w['v_b']}, query={w['query_id']!r})",
        f"PdfOverlay(proj, {REAL_PDF!r}, path={str(w['docs'] / REAL_PDF)!r}, query_id={w['query_id']!r})",
        f"PdfOverlay(proj, 'evil.pdf', path={str(w['docs'] / 'evil.pdf')!r})",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    folder = tmp_path_factory.mktemp("nb2-report")
    source = folder / "widgets.ipynb"
    nbformat.write(nb, source)
    os.environ["RAGTT_REPORT"] = "1"  # the kernel inherits it
    try:
        return export(source, folder / "widgets.html", execute=True, timeout=300)
    finally:
        os.environ.pop("RAGTT_REPORT", None)


@pytest.fixture
def report_page(widgets_report: Path, offline: Offline) -> Any:
    offline.page.add_init_script("window.__ran = []; window.alert = (m) => window.__ran.push(String(m));")
    page = offline.open(widgets_report)
    page.wait_for_selector(".ragtt-drift-scatter[data-painted]", timeout=30_000)
    # both overlays: the report's views render one after another, asynchronously
    expect(page.locator(".ragtt-pdf-overlay[data-page]")).to_have_count(2, timeout=30_000)
    return page
