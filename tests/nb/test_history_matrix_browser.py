"""The HistoryMatrix widget in an exported report, in headless Chromium with every non-file
request aborted: the heatmap paints, hover names the cell, a click on a cell whose chunks
changed shows its ChunkDiff, on an unchanged one says so, a click on a question opens its
Timeline, the metric picker recolours; what the state's bound left out says so; and a
question that is a script payload stays text. A report of ragtt's widgets alone renders them
with ragtt's bootstrap, no widget manager in it; one that also shows an ipywidgets slider
carries the manager, which renders both."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from playwright.sync_api import expect

import ragtt
from ragtt.views import history_matrix as hm

from .conftest import REPO, Offline, export, screenshot, write_notebook
from .test_history_matrix import DATASET, build_flask

STATIC = REPO / "ragtt_nb" / "templates" / "ragtt" / "static"

EVIL = "<img src=x onerror=\"window.__pwned='question'\"> How do I install Flask?"
QUESTIONS = [*DATASET, {"id": "evil", "question": EVIL, "reference_contexts": ["pip install Flask"]}]


def _opening(project: Path) -> str:
    return (
        "import ragtt\nfrom ragtt_nb import HistoryMatrix\n"
        f"proj = ragtt.Project.open({str(project)!r}, embedder=ragtt.HashEmbedder(), progress=False)\n"
        f"m = proj.evaluate({QUESTIONS!r})"
    )


def matrix_notebook(folder: Path, project: Path) -> Path:
    return write_notebook(
        folder / "matrix.ipynb",
        [
            _opening(project),
            "HistoryMatrix(m, proj=proj)",
            "HistoryMatrix(m, proj=proj, embed_limit=1)",  # one diff, no timelines: the rest needs a kernel
        ],
    )


@pytest.fixture(scope="module")
def flask_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_flask(tmp_path_factory.mktemp("hm-project") / "proj")


@pytest.fixture(scope="module")
def report(flask_project: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("hm-report")
    project = flask_project
    # allow_writes: the report's runs land in the project, so the test reads back the same cells
    out = export(matrix_notebook(folder, project), folder / "matrix.html", execute=True, timeout=300, allow_writes=True)
    with ragtt.Project.open(project, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        wire = proj.evaluate(QUESTIONS).to_dict()  # read back from the log: the report's runs
        data = hm.build(proj, wire)
        bounded = hm.build(proj, wire, limit=1)
    states = np.frombuffer(data["cell"]["view"], dtype="u1").reshape(len(QUESTIONS), -1)
    return out, {"wire": wire, "states": states, "bounded": np.frombuffer(bounded["diffs"]["cell"]["view"], "<i4")}


def _click(page: Any, widget: Any, q: int, c: int) -> None:
    """Click cell (q, c); c = -1: the question's row in the question column."""
    canvas = widget.locator(".ragtt-hm-canvas")
    box = canvas.bounding_box()
    geo = {k: float(canvas.get_attribute(f"data-{k}")) for k in ("left", "top", "cell-w", "cell-h")}
    x = box["x"] + (20 if c < 0 else geo["left"] + (c + 0.5) * geo["cell-w"])
    page.mouse.click(x, box["y"] + geo["top"] + (q + 0.5) * geo["cell-h"])


def _open(offline: Offline, out: Path) -> Any:
    page = offline.open(out)
    # both matrices: the report's views render one after another, asynchronously
    expect(page.locator(".ragtt-history-matrix[data-painted]")).to_have_count(2, timeout=30_000)
    assert page.locator(".ragtt-history-matrix").count() == 2
    return page


MANAGER = ("require.js", "embed-amd.js", "anywidget.js")


def _inlined(html: str) -> list[str]:
    """Which of the widget manager's scripts (its embed bundle, RequireJS, anywidget) the report inlines."""
    return [name for name in MANAGER if (STATIC / name).read_text(encoding="utf-8") in html]


def test_a_report_of_ragtt_widgets_alone_carries_no_widget_manager(
    report: tuple[Path, dict[str, Any]], offline: Offline
) -> None:
    out, _ = report
    assert _inlined(out.read_text(encoding="utf-8")) == []
    page = _open(offline, out)
    # ragtt's bootstrap mounted both views, from the saved state, and nothing defined AMD modules
    hosts = page.locator(".ragtt-report-view")
    expect(hosts).to_have_count(2)
    assert [hosts.nth(i).get_attribute("data-state") for i in range(2)] == ["ready", "ready"]
    assert page.locator(".widget-subarea").count() == 0
    assert page.evaluate("typeof window.define") == "undefined"
    assert offline.aborted == [] and offline.errors == []


@pytest.fixture(scope="module")
def mixed_report(
    flask_project: Path, report: tuple[Path, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A slider beside a matrix (after ``report``: its evaluation is read back, not run again)."""
    folder = tmp_path_factory.mktemp("hm-mixed")
    notebook = write_notebook(
        folder / "mixed.ipynb",
        [
            _opening(flask_project),
            "import ipywidgets\nipywidgets.IntSlider(value=7, max=9, description='top k')",
            "HistoryMatrix(m, proj=proj)",
        ],
    )
    return export(notebook, folder / "mixed.html", execute=True, timeout=300, allow_writes=True)


def test_a_report_that_also_shows_an_ipywidget_renders_both_through_the_manager(
    mixed_report: Path, report: tuple[Path, dict[str, Any]], offline: Offline
) -> None:
    assert _inlined(mixed_report.read_text(encoding="utf-8")) == list(MANAGER)
    states = report[1]["states"]
    page = offline.open(mixed_report)
    slider = page.locator(".widget-subarea .widget-slider")
    expect(slider).to_have_count(1, timeout=30_000)
    assert slider.locator(".widget-label").first.inner_text() == "top k"
    assert slider.locator(".widget-readout").inner_text() == "7"
    widget = page.locator(".widget-subarea .ragtt-history-matrix[data-painted]")
    expect(widget).to_have_count(1, timeout=30_000)
    assert page.locator(".ragtt-report-view").count() == 0
    # the manager's ragtt view works as the bootstrap's does: a changed cell's click shows its diff
    q, c = (int(x) for x in np.argwhere(states == hm.CHANGED)[0])
    widget.scroll_into_view_if_needed()
    _click(page, widget, q, c)
    page.wait_for_function(
        "() => document.querySelector('.ragtt-history-matrix').dataset.panel === 'diff'", timeout=30_000
    )
    assert widget.locator(".ragtt-chunk-diff .ragtt-chunk").count() > 0
    assert offline.aborted == [] and offline.errors == []


def test_cell_click_shows_the_diff_offline(
    report: tuple[Path, dict[str, Any]], offline: Offline, screens: Path
) -> None:
    out, known = report
    wire, states = known["wire"], known["states"]
    page = _open(offline, out)
    widget = page.locator(".ragtt-history-matrix").first
    widget.scroll_into_view_if_needed()
    assert widget.get_attribute("data-metric") == "context_recall"
    # the version axis as the Timeline's: the labels' distinguishing parts, the focused column's in full
    first = f"flask-0.10 (v{wire['columns'][0]['version']})"
    assert json.loads(widget.get_attribute("data-axis-labels")) == [first, "1.0", "2.0.0", "3.1.3"]
    q, c = (int(x) for x in np.argwhere(states == hm.CHANGED)[0])
    _click(page, widget, q, c)
    page.wait_for_function(
        "() => document.querySelector('.ragtt-history-matrix').dataset.panel === 'diff'", timeout=30_000
    )
    diff = widget.locator(".ragtt-chunk-diff")
    assert diff.locator(".ragtt-chunk").count() > 0
    ids = diff.locator(".ragtt-cd-id").all_inner_texts()
    assert ids == [wire["query_ids"][q][c - 1], wire["query_ids"][q][c]]
    title = widget.locator(".ragtt-hm-panel-title").inner_text()
    assert wire["columns"][c]["label"] in title and wire["columns"][c - 1]["label"] in title
    # the readout names the cell: its question, version, value and run
    readout = widget.locator(".ragtt-hm-readout").inner_text()
    assert wire["questions"][q]["question"] in readout and wire["query_ids"][q][c] in readout
    screenshot(page, widget, screens / "history_matrix_diff.png")
    # a cell whose chunks did not change needs no diff, and says so
    same = np.argwhere(states == hm.SAME)
    if len(same):
        _click(page, widget, int(same[0][0]), int(same[0][1]))
        assert widget.get_attribute("data-panel") == "same"
        assert "Same chunks" in widget.locator(".ragtt-hm-note").inner_text()
    _click(page, widget, q, 0)
    assert widget.get_attribute("data-panel") == "first"
    # a question: its Timeline, in the widget
    _click(page, widget, 1, -1)
    assert widget.get_attribute("data-panel") == "timeline"
    timeline = widget.locator(".ragtt-timeline")
    assert timeline.locator(".ragtt-tl-query").inner_text().endswith(wire["questions"][1]["question"])
    assert timeline.locator(".ragtt-chunk").count() > 0
    # the question's row focused, at the column whose run the Timeline shows (it stayed on (q, 0))
    assert (
        widget.locator(".ragtt-hm-readout")
        .inner_text()
        .startswith(f"{wire['questions'][1]['question']} · {wire['columns'][-1]['label']} (v")
    )
    # the picker recolours by another metric, and shows its got-worse list, from the report's own
    # state (no kernel to ask): none of these questions fell
    for metric in ("context_recall", "contains"):
        widget.locator("select.ragtt-hm-metric").select_option(metric)
        assert widget.get_attribute("data-metric") == metric
        assert (widget.get_attribute("data-worse"), widget.get_attribute("data-worse-metric")) == ("none", metric)
        assert f"no question's {metric} fell below 0.5" in widget.locator(".ragtt-hm-worse-head").inner_text()
    assert offline.aborted == [] and offline.errors == []


def test_hover_names_the_cell_and_payloads_stay_text(report: tuple[Path, dict[str, Any]], offline: Offline) -> None:
    out, known = report
    wire = known["wire"]
    page = _open(offline, out)
    widget = page.locator(".ragtt-history-matrix").first
    canvas = widget.locator(".ragtt-hm-canvas")
    box = canvas.bounding_box()
    geo = {k: float(canvas.get_attribute(f"data-{k}")) for k in ("left", "top", "cell-w", "cell-h")}
    evil = len(QUESTIONS) - 1
    page.mouse.move(box["x"] + geo["left"] + 1.5 * geo["cell-w"], box["y"] + geo["top"] + (evil + 0.5) * geo["cell-h"])
    tip = widget.locator(".ragtt-hm-tip")
    assert tip.is_visible()
    lines = tip.locator("div").all_inner_texts()
    assert lines[0] == EVIL and lines[1].startswith("flask-1.0 (v")
    assert lines[2].startswith("context_recall: ") and f"query {wire['query_ids'][evil][1]}" in lines
    _click(page, widget, evil, -1)
    assert widget.locator(".ragtt-timeline .ragtt-tl-query").inner_text().endswith(EVIL)
    assert page.evaluate("window.__pwned") is None and offline.dialogs == []
    assert page.locator(".ragtt-history-matrix img").count() == 0
    assert offline.aborted == [] and offline.errors == []


def test_what_the_bound_left_out_says_so_without_a_kernel(
    report: tuple[Path, dict[str, Any]], offline: Offline
) -> None:
    out, known = report
    states, bounded = known["states"], known["bounded"]
    page = _open(offline, out)
    widget = page.locator(".ragtt-history-matrix").nth(1)
    widget.scroll_into_view_if_needed()
    n_c = states.shape[1]
    # the bounded state holds one diff, the most changed cell's: another changed cell is not in it
    assert len(bounded) == 1
    q, c = next((int(a), int(b)) for a, b in np.argwhere(states == hm.CHANGED) if a * n_c + b != bounded[0])
    _click(page, widget, q, c)
    assert widget.get_attribute("data-panel") == "waiting"
    page.wait_for_function(
        "() => document.querySelectorAll('.ragtt-history-matrix')[1].dataset.panel === 'missing'", timeout=30_000
    )
    note = widget.locator(".ragtt-hm-note").inner_text()
    assert "no kernel has answered yet" in note and "embed_limit" in note
    _click(page, widget, int(bounded[0]) // n_c, int(bounded[0]) % n_c)
    assert widget.get_attribute("data-panel") == "diff"
    _click(page, widget, 0, -1)  # no timelines in this state
    page.wait_for_function(
        "() => document.querySelectorAll('.ragtt-history-matrix')[1].dataset.panel === 'missing'", timeout=30_000
    )
    assert "timeline is not in the widget's state" in widget.locator(".ragtt-hm-note").inner_text()
    assert offline.aborted == [] and offline.errors == []
