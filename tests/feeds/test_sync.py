"""``proj.sync``: LangChain's cleanup modes, each against the bug its issue tracker lists."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.documents import Document as LCDocument
from llama_index.core import Document as LIDocument

import ragtt
from ragtt.errors import ConfigError
from tests.conftest import flask_releases


def sources(proj: ragtt.Project, at: int | None = None) -> list[str]:
    return sorted(proj.chunks(at=at)["source"].unique().to_list())


def flask_pages() -> dict[str, str]:
    root = flask_releases()[7]
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*.rst"))}


def test_a_full_cleanup_deletes_in_the_same_version_as_it_adds(project: ragtt.Project) -> None:
    # LangChain writes the new documents, then deletes the old ones: a reader between the two
    # sees both (the duplicates window). Here both land in one version: no version has both.
    pages = flask_pages()
    first = dict(list(pages.items())[:3])
    project.sync(first.items(), cleanup="full")
    before = project.version
    second = {f"renamed/{k}": v for k, v in list(pages.items())[1:]}
    report = project.sync(second.items(), cleanup="full")
    assert report.index_version_after == before + 1 == project.version
    assert sorted(report.documents_removed) == sorted(first)
    assert sources(project) == sorted(second)
    assert sources(project, before) == sorted(first)
    logged = project.versions()["version"].to_list()
    assert [v for v in logged if before < v <= project.version] == [project.version]


def test_pieces_of_one_source_across_batches_never_delete_each_other(project: ragtt.Project) -> None:
    # langchain #22135: with incremental cleanup, the pieces of one source in the second batch
    # of 100 deleted those written by the first. Here a source is joined before anything is written.
    pieces = [f"Paragraph {i} of the long guide talks about topic {i}." for i in range(350)]
    docs = (LCDocument(page_content=text, metadata={"source": "guide.md"}) for text in pieces)
    report = project.sync(docs, cleanup="incremental")
    assert report.documents_added == ["guide.md"]
    text = project.document("guide.md").text
    assert all(piece in text for piece in (pieces[0], pieces[99], pieces[100], pieces[349]))
    # the same pieces again: unchanged, nothing written
    again = project.sync(
        (LCDocument(page_content=t, metadata={"source": "guide.md"}) for t in pieces), cleanup="scoped_full"
    )
    assert again.documents_unchanged == ["guide.md"] and again.index_version_after == report.index_version_after


def test_an_empty_input_with_full_cleanup_deletes_nothing_unless_allowed(project: ragtt.Project) -> None:
    # langchain #30520: an empty batch under cleanup="full" wiped the whole index.
    project.sync(flask_pages().items(), cleanup="full")
    version = project.version
    report = project.sync([], cleanup="full")
    assert project.version == version and len(sources(project)) == 4
    assert any("empty" in w for _, w in report.warnings)
    emptied = project.sync([], cleanup="full", allow_empty=True)
    assert sources(project) == [] and emptied.index_version_after == version + 1
    assert len(emptied.documents_removed) == 4


def test_deletes_reach_every_source_that_shares_a_text(project: ragtt.Project) -> None:
    # llama_index #22706: a delete keyed by content hash missed (or hit) other documents with
    # the same hash. Sources that share a text are deleted and kept one by one.
    same = "The license is BSD-3-Clause. See LICENSE for the full text."
    project.sync([("a/LICENSE.md", same), ("b/LICENSE.md", same), ("c/LICENSE.md", same)], cleanup="full")
    project.sync([("b/LICENSE.md", same)], cleanup="full")
    assert sources(project) == ["b/LICENSE.md"]
    project.sync([("a/LICENSE.md", same), ("b/LICENSE.md", None)], cleanup=None)
    assert sources(project) == ["a/LICENSE.md"]
    assert project.verify().ok


def test_a_document_that_fails_keeps_its_old_version(project: ragtt.Project) -> None:
    # llama_index #22639: the old version was deleted eagerly, then the transform failed: the
    # document was gone. Here a failure is reported and the source keeps what it had.
    project.sync([("a.md", "alpha version one"), ("b.md", "beta version one"), ("c.md", "gamma")], cleanup="full")
    version = project.version
    report = project.sync(
        [("a.md", ""), ("b.md", "beta, part one"), ("b.md", b"not text"), ("c.md", "gamma two")], cleanup="full"
    )
    assert {s for s, _ in report.failed} == {"a.md", "b.md"}
    assert project.document("a.md").text == "alpha version one"
    assert project.document("b.md").text == "beta version one"  # no piece of b was written without the other
    assert project.document("c.md").text == "gamma two"
    assert report.index_version_after == version + 1
    assert sources(project) == ["a.md", "b.md", "c.md"]


def test_a_feed_that_dies_midway_writes_what_came_and_deletes_nothing(project: ragtt.Project) -> None:
    project.sync([("old.md", "old"), ("keep.md", "kept")], cleanup="full")

    def loader() -> Iterator[tuple[str, str]]:
        yield ("new.md", "a new page")
        raise OSError("connection reset")

    report = project.sync(loader(), cleanup="full")
    assert any("connection reset" in reason for _, reason in report.failed)
    assert sources(project) == ["keep.md", "new.md", "old.md"]


def test_llama_index_documents_and_source_keys(project: ragtt.Project) -> None:
    docs = [
        LIDocument(text="tickets about login", metadata={"ticket": "T-1"}),
        LIDocument(text="tickets about billing", metadata={"ticket": "T-2"}),
    ]
    project.sync(docs, cleanup="full", source_key="ticket")
    assert sources(project) == ["T-1", "T-2"]
    project.sync(docs[:1], cleanup="full", source_key=lambda d: d.metadata["ticket"])
    assert sources(project) == ["T-1"]
    report = project.sync([LIDocument(text="x", metadata={})], cleanup="incremental", source_key="ticket")
    assert report.failed and "ticket" in report.failed[0][1] and sources(project) == ["T-1"]


def test_incremental_refuses_documents_that_name_no_source(project: ragtt.Project) -> None:
    with pytest.raises(ConfigError, match="name its source"):
        project.sync([LCDocument(page_content="anonymous")], cleanup="incremental")
    with pytest.raises(ConfigError, match="cleanup must be one of"):
        project.sync([], cleanup="everything")  # type: ignore[arg-type]
    report = project.sync([LCDocument(page_content="anonymous")], cleanup=None)
    assert report.documents_added[0].startswith("document-")
