"""Issue 15.3: the ``structural`` chunk strategy and no sliver regions, on the PDF corpus and Flask's docs."""

from __future__ import annotations

from pathlib import Path

import pytest

import ragtt
from ragtt.ingest import parse
from ragtt.ingest.chunk import build_chunks
from ragtt.ingest.provenance import RegionIndex
from ragtt.ingest.types import Block, IngestOptions, ParsedDocument
from tests.conftest import corpus, flask_releases

PDFS = [
    "pdfplumber__federal-register-2020-17221.pdf",
    "docling__multi_page.pdf",
    "pymupdf__2201.00069.pdf",
    "udhr__udhr_Jpan.JPN_Sans_12.pdf",
    "pdfjs__vertical.pdf",
    "pdfplumber__nics-background-checks-2015-11.pdf",
]


def _pdf(name: str) -> ParsedDocument:
    return parse(corpus("pdfs", name), IngestOptions(engines=()))  # the text layer: no OCR needed here


def _holders(chunks: list, block: Block) -> list:  # type: ignore[type-arg]
    return [c for c in chunks if c.char_start < block.char_end and block.char_start < c.char_end]


@pytest.mark.parametrize("name", PDFS)
def test_structural_chunks_are_whole_blocks_with_the_blocks_boxes(name: str) -> None:
    doc = _pdf(name)
    size = 300
    chunks = build_chunks(doc.markdown, doc.blocks, max_size=size, overlap=40, strategy="structural")
    assert chunks and all(doc.markdown[c.char_start : c.char_end] == c.text for c in chunks)
    assert all(len(c.text) <= size for c in chunks if c.kind == "text")
    index = RegionIndex(doc.blocks)
    for block in doc.blocks:
        holders = _holders(chunks, block)
        if len(doc.markdown[block.char_start : block.char_end].strip()) <= size:
            assert len(holders) == 1, (block, [c.text[:40] for c in holders])  # never split mid-block
    for chunk in chunks:
        within = index.blocks_for(chunk.char_start, chunk.char_end)
        assert chunk.regions == tuple((b.page, *map(float, b.bbox)) for b in within)
    headings = [b for b in doc.blocks if b.kind == "heading"]
    starts = {c.char_start for c in chunks}
    assert all(
        doc.markdown[b.char_start : b.char_end].strip() == "" or _holders(chunks, b)[0].char_start in starts
        for b in headings
    )


def test_structural_merges_small_blocks_and_splits_only_a_block_that_alone_is_too_long() -> None:
    doc = _pdf("pdfplumber__federal-register-2020-17221.pdf")
    longest = max(doc.blocks, key=lambda b: b.char_end - b.char_start)
    size = (longest.char_end - longest.char_start) - 1  # only the longest block cannot fit
    chunks = build_chunks(doc.markdown, doc.blocks, max_size=size, overlap=0, strategy="structural")
    split = [b for b in doc.blocks if len(_holders(chunks, b)) > 1]
    assert all(len(doc.markdown[b.char_start : b.char_end].strip()) > size for b in split) and longest in split
    merged = build_chunks(doc.markdown, doc.blocks, max_size=300, overlap=0, strategy="structural")
    assert len(merged) < len(doc.blocks) / 3  # this file's blocks are lines: merged up to the size
    recursive = build_chunks(doc.markdown, doc.blocks, max_size=300, overlap=40, strategy="recursive")
    assert any(len(_holders(recursive, b)) > 1 for b in doc.blocks)  # the difference: recursive cuts blocks


def test_structural_on_markdown_keeps_paragraphs_headings_and_code_fences_whole() -> None:
    text = (flask_releases()[-1] / "README.md").read_text(encoding="utf-8")
    assert "```" in text and "\n# " in "\n" + text
    chunks = build_chunks(text, None, max_size=200, overlap=0, strategy="structural")
    assert all(text[c.char_start : c.char_end] == c.text for c in chunks)
    fence = text.index("```")
    end = text.index("```", fence + 3) + 3
    assert end - fence <= 200  # the README's example fits one chunk, so it must stay whole
    assert next(c for c in chunks if c.char_start <= fence < c.char_end).char_end >= end
    for c in chunks:  # a heading opens its chunk ("# save this as app.py" inside a fence is code)
        fenced = False
        for i, line in enumerate(c.text.split("\n")):
            fenced ^= line.startswith("```")
            assert i == 0 or fenced or not line.startswith(("# ", "## ")), c.text
    for paragraph in (p.strip() for p in text.split("\n\n")):
        if paragraph and "```" not in paragraph and len(paragraph) <= 200 and not paragraph.startswith("#"):
            assert any(paragraph in c.text for c in chunks), paragraph


def test_structural_is_a_pipeline_strategy(tmp_path: Path) -> None:
    config = ragtt.PipelineConfig(chunk_strategy="structural", chunk_size=400, chunk_overlap=0)
    with ragtt.Project.open(
        tmp_path / "p",
        config=config,
        embedder=ragtt.HashEmbedder(),
        progress=False,
        ingest_options=IngestOptions(engines=()),
    ) as proj:
        report = proj.ingest(corpus("pdfs", "docling__multi_page.pdf"))
        assert report.failed == [] and report.chunks_added > 0
        regions = proj.chunks()["regions"].to_list()
        assert all(regions)
    with pytest.raises(ragtt.ConfigError, match="structural"):
        ragtt.PipelineConfig(chunk_strategy="blocks")


def test_no_region_is_narrower_than_one_glyph() -> None:
    """A chunk that covers a character or two of a wide line gets the whole line box."""
    fallbacks = 0
    for name in PDFS:
        doc = _pdf(name)
        index = RegionIndex(doc.blocks)
        for size, overlap, strategy in ((200, 40, "sentence"), (300, 60, "recursive"), (120, 0, "fixed")):
            for chunk in build_chunks(doc.markdown, doc.blocks, size, overlap, strategy):
                for block in index.blocks_for(chunk.char_start, chunk.char_end):
                    if block.dir is None:
                        continue
                    s, e = max(chunk.char_start, block.char_start), min(chunk.char_end, block.char_end)
                    (region,) = RegionIndex([block]).regions_for(s, e)
                    horizontal = abs(block.dir[0]) >= abs(block.dir[1])
                    along = region.x1 - region.x0 if horizontal else region.y1 - region.y0
                    across = region.y1 - region.y0 if horizontal else region.x1 - region.x0
                    whole = tuple(region[1:]) == tuple(map(float, block.bbox))
                    assert whole or along >= across, (name, block, s, e, region)
                    if whole and (s, e) != (block.char_start, block.char_end):
                        fallbacks += 1
                        assert any(
                            r.x0 <= region.x0 and r.x1 >= region.x1 and r.y0 <= region.y0 and r.y1 >= region.y1
                            for r in chunk.regions
                            if r.page == region.page
                        )
    assert fallbacks >= 10  # measured: 28 one- to three-character clips in these files fell back
