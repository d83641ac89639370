"""%ragtt in a real IPython InteractiveShell: every verb, and UsageError for bad arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from IPython.core.error import UsageError

import ragtt
from ragtt.demo import sample_releases
from ragtt.verbs import VERBS as TABLE
from ragtt_nb import ChunkDiff, Timeline
from ragtt_nb.magics import COMMANDS

from .conftest import QUESTION


def ragtt_line(shell: Any, line: str) -> Any:
    return shell.run_line_magic("ragtt", line)


@pytest.fixture
def opened(shell: Any, sample: dict[str, Any]) -> Any:
    ragtt_line(shell, f"open {sample['path']}")
    return shell


def test_every_verb_is_registered_and_documented(shell: Any) -> None:
    table = {verb.cli for verb in TABLE.values()}
    assert {"query", "replay", "diff", "snapshot-diff", "compare-configs", "test run", "test capture"} <= table
    assert set(COMMANDS) == {"open", "timeline", "assertions", "pdf", "help"}
    listing = str(ragtt_line(shell, "help"))
    assert all(f"  {name} " in listing for name in table | set(COMMANDS))
    assert "--top-k" in str(ragtt_line(shell, "help query"))
    assert "--threshold" in str(ragtt_line(shell, "help test run"))


def test_open_ingest_snapshot_query_replay_in_a_new_project(shell: Any, tmp_path: Path) -> None:
    proj = ragtt_line(shell, f"open {tmp_path / 'p'} --embedder hash --create")
    assert isinstance(proj, ragtt.Project) and proj.embedder.model_id == ragtt.HashEmbedder().model_id
    report = ragtt_line(shell, f"ingest {sample_releases()[0]}")
    assert isinstance(report, ragtt.IngestReport) and report.ok and report.documents_added
    snap = ragtt_line(shell, "snapshot first")
    assert snap.label == "first" and snap.index_version == proj.version
    # an apostrophe is a word, not an unbalanced quote
    res = ragtt_line(shell, "query what's the refund window --top-k 2 --no-generate")
    assert isinstance(res, ragtt.QueryResult) and len(res.chunks) == 2 and res.answer is None
    assert res.text == "what's the refund window"
    replay = ragtt_line(shell, "replay last")
    assert isinstance(replay, ragtt.ReplayResult) and replay.matches_original
    by_label = ragtt_line(shell, "replay --text refund --at first")
    assert by_label.index_version == snap.index_version


def test_cell_magic_body_is_the_query_text(opened: Any) -> None:
    res = opened.run_cell_magic("ragtt", "query --top-k 3", QUESTION + "\n")
    assert res.text == QUESTION and len(res.chunks) == 3


def test_settings_are_config_traits(shell: Any, sample: dict[str, Any]) -> None:
    shell.run_line_magic("config", f"RagttMagics.project = {str(sample['path'])!r}")
    shell.run_line_magic("config", "RagttMagics.top_k = 2")
    res = ragtt_line(shell, f"query {QUESTION}")  # opens the configured project on first use
    assert len(res.chunks) == 2
    shell.run_line_magic("config", "RagttMagics.project = ''")
    shell.run_line_magic("config", "RagttMagics.top_k = 0")


def test_snapshots_events_trace(opened: Any, sample: dict[str, Any]) -> None:
    snaps = ragtt_line(opened, "snapshots")
    assert [s.label for s in snaps] == ["release-1", "release-2", "release-3"]
    html = snaps._repr_html_()
    assert "<table" in html and "release-2" in html
    events = ragtt_line(opened, "events --type query.received")
    assert isinstance(events, pl.DataFrame) and set(events["type"]) == {"query.received"}
    assert len(ragtt_line(opened, "events --last 3")) == 3
    trace = ragtt_line(opened, f"trace {sample['then']}")
    assert trace["type"].to_list()[0] == "query.received"


def test_diff_and_timeline_return_widgets(opened: Any, sample: dict[str, Any]) -> None:
    widget = ragtt_line(opened, f"diff {sample['then']} {sample['now']}")
    assert isinstance(widget, ChunkDiff) and widget.report.right_id == sample["now"]
    table = ragtt_line(opened, f"diff {sample['then']} {sample['now']} --table")
    assert isinstance(table, ragtt.DiffReport)
    tl = ragtt_line(opened, f"timeline {sample['then']} --at 3")
    assert isinstance(tl, Timeline) and tl.version == 3 and tl.query_id == sample["then"]
    assert ragtt_line(opened, "timeline").query_id is None


def test_analysis_verbs_call_the_core(opened: Any, sample: dict[str, Any]) -> None:
    lineage = ragtt_line(opened, f"lineage {sample['then']} {sample['now']}")
    added = ragtt_line(opened, f"diff {sample['then']} {sample['now']} --table").added
    assert set(lineage.frame()["chunk_id"]) >= {c.chunk_id for c in added}
    drift = ragtt_line(opened, "drift release-1 release-3 --table")
    assert "centroid_cosine" in drift.frame().columns
    from ragtt_nb import DriftScatter

    assert isinstance(ragtt_line(opened, f"drift release-1 release-3 --query {sample['then']}"), DriftScatter)
    opened.user_ns["thirty_days"] = lambda r: any("30 days of any purchase" in c.text for c in r.chunks)
    by_name = ragtt_line(opened, f"bisect {sample['then']} thirty_days")
    then = ragtt_line(opened, f"replay {sample['then']}")
    window = next(c for c in then.chunks if "30 days of any purchase" in c.text)  # the chunk that said it
    by_string = ragtt_line(opened, f"bisect {sample['then']} chunk:{window.chunk_id}")
    release_2 = opened.magics_manager.registry["RagttMagics"].proj.resolve_version("release-2")
    assert by_name.first_version == by_string.first_version == release_2  # release-2 shortens the window


def test_pdf_shows_a_source_with_its_regions(shell: Any, tmp_path: Path) -> None:
    from ragtt_nb import PdfOverlay
    from tests.conftest import corpus

    ragtt_line(shell, f"open {tmp_path / 'p'} --embedder hash --create")
    ragtt_line(shell, f"ingest {corpus('pdfs') / 'docling__normal_4pages.pdf'}")
    query = ragtt_line(shell, "query layout analysis")
    overlay = ragtt_line(shell, f"pdf docling__normal_4pages.pdf --page 2 --query {query.query_id}")
    assert isinstance(overlay, PdfOverlay)
    with pytest.raises(UsageError, match="%ragtt pdf"):
        ragtt_line(shell, "pdf not-ingested.pdf")


def test_assertions_as_of(shell: Any, tmp_path: Path) -> None:
    proj = ragtt_line(shell, f"open {tmp_path / 'p'} --create")
    proj.assertions.init_namespace("policies")
    frame = ragtt_line(shell, "assertions policies --at 2024-01-01T00:00:00Z")
    assert isinstance(frame, pl.DataFrame) and frame.is_empty()
    assert isinstance(ragtt_line(shell, "assertions policies"), pl.DataFrame)


@pytest.mark.parametrize(
    "line",
    [
        "",
        "nope",
        "query",
        "query --top-k x hi",
        "query -h",
        "replay",
        "replay --text hi",
        "diff onlyone",
        "timeline no-such-query",
        "events --since yesterday",
        "snapshot",
        "snapshot 123",
        "open",
        "ingest",
        "trace no-such-query",
        "bisect q not-a-callable",
        "replay last",
    ],
)
def test_bad_arguments_raise_usage_error(opened: Any, line: str) -> None:
    opened.magics_manager.registry["RagttMagics"].last_query_id = None
    with pytest.raises(UsageError):
        ragtt_line(opened, line)


def test_no_project_open_is_a_usage_error(shell: Any) -> None:
    with pytest.raises(UsageError, match="no project open"):
        ragtt_line(shell, "snapshots")


def test_run_cell_shows_usage_error_without_traceback(opened: Any, capsys: pytest.CaptureFixture[str]) -> None:
    result = opened.run_cell("%ragtt query --top-k nope")
    assert isinstance(result.error_in_exec, UsageError)
    err = capsys.readouterr()
    assert "Traceback" not in err.out + err.err and "expected a whole number" in err.out + err.err
