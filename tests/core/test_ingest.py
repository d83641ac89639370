from __future__ import annotations

from pathlib import Path

import pytest

import ragtt

REPORT_FIELDS = {
    "documents_added",
    "documents_updated",
    "documents_unchanged",
    "failed",
    "chunks_added",
    "chunks_removed",
    "chunks_kept",
    "embeddings_computed",
    "embeddings_reused",
    "index_version_before",
    "index_version_after",
    "elapsed_s",
}


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def long_text(topic: str, n: int = 12) -> str:
    return "\n\n".join(f"{topic} paragraph {i}: " + " ".join(f"{topic}{i}word{j}" for j in range(18)) for i in range(n))


def test_folder_and_file_sources_and_report_fields(project: ragtt.Project, tmp_path: Path) -> None:
    docs = write(tmp_path / "docs", {"a.md": long_text("alpha"), "sub/b.txt": "beta text", "c.rst": "gamma"})
    single = write(tmp_path / "one", {"policy.md": "policy text"}) / "policy.md"
    report = project.ingest([docs, single])
    assert {f for f in REPORT_FIELDS} <= set(report.to_dict())
    assert sorted(report.documents_added) == ["a.md", "c.rst", "policy.md", "sub/b.txt"]
    assert report.failed == [] and report.chunks_added == report.embeddings_computed > 4
    assert report.index_version_after == report.index_version_before + 1
    assert set(project.chunks()["source"].to_list()) == {"a.md", "c.rst", "policy.md", "sub/b.txt"}


def test_one_bad_file_never_stops_the_batch(project: ragtt.Project, tmp_path: Path) -> None:
    docs = write(tmp_path / "docs", {"good.md": "fine text", "bad.txt": b"\xff\xfe\x00binary", "empty.md": ""})
    report = project.ingest([docs, tmp_path / "missing.md", write(tmp_path, {"x.docx": "?"}) / "x.docx"])
    reasons = dict(report.failed)
    assert report.documents_added == ["good.md"]
    assert "not UTF-8" in reasons["bad.txt"] and "empty" in reasons["empty.md"]
    assert "no such file" in reasons[str(tmp_path / "missing.md")]
    assert "unsupported file type '.docx'" in reasons["x.docx"]


def test_reingest_replaces_chunks_and_keeps_ids_of_unchanged_passages(project: ragtt.Project) -> None:
    text = long_text("alpha")
    project.ingest_texts({"a.md": text})
    before = project.chunks(source="a.md")
    changed = text.replace("alpha paragraph 5:", "alpha paragraph FIVE:")
    report = project.ingest_texts({"a.md": changed})
    after = project.chunks(source="a.md")
    assert report.documents_updated == ["a.md"] and report.chunks_added >= 1 and report.chunks_kept >= 1
    assert report.embeddings_computed == report.chunks_added
    kept = set(before["chunk_id"]) & set(after["chunk_id"])
    assert len(kept) == report.chunks_kept
    assert not any("paragraph 5:" in t for t in after["text"])  # no chunk of the old text survives
    doc = project.document("a.md")
    assert doc.text == changed
    for row in after.iter_rows(named=True):
        assert doc.text[row["char_start"] : row["char_end"]] == row["text"]


def test_unchanged_document_writes_nothing_and_embeds_nothing(project: ragtt.Project) -> None:
    project.ingest_texts({"a.md": long_text("alpha"), "b.md": "beta"})
    version = project.version
    report = project.ingest_texts({"a.md": long_text("alpha"), "b.md": "beta"})
    assert report.documents_unchanged == ["a.md", "b.md"]
    assert report.embeddings_computed == 0 and project.version == version == report.index_version_after


def test_many_documents_make_one_version(project: ragtt.Project) -> None:
    before = project.version
    report = project.ingest_texts({f"doc{i}.md": f"document number {i} about topic {i % 7}" for i in range(60)})
    assert len(report.documents_added) == 60 and project.version == before + 1


def test_in_memory_text_named_like_a_pdf_is_text(project: ragtt.Project) -> None:
    # what LangChain's PDF loaders hand over: the page text, under the PDF's name
    report = project.ingest_texts({"policy.pdf": "Refunds are issued within 30 days of purchase."})
    assert report.ok and report.documents_added == ["policy.pdf"]
    [chunk] = project.query("refunds", generate=False).chunks
    assert chunk.source == "policy.pdf" and chunk.text.startswith("Refunds are issued")


def test_repeated_passages_get_distinct_stable_ids(project: ragtt.Project) -> None:
    para = "The same boilerplate paragraph repeated in the document, long enough to be its own chunk. " * 3
    text = "\n\n".join([para, "unique middle part " * 10, para])
    project.config = project.config.replace(chunk_size=300, chunk_overlap=0)
    project.ingest_texts({"a.md": text})
    ids = project.chunks(source="a.md")["chunk_id"].to_list()
    assert len(ids) == len(set(ids))


def test_document_events_and_remove(project: ragtt.Project) -> None:
    project.ingest_texts({"a.md": "alpha", "b.md": "beta"})
    events = project.events.query(types="document.ingested")
    assert {e.payload["source"] for e in events} == {"a.md", "b.md"}
    payload = events[0].payload
    assert {"doc_id", "source", "content_hash", "chunk_ids_added", "chunk_ids_removed"} <= set(payload)
    assert events[0].index_version == project.version
    version = project.remove("a.md")
    assert version == project.version and set(project.chunks()["source"]) == {"b.md"}
    removed = project.events.last("document.removed")
    assert removed is not None and removed.payload["source"] == "a.md"
    assert project.remove("a.md") == version  # removed already: nothing to do, no new version
    with pytest.raises(ragtt.NotFoundError, match="never in the index"):
        project.remove("never-there.md")


def test_folder_ingest_mirrors_the_folder_but_file_ingest_only_adds(project: ragtt.Project, tmp_path: Path) -> None:
    v1 = write(tmp_path / "v1", {"keep.md": "keep", "gone.md": "gone"})
    v2 = write(tmp_path / "v2", {"keep.md": "keep"})
    project.ingest(v1)
    extra = write(tmp_path / "extra", {"note.md": "a note"}) / "note.md"
    project.ingest(extra)
    assert "note.md" in set(project.chunks()["source"])
    report = project.ingest(v2)
    assert sorted(report.documents_removed) == ["gone.md", "note.md"]
    assert set(project.chunks()["source"]) == {"keep.md"}
    report = project.ingest(v1, prune=False)
    assert report.documents_added == ["gone.md"] and report.documents_removed == []


def test_progress_bar_on_big_ingests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with ragtt.Project.open(tmp_path / "p", embedder=ragtt.HashEmbedder(), progress=True) as proj:
        proj.ingest_texts({f"d{i}.md": f"text {i}" for i in range(20)})
    assert "ragtt" in capsys.readouterr().err
