"""Diffs by passage on Flask's docs: 1.1.2 -> 2.0.0 changed SEND_FILE_MAX_AGE_DEFAULT's default."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

import ragtt
from ragtt.timetravel.passages import pair_passages
from tests.conftest import corpus

QUERY = "SEND_FILE_MAX_AGE_DEFAULT default cache timeout"


@pytest.fixture(scope="module")
def flask(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = corpus("evolving", "flask")
    proj = ragtt.Project.open(
        tmp_path_factory.mktemp("diff-flask") / "proj", embedder=ragtt.HashEmbedder(), progress=False
    )
    proj.ingest(root / "2020-04-03_flask-1.1.2")
    proj.snapshot("flask-1.1.2")
    then = proj.query(QUERY, mode="bm25", top_k=20)
    proj.ingest(root / "2021-05-11_flask-2.0.0")
    now = proj.query(QUERY, mode="bm25", top_k=20)
    proj.snapshot("flask-2.0.0")
    yield proj, then, now
    proj.close()


def test_an_edited_passage_is_one_changed_pair_with_grouped_runs(flask) -> None:  # type: ignore[no-untyped-def]
    proj, then, now = flask
    report = proj.diff(then.query_id, now.query_id)
    pair = next(p for p in report.changed if "43200" in p.left.text)
    assert pair.source == "docs/config.rst" and "SEND_FILE_MAX_AGE_DEFAULT" in pair.right.text
    assert pair.left in report.removed and pair.right in report.added
    assert ("delete", "``timedelta(hours=12)`` (``43200`` seconds)\n\n") in pair.runs
    assert ("insert", "``None``\n\n") in pair.runs
    assert all(p.similarity >= 0.6 and p.left.source == p.right.source for p in report.changed)
    n = report.counts
    assert n["changed"] + n["added"] == len(report.added) and n["changed"] + n["removed"] == len(report.removed)
    assert n["kept"] == len(report.kept) and sum(n.values()) > n["kept"]
    strict = pair_passages(report.removed, report.added, threshold=0.9)
    assert 0 < len(strict) < len(report.changed)


def test_diff_text_shows_both_answers_labels_and_the_edit(flask) -> None:  # type: ignore[no-untyped-def]
    proj, then, now = flask
    report = proj.diff(then.query_id, now.query_id)
    text = report.to_text()
    assert f"at flask-1.1.2 (v{then.index_version})" in text and f"at flask-2.0.0 (v{now.index_version})" in text
    assert "(``43200`` seconds)" in text.split("answer now:")[0]  # the old answer quotes the old default
    assert "answer now:" in text and "Default: ``None``" in text.split("answer now:")[1]
    assert "[-``timedelta(hours=12)`` (``43200`` seconds)-] {+``None``+}" in text
    assert f"{report.counts['changed']} changed, " in text and "no counterpart" in text
    html = report._repr_html_()
    assert "tex2jax_ignore mathjax_ignore" in html and "<del>``timedelta(hours=12)``" in html
    assert "<ins>``None``" in html and "answer then" in html


def test_pairing_two_top_20_runs_takes_under_50_ms(flask) -> None:  # type: ignore[no-untyped-def]
    _, then, now = flask
    assert len(then.chunks) == len(now.chunks) == 20
    timings = []
    for _ in range(7):
        # CPU time, not wall time: the parallel suite shares two cores with other workers
        start = time.process_time()
        pairs = pair_passages(then.chunks, now.chunks)  # every chunk against every chunk of its source
        timings.append(time.process_time() - start)
    assert len(pairs) >= 10
    assert sorted(timings)[3] < 0.05, timings


def test_cli_diff_without_flags_shows_both_answers(flask, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    from ragtt.cli import main

    proj, then, now = flask
    assert (
        main(
            [
                "diff",
                "--left",
                then.query_id,
                "--right",
                now.query_id,
                "--project",
                str(Path(proj.path)),
                "--embedder",
                "hash",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "answer then: [extractive answer" in out and "answer now:" in out and "flask-1.1.2 (v" in out


def test_lineage_reasons_are_sentences_with_labels(flask) -> None:  # type: ignore[no-untyped-def]
    proj, then, now = flask
    report = proj.lineage(then.query_id, now.query_id)
    label = f"flask-2.0.0 (v{now.index_version})"
    reasons = report.reasons()
    diff = proj.diff(then.query_id, now.query_id)
    # the default's edit, #1 at both versions: its passage changed in place, nothing entered or left
    edited = next(p for p in diff.changed if "43200" in p.left.text)
    assert edited.left.rank == edited.right.rank == 1
    for chunk in (edited.left, edited.right):
        assert reasons[chunk.chunk_id] == (
            f"chunk {chunk.chunk_id[:10]} (docs/config.rst, #1 -> #1) changed in place, rank kept: "
            f"docs/config.rst was re-ingested at {label} and this passage changed"
        )
    moved = [p for p in diff.changed if p.left.rank != p.right.rank]
    assert moved, "a changed passage that moved"
    for p in moved:
        way = "up" if p.right.rank < p.left.rank else "down"
        assert f"#{p.left.rank} -> #{p.right.rank}) changed in place, moved {way}: " in reasons[p.right.chunk_id]
    gone = [e for e in report.entries if e.passage == "gone"]
    assert {e.chunk_id for e in gone} <= {c.chunk_id for c in diff.removed_unpaired}
    assert all("this passage is no longer in it" in reasons[e.chunk_id] for e in gone)
    # The Windows "set SECRET_KEY" passage became a "CMD" tab in 2.0.0: few words in common,
    # the same subject, so lineage (paired as the diff pairs) says it changed, not that it went.
    windows = next(e for e in report.entries if e.change == "left" and "set`` builtin" in _text(then, e))
    assert windows.passage == "changed", reasons[windows.chunk_id]
    paired = {p.left.chunk_id for p in diff.changed} | {p.right.chunk_id for p in diff.changed}
    assert all(e.passage == "changed" for e in report.entries if e.chunk_id in paired and e.cause == "reingested")
    frame = report.frame()
    assert frame["why"].to_list() == list(reasons.values()) and "passage" in frame.columns
    assert label in report.to_text() and label in report._repr_html_()


def _text(run: ragtt.QueryResult, entry: Any) -> str:
    return next(c.text for c in run.chunks if c.chunk_id == entry.chunk_id)
