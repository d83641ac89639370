"""A long text file is never whole in memory: it is spooled to disk as it is decoded
(``SpooledText``), and the recursive chunker reads it in windows with exactly the spans it
would give the whole text."""

from __future__ import annotations

import io
import pickle
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragtt import spooled_text
from ragtt.errors import IngestError
from ragtt.ingest import chunk
from ragtt.ingest.chunk import STRATEGIES, plan_chunks
from ragtt.ingest.loaders import loader_for, streamed
from ragtt.ingest.types import IngestOptions
from ragtt.spooled_text import SpooledText
from tests.conftest import flask_releases


def spooled(text: str, piece: int) -> SpooledText:
    out = SpooledText()
    for start in range(0, len(text), piece):
        out.append(text[start : start + piece])
    return out


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(["a", "é", "数", "🙂", "\n", " "]), max_size=300),
    piece=st.integers(1, 40),
    ranges=st.lists(st.tuples(st.integers(-5, 310), st.integers(-5, 310)), max_size=20),
)
def test_slices_read_back_what_was_appended(text: str, piece: int, ranges: list[tuple[int, int]]) -> None:
    spool = spooled(text, piece)
    assert len(spool) == len(text) and "".join(spool.pieces()) == text and spool[:] == text
    for start, stop in ranges:
        assert spool[start:stop] == text[start:stop]


def test_a_spooled_text_refuses_what_a_str_slice_is_not_and_pickles_as_a_str() -> None:
    spool = spooled("abc" * 1000, 7)
    with pytest.raises(TypeError, match="slices"):
        spool[3]  # type: ignore[index]
    with pytest.raises(ValueError, match="step"):
        spool[::2]
    back = pickle.loads(pickle.dumps(spool))
    assert type(back) is str and back == "abc" * 1000
    assert "3,000 characters" in repr(spool)


PROSE = st.sampled_from(
    ["word ", "Sentence ends. ", "Why? ", "\n", "\n\n", " \n \n", "\n\t\n  ", "   ", "数据。", "x" * 45, "# Head\n"]
)
TABLE = st.builds(
    lambda lead, cols, rows: (
        " " * lead
        + "| "
        + " | ".join(f"h{i}" for i in range(cols))
        + " |\n|"
        + "---|" * cols
        + "\n"
        + "".join("| " + " | ".join(f"v{r}{c}" for c in range(cols)) + " |\n" for r in range(rows))
    ),
    st.integers(0, 2),
    st.integers(1, 3),
    st.integers(0, 12),
)


@settings(max_examples=200, deadline=None)
@given(
    parts=st.lists(st.one_of(PROSE, PROSE, PROSE, TABLE), max_size=150),
    max_size=st.sampled_from([20, 50, 120]),
    overlap_share=st.sampled_from([0.0, 0.2, 0.6]),
    window=st.sampled_from([1, 60, 200]),
    piece=st.sampled_from([1, 13, 97, 10**6]),
    tables=st.booleans(),
)
def test_windows_give_the_whole_texts_spans(
    parts: list[str], max_size: int, overlap_share: float, window: int, piece: int, tables: bool
) -> None:
    text = "".join(parts)
    overlap = int(max_size * overlap_share)
    whole = plan_chunks(text, max_size=max_size, overlap=overlap, tables=tables)
    saved = chunk._WINDOW_CHARS
    chunk._WINDOW_CHARS = window  # at least 4 x max_size, as the plan requires
    try:
        windowed = plan_chunks(spooled(text, piece), max_size=max_size, overlap=overlap, tables=tables)
    finally:
        chunk._WINDOW_CHARS = saved
    assert (list(windowed.starts), list(windowed.ends), windowed.tagged) == (
        list(whole.starts),
        list(whole.ends),
        whole.tagged,
    )
    assert windowed.chunks() == whole.chunks()


def test_windows_give_the_whole_texts_spans_on_flasks_docs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A real corpus (reStructuredText and Markdown, every release's: tables, code, indented
    blocks) in 20,000-character windows read from pieces of 7,001 characters, so windows and
    pieces cut everywhere."""
    docs = sorted(p for release in flask_releases() for p in release.rglob("*") if p.suffix in (".rst", ".md"))
    text = "\n\n".join(path.read_text(encoding="utf-8") for path in docs)
    assert len(text) > 400_000
    monkeypatch.setattr(chunk, "_WINDOW_CHARS", 20_000)
    whole = plan_chunks(text)
    windowed = plan_chunks(spooled(text, 7_001))
    assert len(whole) > 500
    assert (list(windowed.starts), list(windowed.ends), windowed.tagged) == (
        list(whole.starts),
        list(whole.ends),
        whole.tagged,
    )


@pytest.mark.parametrize("strategy", [s for s in STRATEGIES if s != "recursive"])
def test_other_strategies_read_a_spooled_text_whole(strategy: str) -> None:
    text = "# A\n\nOne. Two! Three?\n\n| h |\n|---|\n| v |\n\n" * 200
    whole = plan_chunks(text, max_size=60, overlap=10, strategy=strategy)
    from_spool = plan_chunks(spooled(text, 101), max_size=60, overlap=10, strategy=strategy)
    assert from_spool.chunks() == whole.chunks() and isinstance(from_spool.markdown, str)


def _load(data: bytes, name: str = "big.txt") -> object:
    loader = loader_for(name)
    assert loader is not None
    stream = streamed(loader)
    assert stream is not None
    return stream(io.BytesIO(data), name, IngestOptions()).markdown


def test_a_text_file_over_the_threshold_is_spooled_as_it_is_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(3)
    text = "".join(rnd.choice(["é", "a", "数", "\n", " "]) for _ in range(50_000))
    monkeypatch.setattr(spooled_text, "SPOOL_CHARS", 10_000)
    monkeypatch.setattr("ragtt.ingest.loaders._READ_STEP", 4_099)  # pieces cut inside characters
    crlf = text.replace("\n", "\r\n").encode("utf-8")
    markdown = _load(crlf)
    assert isinstance(markdown, SpooledText) and markdown[:] == text
    utf16 = _load(text.encode("utf-16"))
    assert isinstance(utf16, SpooledText) and utf16[:] == text
    small = _load(text[:9_000].encode("utf-8"))
    assert isinstance(small, str) and small == text[:9_000]


def test_a_spooled_utf16_file_with_nul_characters_is_still_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spooled_text, "SPOOL_CHARS", 1_000)
    with pytest.raises(IngestError, match="NUL"):
        _load(("text " * 2_000 + "\x00" + "more").encode("utf-16"))


def test_a_break_at_the_end_of_a_piece_still_ends_a_window() -> None:
    """Each piece ends with a paragraph's blank line, so each break is only known to end at a
    line of text once the next piece is read."""
    pieces = [f"Paragraph {i} of some words.\n\n" for i in range(400)]
    text = "".join(pieces)
    spool = SpooledText()
    for piece in pieces:
        spool.append(piece)
    windows = list(chunk._windows(spool, 100))
    assert "".join(w for _, w, _ in windows) == text and len(windows) > 60
    assert all(len(w) < 160 for _, w, last in windows if not last)


def test_parse_gives_a_str_and_a_prepared_document_holds_its_text_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``parse`` has the bytes in memory already: its text is a str. A file ingest spools it;
    a strategy that reads a spooled text whole leaves one text in the document and its plan."""
    import ragtt
    from ragtt.ingest import parse
    from ragtt.ingest.pipeline import Prepared, PrepareSpec, SourceItem, prepare_source

    monkeypatch.setattr(spooled_text, "SPOOL_CHARS", 1_000)
    file = tmp_path / "notes.md"
    file.write_text("# Notes\n\nOne. Two! Three?\n\n" * 200, encoding="utf-8")
    assert isinstance(parse(file).markdown, str)
    for strategy, spooled_plan in (("recursive", True), ("sentence", False)):
        spec = PrepareSpec(ragtt.PipelineConfig(chunk_strategy=strategy), IngestOptions(), {})
        prepared = prepare_source(spec, SourceItem(file.name, file), None)
        assert isinstance(prepared, Prepared)
        assert prepared.plan.markdown is prepared.parsed.markdown
        assert isinstance(prepared.plan.markdown, SpooledText) == spooled_plan


def test_a_full_temporary_folder_is_named_not_blamed_on_the_source(monkeypatch: pytest.MonkeyPatch) -> None:
    import errno
    import os

    def full(*args: object) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(spooled_text.os, "pwrite", full)
    with pytest.raises(IngestError, match=r"temporary folder .*No space left"):
        SpooledText().append("text")
