"""RegionIndex and locate_chunks, against brute force and on a real PDF."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ragtt.ingest import RegionIndex, build_chunks, locate_chunks, parse
from ragtt.ingest.types import Block, Region

from .conftest import pdf_dir


@settings(max_examples=200, deadline=None)
@given(
    spans=st.lists(st.tuples(st.integers(0, 200), st.integers(1, 40)), max_size=40),
    query=st.tuples(st.integers(0, 240), st.integers(1, 60)),
)
def test_interval_index_finds_exactly_the_overlapping_blocks(
    spans: list[tuple[int, int]], query: tuple[int, int]
) -> None:
    blocks = [Block(1, (0, i, 10, i + 1), s, s + n, dir=None) for i, (s, n) in enumerate(spans)]
    start, end = query[0], query[0] + query[1]
    expected = sorted(
        (b for b in blocks if b.char_start < end and b.char_end > start), key=lambda b: (b.char_start, b.char_end)
    )
    assert RegionIndex(blocks).blocks_for(start, end) == expected


def test_partly_covered_single_line_is_narrowed_along_its_direction() -> None:
    # a vertical line is tall and narrow: its box is 10 wide and 100 high
    for direction, bbox, expected in [
        ((1.0, 0.0), (0, 0, 100, 10), (25.0, 0.0, 75.0, 10.0)),
        ((-1.0, 0.0), (0, 0, 100, 10), (25.0, 0.0, 75.0, 10.0)),
        ((0.0, 1.0), (0, 0, 10, 100), (0.0, 25.0, 10.0, 75.0)),
        ((0.0, -1.0), (0, 0, 10, 100), (0.0, 25.0, 10.0, 75.0)),
    ]:
        index = RegionIndex([Block(1, bbox, 0, 100, dir=direction)])
        assert index.regions_for(25, 75) == (Region(1, *expected),)
    head = RegionIndex([Block(1, (0, 0, 10, 100), 0, 100, dir=(0.0, -1.0))]).regions_for(0, 10)[0]
    assert (head.y0, head.y1) == (90.0, 100.0)  # bottom-to-top text starts at the bottom


def test_a_clip_narrower_than_one_glyph_falls_back_to_the_line_box() -> None:
    line = Block(1, (0, 0, 500, 10), 0, 100)  # 100 characters on a 500 pt line, 10 pt high
    assert RegionIndex([line]).regions_for(50, 51) == (Region(1, 0.0, 0.0, 500.0, 10.0),)  # 5 pt < one em
    assert RegionIndex([line]).regions_for(50, 53) == (Region(1, 250.0, 0.0, 265.0, 10.0),)  # 15 pt: kept
    column = Block(1, (0, 0, 10, 500), 0, 100, dir=(0.0, 1.0))
    assert RegionIndex([column]).regions_for(0, 1) == (Region(1, 0.0, 0.0, 10.0, 500.0),)


def test_multi_line_or_unknown_layout_blocks_are_never_narrowed() -> None:
    index = RegionIndex([Block(1, (0, 0, 100, 50), 0, 100, dir=None)])
    assert index.regions_for(40, 45) == (Region(1, 0.0, 0.0, 100.0, 50.0),)


def test_regions_merge_per_column_and_split_across_columns_and_pages() -> None:
    blocks = [
        Block(1, (0, 0, 100, 10), 0, 10),
        Block(1, (0, 11, 90, 21), 11, 20),  # same column, next line: merged
        Block(1, (200, 0, 300, 10), 21, 30),  # other column's top: separate
        Block(2, (0, 0, 100, 10), 31, 40),  # next page
    ]
    assert RegionIndex(blocks).regions_for(0, 40) == (
        Region(1, 0.0, 0.0, 100.0, 21.0),
        Region(1, 200.0, 0.0, 300.0, 10.0),
        Region(2, 0.0, 0.0, 100.0, 10.0),
    )


def test_locate_tolerates_whitespace_and_reports_misses() -> None:
    markdown = "The  quick\nbrown fox.\n\nJumps over   the lazy dog. The quick brown fox."
    located = locate_chunks(markdown, ["The quick brown fox.", "over the\tlazy dog", "a cat", "The quick brown fox."])
    assert located.misses == (2,)
    first, second, miss, third = located.chunks
    assert miss is None
    assert first is not None and first.text == "The  quick\nbrown fox." and first.char_start == 0
    assert second is not None and second.text == "over   the lazy dog"
    assert third is not None and third.char_start == markdown.rindex("The quick")  # the next occurrence
    assert all(markdown[c.char_start : c.char_end] == c.text for c in located.found)


def test_locate_on_a_real_pdf_recovers_spans_and_regions() -> None:
    # the one PDF this test reads, parsed as the corpus fixture parses it (default options):
    # not the whole corpus, which this file's worker would otherwise parse again (a minute of OCR)
    doc = parse(pdf_dir() / "pymupdf__2201.00069.pdf")
    chunks = build_chunks(doc.markdown, doc.blocks, max_size=400, overlap=0)
    foreign = [" ".join(c.text.split()) for c in chunks]  # as another splitter would hand them over
    located = locate_chunks(doc.markdown, foreign, doc.blocks)
    assert located.misses == ()
    assert [(c.char_start, c.char_end, c.regions) for c in located.found] == [
        (c.char_start, c.char_end, c.regions) for c in chunks
    ]
