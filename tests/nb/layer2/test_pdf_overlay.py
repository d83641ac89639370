"""PdfOverlay without a browser: regions on the right words, routes, a query's ranks, and
which pages travel in the state (lazily fetched, or all embedded up to the cap)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragtt
from ragtt_nb.pdf_overlay import SIGNALS, PdfOverlay
from ragtt_nb.sample_pdf import SCANNED_PAGE, write_sample_pdf

from .conftest import REAL_PDF


def _words(text: str) -> set[str]:
    return {w.strip(".,;:()[]").lower() for w in text.split() if len(w.strip(".,;:()[]")) > 2}


@pytest.fixture(scope="module")
def sample_pdf(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("sample-pdf")
    pdf = write_sample_pdf(folder / "docs" / "acme-policy.pdf")
    with ragtt.Project.open(folder / "proj", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest(pdf.parent)
        q = proj.query("How long are backups kept?", generate=False)
    return {"path": folder / "proj", "pdf": pdf, "query_id": q.query_id}


@pytest.fixture
def sproj(sample_pdf: dict[str, Any]) -> Any:
    with ragtt.Project.open(sample_pdf["path"], embedder=ragtt.HashEmbedder(), progress=False) as p:
        yield p


def test_regions_cover_their_chunks_words(wproj: ragtt.Project, widget_project: dict[str, Any]) -> None:
    """Every box, mapped back to the page, holds words of its own chunk (a real corpus PDF)."""
    import pymupdf

    pdf = widget_project["docs"] / REAL_PDF
    ov = PdfOverlay(wproj, REAL_PDF, path=pdf)
    d = ov._data
    boxes = np.frombuffer(d["regions"]["box"]["view"], dtype="<f4").reshape(-1, 4)
    pages = np.frombuffer(d["regions"]["page"]["view"], dtype="<i4")
    chunks = np.frombuffer(d["regions"]["chunk"]["view"], dtype="<i4")
    assert len(boxes) >= len(d["chunks"]["ids"]) > 5
    with pymupdf.open(pdf) as doc:
        for box, page, c in zip(boxes, pages, chunks, strict=True):
            rect = pymupdf.Rect(*box) * doc[int(page) - 1].derotation_matrix  # pixels at zoom 1 = points
            inside = _words(doc[int(page) - 1].get_text("text", clip=rect))
            if not inside:
                continue
            share = len(inside & _words(d["chunks"]["text"][c])) / len(inside)
            assert share >= 0.6, f"page {page} box {box.tolist()} holds words of another chunk"


def test_routes_show_the_scanned_page_went_to_ocr(sproj: ragtt.Project, sample_pdf: dict[str, Any]) -> None:
    ov = PdfOverlay(sproj, "acme-policy.pdf", path=sample_pdf["pdf"], query_id=sample_pdf["query_id"])
    routes = {r["page"]: r for r in ov._data["routes"]}
    assert routes[SCANNED_PAGE]["engine"] == "ocr" and routes[1]["engine"] == "text"
    assert list(routes[1]["signals"]) == list(SIGNALS)
    assert "no text layer" in routes[SCANNED_PAGE]["reason"]
    # the OCR'd page has regions too; the view opens on the page of the query's best chunk here
    ranks = np.frombuffer(ov._data["chunks"]["rank"]["view"], dtype="<i4")
    best = ov._data["chunks"]["ids"][int(np.argmax(ranks == 1))]
    assert best in ov.chunks_on(ov.page) and ov.chunks_on(SCANNED_PAGE)
    retrieved = [c["chunk_id"] for c in sproj.replay(sample_pdf["query_id"]).to_dict()["chunks"]]
    ids = ov._data["chunks"]["ids"]
    assert [ids[i] for i in np.argsort(np.where(ranks > 0, ranks, 999))[: int((ranks > 0).sum())]] == [
        c for c in retrieved if c in ids
    ]
    text = " ".join(ov._data["chunks"]["text"][ids.index(c)] for c in ov.chunks_on(SCANNED_PAGE))
    assert "35 days" in text


def test_pages_are_lazy_live_and_embedded_for_reports(
    sproj: ragtt.Project, sample_pdf: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAGTT_REPORT", raising=False)
    lazy = PdfOverlay(sproj, "acme-policy.pdf", path=sample_pdf["pdf"], page=2)
    assert lazy.embedded_pages == [2]
    sent: list[tuple[Any, Any]] = []
    monkeypatch.setattr(lazy, "send", lambda content, buffers=None: sent.append((content, buffers)))
    lazy._on_request(lazy, {"type": "page", "page": 3}, [])  # what the view sends on turning to page 3
    lazy._on_request(lazy, {"type": "page", "page": 9}, [])
    assert sent[0][0] == {"type": "page", "page": 3} and bytes(sent[0][1][0]).startswith(b"\x89PNG")
    assert "error" in sent[1][0]
    monkeypatch.setenv("RAGTT_REPORT", "1")
    report = PdfOverlay(sproj, "acme-policy.pdf", path=sample_pdf["pdf"])
    assert report.embedded_pages == [1, 2, 3] and report._data["left_out"] == []
    one_page = len(bytes(report._pages["1"]["png"]))
    capped = PdfOverlay(sproj, "acme-policy.pdf", path=sample_pdf["pdf"], page=2, embed="all", embed_limit=one_page + 1)
    assert 2 in capped.embedded_pages and capped._data["left_out"] and capped._data["embed_limit"] == one_page + 1


def test_selection_and_page_are_observable(sproj: ragtt.Project, sample_pdf: dict[str, Any]) -> None:
    ov = PdfOverlay(sproj, "acme-policy.pdf", path=sample_pdf["pdf"], page=1)
    seen: list[Any] = []
    ov.observe(lambda change: seen.append((change["name"], change["new"])), names=["selected", "page"])
    ov.page = 2
    ov.selected = ov.chunks_on(2)[:1]
    assert seen == [("page", 2), ("selected", ov.chunks_on(2)[:1])]
    with pytest.raises(Exception, match="page must be 1 to 3"):
        ov.page = 4


def test_finding_the_file(sproj: ragtt.Project, sample_pdf: dict[str, Any], tmp_path: Path) -> None:
    assert PdfOverlay(sproj, "acme-policy.pdf").path == sample_pdf["pdf"]  # the path the ingest recorded
    with ragtt.Project.open(tmp_path / "texts", embedder=ragtt.HashEmbedder(), progress=False) as texts:
        texts.ingest_texts({"notes.md": "# Notes\n\nNo file behind this source."})
        with pytest.raises(ValueError, match="path="):
            PdfOverlay(texts, "notes.md")
    other = write_sample_pdf(tmp_path / "x.pdf")
    other.write_bytes(other.read_bytes() + b"\n%changed\n")
    with pytest.raises(ValueError, match="not the file ingested"):
        PdfOverlay(sproj, "acme-policy.pdf", path=other)
    with pytest.raises(FileNotFoundError):
        PdfOverlay(sproj, "acme-policy.pdf", path=tmp_path / "missing.pdf")
    with pytest.raises(ValueError, match="embed must be"):
        PdfOverlay(sproj, "acme-policy.pdf", path=sample_pdf["pdf"], embed="some")  # type: ignore[arg-type]
