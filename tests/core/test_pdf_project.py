"""PDFs through the whole project: routes persisted, regions on every retrieved chunk."""

from __future__ import annotations

import ragtt
from tests.conftest import corpus


def test_pdf_chunks_carry_regions_and_documents_carry_routes(project: ragtt.Project) -> None:
    pdfs = corpus("pdfs")
    project.ingest_texts({"notes.md": "A note about tables and layout."})
    before = project.chunks()
    report = project.ingest(
        [pdfs / "docling__normal_4pages.pdf", pdfs / "pdfplumber__empty.pdf", pdfs / "docling__multi_page.pdf"]
    )
    assert dict(report.failed).keys() == {"pdfplumber__empty.pdf"}
    assert "empty" in dict(report.failed)["pdfplumber__empty.pdf"]
    assert sorted(report.documents_added) == ["docling__multi_page.pdf", "docling__normal_4pages.pdf"]
    assert before.filter(before["source"] == "notes.md").equals(
        project.chunks()
        .filter(project.chunks()["source"] == "notes.md")
        .drop("index_version")
        .with_columns(before["index_version"])
    )
    doc = project.document("docling__normal_4pages.pdf")
    assert [r.page for r in doc.routes] == [1, 2, 3, 4] and {r.engine for r in doc.routes} == {"text"}
    event = next(
        e
        for e in project.events.query(types="document.ingested")
        if e.payload["source"] == "docling__normal_4pages.pdf"
    )
    assert [r["page"] for r in event.payload["routes"]] == [1, 2, 3, 4]
    res = project.query("layout analysis of tables", top_k=6, generate=False)
    pdf_chunks = [c for c in res.chunks if c.source.endswith(".pdf")]
    assert pdf_chunks
    for chunk in pdf_chunks:
        assert chunk.regions and all(r.page >= 1 and r.x1 > r.x0 and r.y1 > r.y0 for r in chunk.regions)
        text = project.document(chunk.source).text
        assert text[chunk.charspan[0] : chunk.charspan[1]] == chunk.text
    frame = project.chunks(source="docling__normal_4pages.pdf")
    assert frame["regions"].list.len().min() >= 1
    assert project.replay(res.query_id).matches_original
