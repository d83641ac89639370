"""Acceptance on real history: Flask's docs at 22 releases, one snapshot each, and questions
whose reference passages come from the LATEST release, evaluated across all of them."""

from __future__ import annotations

import dataclasses
import itertools
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragtt
from ragtt.timetravel.golden import DEFAULT_MATCH, containment, shingles, text_shingles
from tests.conftest import flask_releases, release_label

LATEST = {
    "What is the minimum Python version supported?": (
        "docs/installation.rst",
        "We recommend using the latest version of Python. Flask supports Python 3.9 and newer.",
    ),
    "How do I configure trusted hosts?": (
        "docs/config.rst",
        "Validate :attr:`.Request.host` and other attributes that use it against these trusted values.",
    ),
    "SESSION_COOKIE_SAMESITE default": (
        "docs/config.rst",
        "Restrict how cookies are sent with requests from external sites. Can be set to ``'Lax'`` "
        "(recommended) or ``'Strict'``.",
    ),
    "How do I rotate secret keys?": (
        None,  # given as plain text: found in whichever retrieved source holds it
        "A list of old secret keys that can still be used for unsigning. This allows a project to implement "
        "key rotation without invalidating active sessions or other recently-signed secrets.",
    ),
}
MODE, TOP_K = "bm25", 5


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ragtt.Project]:
    path = tmp_path_factory.mktemp("flask-matrix") / "proj"
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        for release in flask_releases():
            proj.ingest(release)
            proj.snapshot(release_label(release))
        yield proj


@pytest.fixture(scope="module")
def dataset() -> ragtt.EvalDataset:
    latest = flask_releases()[-1]
    rows = []
    for question, (source, passage) in LATEST.items():
        if source is not None:  # the passage really is in the latest release, where it says
            text = (latest / source).read_text(encoding="utf-8")
            assert containment(shingles(passage), text_shingles(text)) == 1.0, question
        rows.append({"question": question, "reference_contexts": [{"text": passage, "source": source or ""}]})
    rows.append({"question": "install Flask with pip in a virtual environment", "must_contain": ["pip install"]})
    return ragtt.EvalDataset.from_records(rows, name="flask-questions")


@pytest.fixture(scope="module")
def matrix(history: ragtt.Project, dataset: ragtt.EvalDataset) -> ragtt.HistoryMatrix:
    return history.evaluate(dataset, mode=MODE, top_k=TOP_K)


def test_one_column_per_snapshot(matrix: ragtt.HistoryMatrix) -> None:
    labels = [release_label(r) for r in flask_releases()]
    assert len(matrix.columns) == 22
    assert [c.label for c in matrix.columns] == labels
    assert matrix.to_dict()["columns"][0]["at"].endswith("Z")
    # one release is byte-identical to the one before it: two labels, one version, one run
    versions = [c.version for c in matrix.columns]
    assert len(set(versions)) == 21
    assert matrix.computed_versions == 21


def test_every_cell_replays_identically_and_is_replay_text(history: ragtt.Project, matrix: ragtt.HistoryMatrix) -> None:
    for qi, question in enumerate(matrix.questions):
        for ci, column in enumerate(matrix.columns):
            query_id = matrix.query_ids[qi][ci]
            assert query_id is not None
            replayed = history.replay(query_id)
            assert replayed.matches_original, (question, column.label)
            assert replayed.index_version == column.version
            fresh = history.replay_text(question, at=column.label, mode=MODE, top_k=TOP_K)
            assert [c.chunk_id for c in fresh.chunks] == [c.chunk_id for c in replayed.chunks]
            assert [c.score for c in fresh.chunks] == pytest.approx([c.score for c in replayed.chunks], abs=1e-6)


def test_a_passage_absent_from_a_release_scores_below_half_there(
    history: ragtt.Project, matrix: ragtt.HistoryMatrix
) -> None:
    recall = matrix.wide("context_recall")
    absent_cells = 0
    for question, (_, passage) in LATEST.items():
        own = shingles(passage)
        qi = matrix.questions.index(question)
        for column in matrix.columns:
            sources = history.chunks(at=column.label)["source"].unique().to_list()
            held = max(containment(own, text_shingles(history.document(s, at=column.label).text)) for s in sources)
            if held < DEFAULT_MATCH:
                absent_cells += 1
                assert recall[column.name][qi] < 0.5, (question, column.label)
    assert absent_cells >= 20  # trusted hosts, key fallbacks and Python 3.9 are recent


def test_recent_passages_are_found_once_they_exist(matrix: ragtt.HistoryMatrix) -> None:
    recall = matrix.wide("context_recall")
    qi = matrix.questions.index("How do I configure trusted hosts?")
    assert recall["flask-3.1.3"][qi] == 1.0
    assert recall["flask-0.10"][qi] == 0.0


def test_regressions_agree_with_the_frame(matrix: ragtt.HistoryMatrix) -> None:
    frame = matrix.frame()
    for threshold in (0.5, 1.0):
        found = matrix.regressions("context_recall", threshold=threshold)
        expected = 0
        for qi in range(len(matrix.question_ids)):
            values = [v for v in matrix.cells["context_recall"][qi] if v is not None]
            expected += sum(a >= threshold > b for a, b in itertools.pairwise(values))
        assert found.height == expected
        for row in found.iter_rows(named=True):
            cells = frame.filter((frame["question_id"] == row["question_id"]) & (frame["metric"] == "context_recall"))
            good = cells.filter(cells["query_id"] == row["last_good_query_id"])["value"].to_list()
            bad = cells.filter(cells["query_id"] == row["first_bad_query_id"])["value"].to_list()
            assert good and min(good) >= threshold and good[0] == row["last_good_value"]
            assert bad and max(bad) < threshold and bad[0] == row["first_bad_value"]
            assert row["last_good_version"] < row["first_bad_version"]
            assert row["reason"]


def test_contains_counts_the_answer(matrix: ragtt.HistoryMatrix) -> None:
    assert "contains" in matrix.metrics
    qi = matrix.questions.index("install Flask with pip in a virtual environment")
    row = matrix.cells["contains"][qi]
    assert all(v is not None and 0.0 <= v <= 1.0 for v in row)
    other = matrix.questions.index("How do I configure trusted hosts?")
    assert all(v is None for v in matrix.cells["contains"][other])  # absent, not 0


def test_evaluating_twice_searches_nothing_and_gives_an_equal_frame(
    history: ragtt.Project, dataset: ragtt.EvalDataset, matrix: ragtt.HistoryMatrix, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ragtt.timetravel.run as run_module

    calls: list[Any] = []
    real = run_module.retrieve_many
    monkeypatch.setattr(run_module, "retrieve_many", lambda *a, **k: calls.append(a) or real(*a, **k))
    before = history.events.frame(types=["replay.retrieval.executed"]).height
    again = history.evaluate(dataset, mode=MODE, top_k=TOP_K)
    assert calls == []
    assert history.events.frame(types=["replay.retrieval.executed"]).height == before
    assert again.computed_versions == 0 and again.reused_versions == 21
    assert again.frame().equals(matrix.frame())
    assert again.to_dict() == matrix.to_dict() | {"computed_versions": 0, "reused_versions": 21}


def test_to_dict_is_the_wire_contract(matrix: ragtt.HistoryMatrix) -> None:
    data = matrix.to_dict()
    n_q, n_c = len(data["questions"]), len(data["columns"])
    assert data["metrics"] == ["context_recall", "context_precision", "contains"]
    assert set(data["questions"][0]) == {"id", "question"}
    assert set(data["columns"][0]) == {"version", "label", "at"}
    for rows in data["cells"].values():
        assert len(rows) == n_q and all(len(r) == n_c for r in rows)
    assert len(data["query_ids"]) == n_q and all(len(r) == n_c for r in data["query_ids"])
    assert data["unparseable"] == []
    assert data["regressions"] == matrix.regressions().to_dicts()
    assert json.loads(json.dumps(data)) == data


def test_a_passage_that_left_is_a_regression_with_its_reason(history: ragtt.Project) -> None:
    """Flask 1.0's Python support sentence, rewritten in 2.0.0: the question regresses there,
    and the reason is the re-ingest of installation.rst that changed the passage."""
    old = (
        "We recommend using the latest version of Python 3. Flask supports Python 3.4 and newer, Python 2.7, and PyPy."
    )
    rows = [{"question": "Which Python versions does Flask support?", "reference_contexts": [old]}]
    matrix = history.evaluate(rows, mode=MODE, top_k=TOP_K)
    found = matrix.regressions("context_recall", threshold=0.5)
    assert found.height == 1, matrix.to_text()
    row = found.row(0, named=True)
    assert row["first_bad_label"] == "flask-2.0.0"
    assert row["last_good_value"] == 1.0 and row["first_bad_value"] == 0.0
    assert "docs/installation.rst was re-ingested at flask-2.0.0" in row["reason"], row["reason"]
    # the words the re-ingest took out of the passage as 1.1.2 said it ("3.5"), not its first words
    assert row["reason"].startswith(
        f"docs/installation.rst at flask-1.1.2 (v{row['last_good_version']}) held the reference passage "
        'approximately, with the words "3" and "3.5 and newer, Python 2.7, and PyPy"'
    ), row["reason"]
    assert "flask-2.0.0" in row["reason"] and "without them" in row["reason"]


def test_a_column_is_dated_as_the_timeline_dates_it(tmp_path: Path) -> None:
    # Releases ingested with their dates (as_of): the matrix dated every column by when the
    # ingest was committed (the same minute for all), while the Timeline and at=<datetime>
    # place each at its release date.
    import json
    from datetime import UTC, datetime

    root = flask_releases()[0].parent
    dated = {
        r["dir"]: datetime.fromisoformat(r["date"])
        for r in json.loads((root / "manifest.json").read_text())["versions"]
    }
    releases = [flask_releases()[i] for i in (0, 7, 21)]
    with ragtt.Project.open(tmp_path / "proj", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest_texts({"draft.md": "An undated draft, ingested before any release."})  # no snapshot
        for release in releases:
            proj.ingest(release, as_of=dated[release.name])
            proj.snapshot(release_label(release))
        proj.ingest_texts({"notes.md": "An undated note about Flask's secret keys."})  # no as_of: its commit time
        proj.snapshot("undated")
        rows = [
            {
                "question": "How do I rotate secret keys?",
                "reference_contexts": [LATEST["How do I rotate secret keys?"][1]],
            }
        ]
        matrix = proj.evaluate(rows, mode=MODE)
        expected = [dated[r.name].astimezone(UTC) for r in releases]
        ats = matrix.frame().unique("version", maintain_order=True)["at"].to_list()
        assert ats[:3] == expected
        assert abs((ats[3] - datetime.now(UTC)).total_seconds()) < 600
        assert [c.at for c in proj.read_evaluation(matrix.evaluation_id).columns] == [c.at for c in matrix.columns]
        # every version, the undated ones before the first release too: each where the Timeline puts it
        placed = proj.events.version_times()
        every = proj.evaluate(rows, mode=MODE, at="versions")
        assert len(every.columns) == 5  # the draft's version, then the four of the snapshots
        assert every.columns[0].at == every.columns[1].at == matrix.columns[0].at  # sits with the release after it
        for column in every.columns:
            assert datetime.fromisoformat(column.at) == placed[column.version], column
        asked = datetime(2021, 6, 1, tzinfo=UTC)  # after flask-2.0.0 (2021-05-11), before 3.1.3
        (column,) = proj.evaluate(rows, mode=MODE, at=[asked]).columns
        assert column.label == release_label(releases[1]) and column.at == matrix.columns[1].at


def _plain(value: Any) -> Any:
    """Wire state with its buffers as bytes, comparable with ==."""
    if isinstance(value, dict):
        return {k: bytes(v) if isinstance(v, memoryview) else _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def test_the_page_state_is_what_each_view_builds_alone(
    history: ragtt.Project, matrix: ragtt.HistoryMatrix, tmp_path: Path
) -> None:
    """The page (``save_html``, the widget's embedded state) reads the evaluation's runs back at
    evaluated columns, searches the questions of a version together and shares reads across its
    diffs: what it shows is what each view builds alone. A question's timeline is the one a
    ``retrieve_at`` per version gives; a diff's reasons are ``proj.lineage`` of its two runs,
    asked of a project opened afresh (none of the page's reads cached)."""
    from ragtt.views import history_matrix, timeline
    from ragtt.views.wire import strings

    data = history_matrix.build(history, matrix.to_dict(regressions=False))
    ids, sources, texts = (strings(data["chunks"]["ids"]), data["chunks"]["sources"], strings(data["chunks"]["texts"]))
    _, versions, _ = timeline.build(history, None)
    shown = list(np.frombuffer(data["timeline"]["question"]["view"], dtype="<i4"))
    assert shown == list(range(len(matrix.questions)))
    for q, part in zip(shown, data["timeline"]["focal"], strict=True):
        query_id = matrix.query_ids[q][-1]
        assert query_id is not None
        run = history.run(query_id)
        alone = timeline.FocalResults()
        for version in versions:
            alone.add(history.retrieve_at(run.query, version, run.plan))
        expected = alone.wire(query_id, run.query, run.index_version)
        rows = np.frombuffer(part["rows"]["view"], dtype="<i4")
        assert [{"chunk_id": ids[r], "source": sources[r], "text": texts[r]} for r in rows] == expected["chunks"]
        assert _plain({k: v for k, v in part.items() if k != "rows"}) == _plain(
            {k: v for k, v in expected.items() if k != "chunks"}
        )
    diffs = data["diffs"]["data"]
    assert diffs and any(d["reasons"] for d in diffs)
    copy = tmp_path / "copy"
    shutil.copytree(history.path, copy)
    with ragtt.Project.open(copy, embedder=ragtt.HashEmbedder(), progress=False) as fresh:
        for d in diffs:
            assert d["reasons"] == fresh.lineage(d["left"]["id"], d["right"]["id"]).reasons()


def test_reasons_are_worked_out_once_per_matrix(history: ragtt.Project) -> None:
    """The text, the page's notes, ``to_dict()`` and ``regressions()`` share each reason: a
    regression is explained once per matrix however many views show it."""
    old = "Flask supports Python 3.4 and newer, Python 2.7, and PyPy."
    rows = [{"question": "Which Python versions does Flask support?", "reference_contexts": [old]}]
    matrix = history.evaluate(rows, mode=MODE, top_k=TOP_K)
    assert matrix.explain is not None
    explain = matrix.explain
    asked: list[Any] = []

    def counting(falls: list[Any]) -> list[str | None]:
        asked.extend(falls)
        return explain(falls)

    again = dataclasses.replace(matrix, explain=counting)
    text = again.to_text()
    assert again.to_text() == text
    wire = again.to_dict()["regressions"]
    assert again.regressions().to_dicts() == wire
    assert wire and all(r["reason"] for r in wire)
    assert len(asked) == len(set(asked)) == len(wire)
