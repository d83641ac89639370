"""The HistoryMatrix widget's state without a browser, on a real matrix: four Flask releases
(one snapshot each) evaluated with ``proj.evaluate``; every cell's state checked against the
runs the log holds, the diffs and timelines a click needs, the bounds, and the kernel's answers."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragtt
from ragtt.views import history_matrix as hm
from ragtt.views.wire import split_buffers, strings
from ragtt_nb import HistoryMatrix
from tests.conftest import flask_releases

from .test_widgets import _buffers, _no_number_lists

# reference passages from the latest release: the first is absent from the older ones
DATASET = [
    {
        "id": "python",
        "question": "Which Python versions does Flask support?",
        "reference_contexts": ["Flask supports Python 3.9 and newer."],
    },
    {
        "id": "install",
        "question": "How do I install Flask with pip?",
        "reference_contexts": ["pip install Flask"],
        "must_contain": ["pip install"],
    },
    {
        "id": "deps",
        "question": "Which distributions are installed automatically with Flask?",
        "reference_contexts": ["Werkzeug implements WSGI, the standard Python interface between applications"],
    },
]


def build_flask(path: Path) -> Path:
    """Four Flask releases, one snapshot each ("flask-0.10" ... "flask-3.1.3")."""
    releases = flask_releases()
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        for release in (releases[0], releases[3], releases[7], releases[-1]):
            proj.ingest(release)
            proj.snapshot("flask-" + release.name.split("_flask-")[1])
    return path


@pytest.fixture(scope="module")
def flask_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_flask(tmp_path_factory.mktemp("hm") / "proj")


@pytest.fixture
def flask(flask_path: Path) -> Iterator[tuple[ragtt.Project, Any]]:
    with ragtt.Project.open(flask_path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        yield proj, proj.evaluate(DATASET)


def _ids(proj: ragtt.Project, query_id: str) -> list[str]:
    return [c["chunk_id"] for c in proj.run(query_id).chunks]


def test_every_cell_is_compared_with_the_previous_evaluated_column(flask: tuple[ragtt.Project, Any]) -> None:
    proj, matrix = flask
    wire = matrix.to_dict()
    data = hm.build(proj, wire)
    n_c = len(wire["columns"])
    assert n_c == 4 and len(wire["questions"]) == 3
    states = np.frombuffer(data["cell"]["view"], dtype="u1").reshape(3, n_c)
    diff_cells = np.frombuffer(data["diffs"]["cell"]["view"], dtype="<i4").tolist()
    for q, row in enumerate(wire["query_ids"]):
        assert states[q, 0] == hm.FIRST
        for c in range(1, n_c):
            same = _ids(proj, row[c]) == _ids(proj, row[c - 1])
            assert states[q, c] == (hm.SAME if same else hm.CHANGED), (q, c)
            # a diff travels exactly where the chunks changed, between the two cells' runs
            assert ((q * n_c + c) in diff_cells) == (not same)
    assert hm.CHANGED in states  # the releases change what Flask's docs say
    for cell, diff in zip(diff_cells, data["diffs"]["data"], strict=True):
        q, c = divmod(cell, n_c)
        assert (diff["left"]["id"], diff["right"]["id"]) == (wire["query_ids"][q][c - 1], wire["query_ids"][q][c])
        assert diff["left"]["version"] == wire["columns"][c - 1]["version"]
    assert strings(data["runs"]) == [q for row in wire["query_ids"] for q in row]
    assert data["questions"]["texts"] == [d["question"] for d in DATASET]
    assert data["embed"] == {
        "limit": hm.EMBED_LIMIT,
        "diffs_left_out": 0,
        "timelines_left_out": 0,
        "timelines": True,
        "compared": True,
        "advice": hm.NOTEBOOK_ADVICE,
    }


def test_values_absent_cells_and_the_version_axis(flask: tuple[ragtt.Project, Any]) -> None:
    proj, matrix = flask
    wire = matrix.to_dict()
    data = hm.build(proj, wire)
    assert data["metrics"] == matrix.metrics and "contains" in data["metrics"]
    for metric in data["metrics"]:
        got = hm.unquantize(data["values"][metric])
        want = np.array([np.nan if v is None else v for row in wire["cells"][metric] for v in row])
        assert np.array_equal(np.isnan(got), np.isnan(want))  # absent is absent, never 0
        assert np.allclose(got[~np.isnan(got)], want[~np.isnan(want)], atol=1e-4)
    # only the question with must_contain strings has a "contains" value
    contains = hm.unquantize(data["values"]["contains"]).reshape(3, 4)
    assert np.isnan(contains[0]).all() and not np.isnan(contains[1]).any()
    # the reference passage is only in the latest release's documents
    recall = hm.unquantize(data["values"]["context_recall"]).reshape(3, 4)
    assert recall[0, 3] == 1.0 and (recall[0, :3] < 0.5).all()
    versions = np.frombuffer(data["columns"]["version"]["view"], dtype="<i4").tolist()
    assert versions == [c.version for c in matrix.columns]
    assert data["columns"]["labels"] == ["flask-0.10", "flask-1.0", "flask-2.0.0", "flask-3.1.3"]
    assert data["names"] == {str(v): name for v, name in proj.version_labels().items()}


def test_state_is_compact(flask: tuple[ragtt.Project, Any]) -> None:
    proj, matrix = flask
    data = hm.build(proj, matrix.to_dict())
    _no_number_lists({k: v for k, v in data.items() if k not in ("diffs", "timeline")})
    assert {b["dtype"] for b in _buffers(data)} <= {"int32", "float32", "uint16", "uint8"}
    # a chunk's text travels once, however many diffs and timelines show it
    texts = strings(data["chunks"]["texts"])
    assert len(set(strings(data["chunks"]["ids"]))) == len(texts)
    assert all("texts" not in d["chunks"] and "rows" in d["chunks"] for d in data["diffs"]["data"])
    assert all("chunks" not in f for f in data["timeline"]["focal"])
    # the question's timeline: its last run, at every version of the project
    focal = data["timeline"]["focal"]
    assert [f["query_id"] for f in focal] == [row[-1] for row in matrix.query_ids]
    assert len(np.frombuffer(focal[0]["version_result"]["view"], dtype="<i4")) == len(proj.versions())


def test_unparseable_verdicts_are_marked_with_their_raw_text(flask: tuple[ragtt.Project, Any]) -> None:
    proj, _ = flask
    raw = "<script>alert(1)</script> I'd say mostly faithful?"
    judge = ragtt.LiteLLMJudge("openai/gpt-4o-mini", mock_response=raw)  # a verdict that does not parse
    wire = proj.evaluate(DATASET[:1], at=["flask-2.0.0", "flask-3.1.3"], judge=judge).to_dict()
    assert wire["unparseable"]
    data = hm.build(proj, wire)
    u = data["unparseable"]
    cells = np.frombuffer(u["cell"]["view"], dtype="<i4").tolist()
    metrics = [data["metrics"][i] for i in np.frombuffer(u["metric"]["view"], dtype="<i4")]
    versions = [c["version"] for c in wire["columns"]]
    want = sorted((versions.index(m["version"]), m["metric"]) for m in wire["unparseable"])  # one question: row 0
    assert sorted(zip(cells, metrics, strict=True)) == want
    assert set(u["raw"]) == {raw}
    # an unparseable cell has no value: it is marked, not drawn as 0
    for cell, metric in zip(cells, metrics, strict=True):
        assert np.isnan(hm.unquantize(data["values"][metric])[cell])


def test_bounds_leave_diffs_and_timelines_to_the_kernel(flask: tuple[ragtt.Project, Any]) -> None:
    proj, matrix = flask
    wire = matrix.to_dict()
    full = hm.build(proj, wire)
    small = hm.build(proj, wire, limit=1, ids_limit=4)
    changed = int((np.frombuffer(full["cell"]["view"], dtype="u1") == hm.CHANGED).sum())
    assert len(small["diffs"]["data"]) == 1 and small["embed"]["diffs_left_out"] == changed - 1
    assert small["timeline"]["focal"] == [] and small["embed"]["timelines_left_out"] == 3
    assert small["runs"] is None  # 12 cells > ids_limit: the view names cells, not ids
    # the kernel answers by question and column with the matrix's query ids
    cell = np.frombuffer(full["diffs"]["cell"]["view"], dtype="<i4").tolist()[-1]
    q, c = divmod(cell, 4)
    content = {"type": "diff", "key": "k1", "question": q, "column": c, "previous": c - 1}
    reply = hm.answer(proj, content, wire["query_ids"])
    assert reply is not None and reply["key"] == "k1" and reply["same"] is False
    assert reply["data"]["right"]["id"] == wire["query_ids"][q][c]
    json.dumps(split_buffers(reply)[0])  # the content half of a comm message is JSON
    assert split_buffers(reply)[1]
    timeline = hm.answer(proj, {"type": "timeline", "key": "t", "query_id": wire["query_ids"][0][-1]})
    assert timeline is not None and timeline["focal"]["query_id"] == wire["query_ids"][0][-1]
    assert timeline["base"]["focal"] is None
    # what cannot be answered says why; what is not a request gets no answer
    bad = hm.answer(proj, {"type": "diff", "key": "k2", "left": "nope", "right": wire["query_ids"][0][0]})
    assert bad is not None and bad["key"] == "k2" and "nope" in bad["error"]
    assert hm.answer(proj, {"type": "page"}) is None


def test_the_widget(flask: tuple[ragtt.Project, Any]) -> None:
    proj, matrix = flask
    with pytest.raises(TypeError, match="proj=proj"):
        HistoryMatrix(dataclasses.replace(matrix, project=None))  # a matrix that does not know its project
    assert HistoryMatrix(matrix).metrics == matrix.metrics  # proj.evaluate's matrix does
    with pytest.raises(TypeError, match=r"proj\.evaluate"):
        HistoryMatrix(proj)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="context_recall"):
        HistoryMatrix(matrix, proj=proj, metric="ndcg@10")
    w = HistoryMatrix(matrix, proj=proj)
    assert w.metric == "context_recall" and w.metrics == matrix.metrics
    # timelines cost a retrieval per version: a live widget leaves them to the kernel, until asked
    assert w._data["timeline"]["focal"] == [] and w._data["embed"]["timelines_left_out"] == 3
    assert w.embed_timelines() == 0 and len(w._data["timeline"]["focal"]) == 3
    assert w.versions == [c.version for c in matrix.columns]
    w.metric = "contains"  # the picker
    with pytest.raises(Exception, match="not in this matrix"):
        w.metric = "faithfulness"
    cell = w.cell(1, 1)
    assert cell["question_id"] == "install" and cell["version"] == matrix.columns[1].version
    expected = matrix.to_dict()["cells"]["contains"][1][1]  # the extractive answer's, whichever it is
    assert cell["query_id"] == matrix.query_ids[1][1] and expected is not None
    assert cell["values"]["contains"] == pytest.approx(expected, abs=1e-4)
    assert cell["state"] in ("same", "changed")
    assert w.cell(0, 0)["values"]["contains"] is None
    sent: list[tuple[Any, list[Any]]] = []
    w.send = lambda content, buffers=None: sent.append((content, buffers or []))  # type: ignore[method-assign]
    w._on_request(w, {"type": "timeline", "key": "t0", "question": 0, "column": 3}, [])
    ((content, buffers),) = sent
    assert content["key"] == "t0" and content["query_id"] == matrix.query_ids[0][3] and buffers
    assert "3 questions x 4 versions" in repr(w) and w.frame().height > 0
    w.close()


def test_the_widget_carries_every_metrics_got_worse_list(flask: tuple[ragtt.Project, Any]) -> None:
    """The notebook's state (a report's, saved with it) holds each metric's got-worse list, as
    ``regressions()`` has it: the picker shows any metric's with no kernel (it carried none)."""
    proj, _ = flask
    # flask-1.0 only held this passage of the four releases: the question gets worse at flask-2.0.0
    passage = "Flask supports Python 3.4 and newer, Python 2.7, and PyPy."
    fell = proj.evaluate([*DATASET, {"id": "py27", "question": "Python 2.7 and PyPy", "reference_contexts": [passage]}])
    w = HistoryMatrix(fell, proj=proj)
    worse = w._data["worse"]
    assert worse["threshold"] == 0.5 and set(worse["metrics"]) == set(fell.metrics)
    versions = [c.version for c in fell.columns]
    for metric in fell.metrics:
        expected = fell.regressions(metric)
        rows = worse["metrics"][metric]
        assert [fell.question_ids[r["question"]] for r in rows] == expected["question_id"].to_list()
        assert [versions[r["good"]] for r in rows] == expected["last_good_version"].to_list()
        assert [versions[r["bad"]] for r in rows] == expected["first_bad_version"].to_list()
        assert [r["reason"] for r in rows] == expected["reason"].to_list()
    assert [fell.question_ids[r["question"]] for r in worse["metrics"]["context_recall"]] == ["py27"]
    assert "flask-1.0" in worse["metrics"]["context_recall"][0]["reason"]
    w.close()


def test_ragtt_eval_magic_shows_the_widget(
    shell: Any, flask_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(row) + "\n" for row in DATASET), encoding="utf-8")
    shell.run_line_magic("ragtt", f"open {flask_path}")
    widget = shell.run_line_magic("ragtt", f"eval {questions} --metric context_precision")
    assert isinstance(widget, HistoryMatrix) and widget.metric == "context_precision"
    assert len(widget.versions) == 4
    table = shell.run_line_magic("ragtt", f"eval {questions} --table")
    assert isinstance(table, ragtt.HistoryMatrix) and table.metrics[0] == "context_recall"
    gated = shell.run_line_magic("ragtt", f"eval {questions} --at latest --baseline flask-0.10")
    assert isinstance(gated, HistoryMatrix) and gated.metric == "context_recall"
    assert "gate on context_recall" in capsys.readouterr().out
    widget.close()
    gated.close()


def test_building_and_answering_log_no_generation(flask: tuple[ragtt.Project, Any]) -> None:
    """The matrix shows retrieval diffs: its diffs never generate the answers a run lacks
    (a logged replay with generation per side, for up to ``EMBED_LIMIT`` diffs)."""
    proj, matrix = flask
    wire = matrix.to_dict()
    events = len(proj.events.frame())
    data = hm.build(proj, wire)
    cell = np.frombuffer(data["diffs"]["cell"]["view"], dtype="<i4").tolist()[-1]
    q, c = divmod(cell, len(wire["columns"]))
    content = {"type": "diff", "key": "k", "question": q, "column": c, "previous": c - 1}
    assert "error" not in (hm.answer(proj, content, wire["query_ids"]) or {})
    assert len(proj.events.frame()) == events
