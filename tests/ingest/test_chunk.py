"""Chunk strategies keep exact charspans; tables become a roll-up plus one chunk per row."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragtt.errors import ConfigError
from ragtt.ingest import build_chunks
from ragtt.ingest.chunk import STRATEGIES
from ragtt.ingest.types import Block

WORDS = st.sampled_from(["alpha", "beta.", "gamma!", "δέλτα", "数据。", "\n", "\n\n", "# Head\n", "  ", "x" * 30])


@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(WORDS, max_size=80),
    strategy=st.sampled_from(STRATEGIES),
    max_size=st.integers(10, 120),
    overlap_share=st.floats(0, 0.9),
)
def test_every_strategy_keeps_exact_spans_under_max_size_covering_all_text(
    parts: list[str], strategy: str, max_size: int, overlap_share: float
) -> None:
    markdown = " ".join(parts)
    chunks = build_chunks(markdown, max_size=max_size, overlap=int(max_size * overlap_share), strategy=strategy)
    covered = set()
    for chunk in chunks:
        assert markdown[chunk.char_start : chunk.char_end] == chunk.text
        assert 0 < len(chunk.text) <= max_size
        assert chunk.text == chunk.text.strip() or strategy == "fixed"
        covered.update(range(chunk.char_start, chunk.char_end))
    assert all(i in covered for i, c in enumerate(markdown) if not c.isspace())
    starts = [c.char_start for c in chunks]
    assert starts == sorted(starts)


def test_markdown_strategy_never_straddles_a_heading() -> None:
    markdown = "# One\nShort.\n\n## Two\nAlso short.\n\n## Three\n" + "Long sentence here. " * 10
    chunks = build_chunks(markdown, max_size=80, overlap=0, strategy="markdown")
    assert [c.text for c in chunks[:2]] == ["# One\nShort.", "## Two\nAlso short."]
    assert all(c.text.count("#") <= 2 and not re.search(r"\n#", c.text) for c in chunks)


def test_sentence_strategy_cuts_between_sentences_with_sentence_overlap() -> None:
    markdown = "First one is here. Second one is here. Third one is here. Fourth one is here."
    chunks = build_chunks(markdown, max_size=40, overlap=20, strategy="sentence")
    assert [c.text for c in chunks] == [
        "First one is here. Second one is here.",
        "Second one is here. Third one is here.",
        "Third one is here. Fourth one is here.",
    ]


def test_fixed_strategy_is_windows_with_overlap() -> None:
    chunks = build_chunks("abcdefghij" * 3, max_size=10, overlap=4, strategy="fixed")
    assert [c.char_start for c in chunks] == [0, 6, 12, 18, 24]
    assert chunks[0].text == "abcdefghij" and chunks[-1].text == "efghij"


TABLE = "Intro text.\n\n| Gas | min | max |\n| --- | --- | --- |\n| He | -269 | -62 |\n| Ne | -249 | 40 |\n\nAfter."


def test_table_is_one_rollup_and_one_chunk_per_row_with_header_context() -> None:
    chunks = build_chunks(TABLE, max_size=200, overlap=0)
    kinds = [c.kind for c in chunks]
    assert kinds == ["text", "table", "table_row", "table_row", "text"]
    rollup, row = chunks[1], chunks[2]
    assert rollup.text.startswith("| Gas") and rollup.text.endswith("| 40 |") and rollup.context == ""
    assert row.text == "| He | -269 | -62 |" and row.context == "| Gas | min | max |"
    assert row.embed_text == "| Gas | min | max |\n| He | -269 | -62 |"
    assert all(TABLE[c.char_start : c.char_end] == c.text for c in chunks)


def test_long_table_rolls_up_in_row_groups_that_repeat_the_header() -> None:
    rows = "\n".join(f"| row {i} | {i * 7} |" for i in range(40))
    markdown = f"| name | value |\n| --- | --- |\n{rows}"
    chunks = build_chunks(markdown, max_size=120, overlap=0)
    rollups = [c for c in chunks if c.kind == "table"]
    assert len(rollups) > 3 and all(len(c.text) <= 120 for c in rollups)
    assert rollups[0].context == "" and all(c.context == "| name | value |" for c in rollups[1:])
    assert len([c for c in chunks if c.kind == "table_row"]) == 40


def test_tables_can_be_left_to_the_strategy() -> None:
    assert {c.kind for c in build_chunks(TABLE, max_size=200, overlap=0, tables=False)} == {"text"}


def test_chunks_carry_regions_from_blocks() -> None:
    markdown = "Hello world\nSecond line"
    blocks = [Block(3, (10, 10, 110, 20), 0, 11), Block(3, (10, 21, 110, 31), 12, 23)]
    (chunk,) = build_chunks(markdown, blocks)
    assert [tuple(r) for r in chunk.regions] == [(3, 10.0, 10.0, 110.0, 31.0)]


def test_bad_configuration_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="one of"):
        build_chunks("x", strategy="semantic")
    with pytest.raises(ConfigError, match="overlap"):
        build_chunks("x", max_size=10, overlap=10)
