"""%ragtt as a new user types it: questions ending in "?", wrong files for pdf, progress and
status lines, datetimes and drift tables that read like the CLI."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from IPython.core.error import UsageError

import ragtt
from ragtt_nb.magics import question_mark_is_text
from tests.conftest import corpus

from .conftest import QUESTION


def test_a_trailing_question_mark_is_part_of_the_question(shell: Any, sample: dict[str, Any]) -> None:
    assert QUESTION.endswith("?")
    shell.run_line_magic("ragtt", f"open {sample['path']}")
    result = shell.run_cell(f"res = %ragtt query {QUESTION}", store_history=False)
    result.raise_error()
    res = shell.user_ns["res"]
    assert isinstance(res, ragtt.QueryResult) and res.text == QUESTION
    bare = shell.run_cell("%ragtt query --top-k 2 --no-generate What is the refund window?", store_history=False)
    bare.raise_error()
    assert bare.result.text == "What is the refund window?" and len(bare.result.chunks) == 2
    # IPython's own help syntax keeps working where it means help.
    transform = shell.input_transformer_manager.transform_cell
    assert "pinfo" in transform("%ragtt?\n") and "pinfo" in transform("%ragtt query?\n")
    assert "run_line_magic('ragtt', 'query why?')" in transform("    %ragtt query why?\n")
    assert question_mark_is_text(["x = 1?\n"]) == ["x = 1?\n"]
    assert shell.input_transformers_cleanup.count(question_mark_is_text) == 1


def test_pdf_on_a_text_source_or_a_moved_file_is_a_usage_error_that_says_which(
    shell: Any, sample: dict[str, Any], tmp_path: Path
) -> None:
    shell.run_line_magic("ragtt", f"open {sample['path']}")
    proj = shell.magics_manager.registry["RagttMagics"].proj
    text_source = proj.chunks()["source"][0]
    with pytest.raises(UsageError, match=rf"'{text_source}' is not a PDF source \(ingested from .*\)"):
        shell.run_line_magic("ragtt", f"pdf {text_source}")
    shell.run_line_magic("ragtt", f"open {tmp_path / 'pdfproj'} --embedder hash --create")
    pdf = tmp_path / "docs" / "crazyones.pdf"
    pdf.parent.mkdir()
    shutil.copy(corpus("pdfs", "pypdf__crazyones.pdf"), pdf)
    assert shell.run_line_magic("ragtt", f"ingest {pdf}").ok
    source = shell.magics_manager.registry["RagttMagics"].proj.chunks()["source"][0]
    with pytest.raises(UsageError, match=r"is not a PDF file \(no %PDF header\)"):
        shell.run_line_magic("ragtt", f"pdf {source} --path {corpus('pdfs', 'expectations.json')}")
    with pytest.raises(UsageError, match=r"no file at --path"):
        shell.run_line_magic("ragtt", f"pdf {source} --path {tmp_path / 'nowhere.pdf'}")
    pdf.rename(tmp_path / "moved.pdf")
    with pytest.raises(UsageError, match=rf"was ingested from {pdf}, which is not there any more \(moved"):
        shell.run_line_magic("ragtt", f"pdf {source}")
    assert shell.run_line_magic("ragtt", f"pdf {source} --path {tmp_path / 'moved.pdf'}") is not None


def test_progress_is_on_by_default_and_shows_for_real_work_only(
    shell: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    magics = shell.magics_manager.registry["RagttMagics"]
    assert magics.progress is True
    shell.run_line_magic("ragtt", f"open {tmp_path / 'p'} --embedder hash --create")
    assert magics.proj.progress is True
    small = tmp_path / "small"
    small.mkdir()
    (small / "a.md").write_text("One short page about refunds.", encoding="utf-8")
    capsys.readouterr()
    shell.run_line_magic("ragtt", f"ingest {small}")
    assert "ragtt embed" not in capsys.readouterr().err  # 1 chunk in well under 2 s: quiet
    report = shell.run_line_magic("ragtt", f"ingest {corpus('evolving', 'flask', '2026-02-18_flask-3.1.3')}")
    assert report.embeddings_computed > 20
    err = capsys.readouterr().err
    # shown at once, sized to the chunks to embed (how far it got before closing depends on the clock)
    assert "ragtt embed" in err and f"/{report.embeddings_computed} [" in err


def test_status_lines_reach_the_notebook_while_progress_is_on(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    magics = shell.magics_manager.registry["RagttMagics"]
    logging.getLogger("ragtt").info("loading model %s …", "all-MiniLM-L6-v2")
    assert "ragtt: loading model all-MiniLM-L6-v2 …" in capsys.readouterr().err
    magics.progress = False
    try:
        logging.getLogger("ragtt").info("loading model %s …", "x")
        assert "loading model" not in capsys.readouterr().err
    finally:
        magics.progress = True


def test_the_default_embedder_says_when_it_loads(caplog: pytest.LogCaptureFixture) -> None:
    from ragtt.index.embedders import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    with caplog.at_level(logging.INFO, logger="ragtt"):
        embedder.embed(["first text"])
        embedder.embed(["second text"])
    assert [r.getMessage() for r in caplog.records if r.name == "ragtt"] == ["loading model all-MiniLM-L6-v2 …"]


def test_assertion_frames_show_validity_as_utc_datetimes(shell: Any, tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from ragtt.temporal import Assertion, Citation, Episode

    shell.run_line_magic("ragtt", f"open {tmp_path / 'p'} --embedder hash --create")
    store = shell.magics_manager.registry["RagttMagics"].proj.assertions
    store.init_namespace("policy")
    start = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
    store.write_episode(Episode("ep", "policy", start.timestamp(), start.isoformat(), "doc", "policy.md"))
    store.write_assertion(
        Assertion(
            id="a1",
            namespace="policy",
            type="fact",
            content="Refunds within 30 days.",
            valid_from=start.timestamp(),
            confidence=1.0,
            source_episode_id="ep",
            citations=(Citation("c1", "ep", "policy.md", "Refunds within 30 days."),),
        )
    )
    frame = shell.run_line_magic("ragtt", "assertions policy")
    assert frame.schema["valid_from"] == pl.Datetime("us", "UTC") and frame["valid_from"][0] == start
    assert frame["valid_until"][0] is None and "2026-05-01 12:00:00" in frame.select("valid_from")._repr_html_()


def test_drift_table_says_what_the_cli_says(
    shell: Any, sample: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    from ragtt.cli import main

    shell.run_line_magic("ragtt", f"open {sample['path']}")
    table = shell.run_line_magic("ragtt", "drift release-1 release-3 --table")
    html = table._repr_html_()
    assert main(["drift", "release-1", "release-3", "--project", str(sample["path"]), "--embedder", "hash"]) == 0
    cli = capsys.readouterr().out
    for source in table.sources:
        line = f"{source.source}: {source.summary()}"
        assert line in cli and source.summary() in html
    assert "release-1 (v" in cli and "release-1 (v" in html
