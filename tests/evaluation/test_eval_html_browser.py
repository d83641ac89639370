"""``ragtt eval DATASET --out m.html`` on four Flask releases, the page opened from disk in
headless Chromium with every request other than file:, data: and blob: aborted: the heatmap
paints on its canvas, hover names the cell and its value, a click on a cell whose chunks
changed shows its ChunkDiff (from the page's own state: there is no kernel and no server), a
click on a question its Timeline and moves the focus to the cell it shows; under the heatmap,
the picked metric's got-worse list with each regression's reason, a click on one opening its
cell; past the page's bound, a click says how to put more in; and a question holding
``</script><script>alert(1)</script>`` stays text (in the heatmap, the list and the panel):
the page's state block keeps it escaped, and nothing runs."""

from __future__ import annotations

import base64
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from playwright.sync_api import expect

import ragtt
from ragtt.cli import main
from ragtt.views import history_matrix as hm
from tests.nb import conftest as nb_conftest
from tests.nb.conftest import Offline, screenshot
from tests.nb.test_history_matrix import DATASET, build_flask
from tests.nb.test_history_matrix_browser import _click

# tests/nb's fixtures: the screenshots' folder ($RAGTT_SCREENSHOTS), and an offline page in the shared Chromium
screens = nb_conftest.screens
offline = nb_conftest.offline

EVIL = "</script><script>alert(1)</script><!-- Which Python versions, Python 3.4 and newer, Python 2.7, and PyPy?"
# in flask-1.0's docs only (of the four releases): the question gets worse at flask-2.0.0, in
# context_recall (the passage left) and contains (the answer lost "Python 2.7")
PY27 = "We recommend using the latest version of Python 3. Flask supports Python 3.4 and newer, Python 2.7, and PyPy."
QUESTIONS = [
    *DATASET,
    {"id": "evil", "question": EVIL, "reference_contexts": [PY27], "must_contain": ["Python 2.7"]},
]
STATE = "application/vnd.jupyter.widget-state+json"


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The page ``ragtt eval`` wrote, its embedded state decoded, and the matrix read back from the log."""
    folder = tmp_path_factory.mktemp("eval-html")
    project = build_flask(folder / "proj")
    dataset = folder / "questions.jsonl"
    dataset.write_text("\n".join(json.dumps(q) for q in QUESTIONS), encoding="utf-8")
    out = folder / "m.html"
    assert main(["--project", str(project), "--embedder", "hash", "eval", str(dataset), "--out", str(out)]) == 0
    with ragtt.Project.open(project, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        again = proj.evaluate(str(dataset))
        assert again.computed_versions == 0  # read back: the cells the page was written from
        wire = again.to_dict(regressions=False)
        worse = {m: again.regressions(m).to_dicts() for m in again.metrics}
        # one diff (the most changed cell's), no timelines: what a click needs past that is not in the page
        bounded = again.save_html(folder / "bounded.html", embed_limit=1, embed_timelines=False)
        # no questions (a matrix evaluate cannot return: it refuses an empty dataset): an empty page
        nothing = dataclasses.replace(
            again, question_ids=[], questions=[], query_ids=[], cells={m: [] for m in again.cells}
        )
        empty = nothing.save_html(folder / "empty.html")
    return {
        "out": out,
        "html": out.read_text(encoding="utf-8"),
        "wire": wire,
        "bounded": bounded,
        "empty": empty,
        "worse": worse,
    }


def saved_data(html: str) -> dict[str, Any]:
    """The HistoryMatrix model's ``_data`` in the page, its buffers back as bytes."""
    blocks = re.findall(rf'<script type="{re.escape(STATE)}">(.*?)</script>', html, flags=re.S)
    assert len(blocks) == 1
    (model,) = json.loads(blocks[0])["state"].values()
    state = model["state"]
    for buffer in model["buffers"]:
        at = state
        for key in buffer["path"][:-1]:
            at = at[key]
        at[buffer["path"][-1]] = base64.b64decode(buffer["data"])
    return dict(state["_data"])


def _open(offline: Offline, out: Path) -> Any:
    page = offline.open(out)
    expect(page.locator(".ragtt-history-matrix[data-painted]")).to_have_count(1, timeout=30_000)
    return page


def test_the_page_paints_the_heatmap_and_a_cell_click_shows_its_diff_offline(
    evaluated: dict[str, Any], offline: Offline, screens: Path
) -> None:
    wire = evaluated["wire"]
    data = saved_data(evaluated["html"])
    n_c = len(wire["columns"])
    states = np.frombuffer(data["cell"]["view"], dtype="u1").reshape(len(QUESTIONS), n_c)
    diffs = set(np.frombuffer(data["diffs"]["cell"]["view"], dtype="<i4").tolist())
    changed = [(int(q), int(c)) for q, c in np.argwhere(states == hm.CHANGED)]
    assert changed and {q * n_c + c for q, c in changed} == diffs  # every changed cell's diff is in the page
    assert data["embed"]["timelines"] and data["embed"]["timelines_left_out"] == 0

    page = _open(offline, evaluated["out"])
    widget = page.locator(".ragtt-history-matrix")
    assert widget.get_attribute("data-metric") == "context_recall"
    assert page.locator(".ragtt-report-view").get_attribute("data-state") == "ready"
    # painted: the canvas holds the cells' colours (a cell's centre is neither blank nor white)
    canvas = widget.locator(".ragtt-hm-canvas")
    geo = {k: float(canvas.get_attribute(f"data-{k}")) for k in ("left", "top", "cell-w", "cell-h")}
    rgba = canvas.evaluate(
        """(c, g) => { const r = window.devicePixelRatio || 1;
          return [...c.getContext('2d').getImageData(Math.round((g.left + g['cell-w'] / 2) * r),
            Math.round((g.top + g['cell-h'] / 2) * r), 1, 1).data]; }""",
        geo,
    )
    assert rgba[3] == 255 and rgba[:3] != [255, 255, 255], rgba

    # hover names the cell: its question, version, value and run
    q, c = changed[0]
    box = canvas.bounding_box()
    assert box is not None
    page.mouse.move(
        box["x"] + geo["left"] + (c + 0.5) * geo["cell-w"], box["y"] + geo["top"] + (q + 0.5) * geo["cell-h"]
    )
    tip = widget.locator(".ragtt-hm-tip")
    expect(tip).to_be_visible()
    lines = tip.locator("div").all_inner_texts()
    value = wire["cells"]["context_recall"][q][c]
    assert lines[0] == wire["questions"][q]["question"] and lines[1].startswith(wire["columns"][c]["label"])
    assert lines[2] == f"context_recall: {value:.3f}" and f"query {wire['query_ids'][q][c]}" in lines

    # a click: the ChunkDiff between this cell's run and the question's run at the previous column
    _click(page, widget, q, c)
    expect(widget).to_have_attribute("data-panel", "diff")
    diff = widget.locator(".ragtt-chunk-diff")
    assert diff.locator(".ragtt-chunk").count() > 0
    assert diff.locator(".ragtt-cd-id").all_inner_texts() == [wire["query_ids"][q][c - 1], wire["query_ids"][q][c]]
    title = widget.locator(".ragtt-hm-panel-title").inner_text()
    assert wire["columns"][c]["label"] in title and wire["columns"][c - 1]["label"] in title
    screenshot(page, page.locator("body"), screens / "eval_html_diff.png")
    # a question: its Timeline, from the page too; the focus (ring and readout) moves to the cell
    # whose run the Timeline shows, the question's last (it stayed on the cell clicked before)
    other = (q + 1) % len(QUESTIONS)
    _click(page, widget, other, -1)
    expect(widget).to_have_attribute("data-panel", "timeline")
    assert widget.locator(".ragtt-timeline .ragtt-chunk").count() > 0
    readout = widget.locator(".ragtt-hm-readout").inner_text()
    last = wire["columns"][-1]["label"]
    assert readout.startswith(f"{wire['questions'][other]['question']} · {last} (v"), readout
    assert f"query {wire['query_ids'][other][-1]}" in readout
    assert widget.locator(".ragtt-timeline .ragtt-tl-query").inner_text().endswith(wire["questions"][other]["question"])
    # the got-worse list is the widget's now, not a static context_recall list below the page
    assert "got worse" not in page.locator(".ragtt-page-foot").inner_text().lower()
    assert offline.aborted == [] and offline.errors == []


def test_the_got_worse_list_follows_the_picked_metric_and_opens_its_cell(
    evaluated: dict[str, Any], offline: Offline, screens: Path
) -> None:
    """Each metric's list is in the page: picking a metric shows its own (it stayed
    context_recall's), each regression with its reason; a click on one opens its cell's diff;
    the question (a script payload) and the reason stay text."""
    wire, worse = evaluated["wire"], evaluated["worse"]
    assert [r["question_id"] for r in worse["context_recall"]] == ["evil"]  # what the fixture is for
    page = _open(offline, evaluated["out"])
    widget = page.locator(".ragtt-history-matrix")
    items = widget.locator(".ragtt-hm-worse-go")
    for metric in ("context_recall", "contains", "context_precision"):
        page.select_option(".ragtt-hm-metric", metric)
        expect(widget).to_have_attribute("data-worse-metric", metric)
        expected = worse[metric]
        expect(widget).to_have_attribute("data-worse", "list" if expected else "none")
        head = widget.locator(".ragtt-hm-worse-head").inner_text()
        assert f"{metric} fell below 0.5" in head or f"no question's {metric} fell below 0.5" in head, head
        assert items.count() == len(expected)
        for item, r in zip(items.all(), expected, strict=True):
            assert item.locator(".ragtt-hm-worse-q").inner_text() == r["question"]
            assert item.locator(".ragtt-hm-worse-why").inner_text() == f"why: {r['reason']}"
            fall = item.locator(".ragtt-hm-worse-fall").inner_text()
            assert f"at {r['last_good_label']} (v{r['last_good_version']}) → " in fall
            assert fall.endswith(f"at {r['first_bad_label']} (v{r['first_bad_version']})")
    assert worse["contains"][0]["reason"].startswith("the answer lost")  # a list of its own, not context_recall's
    assert worse["contains"][0]["reason"] != worse["context_recall"][0]["reason"]

    # a click on the regression: its cell (the first bad column) focused and its diff opened
    page.select_option(".ragtt-hm-metric", "context_recall")
    r = worse["context_recall"][0]
    qi = [q["id"] for q in wire["questions"]].index("evil")
    bad = [c["version"] for c in wire["columns"]].index(r["first_bad_version"])
    items.first.click()
    expect(widget).to_have_attribute("data-panel", "diff")
    assert widget.locator(".ragtt-cd-id").all_inner_texts() == [wire["query_ids"][qi][bad - 1], r["first_bad_query_id"]]
    assert widget.locator(".ragtt-hm-readout").inner_text().startswith(f"{EVIL} · {r['first_bad_label']} (v")
    assert items.first.get_attribute("aria-current") == "true"
    screenshot(page, widget, screens / "eval_html_got_worse.png")
    assert offline.dialogs == [] and page.locator("script").count() == 3
    assert offline.aborted == [] and offline.errors == []


def test_a_script_in_a_question_stays_text(evaluated: dict[str, Any], offline: Offline) -> None:
    html = evaluated["html"]
    # in the page's source only as JSON escapes (and in the got-worse list, if there, HTML-escaped)
    assert "alert(1)" in html and "<script>alert" not in html and "</script><!--" not in html
    assert html.count("<script") == 3  # the view, the state, the bootstrap: nothing else
    page = _open(offline, evaluated["out"])
    widget = page.locator(".ragtt-history-matrix")
    canvas = widget.locator(".ragtt-hm-canvas")
    geo = {k: float(canvas.get_attribute(f"data-{k}")) for k in ("top", "cell-h")}
    box = canvas.bounding_box()
    assert box is not None
    evil = len(QUESTIONS) - 1
    page.mouse.move(box["x"] + 20, box["y"] + geo["top"] + (evil + 0.5) * geo["cell-h"])
    expect(widget.locator(".ragtt-hm-tip")).to_be_visible()
    assert widget.locator(".ragtt-hm-tip div").first.inner_text() == EVIL
    _click(page, widget, evil, -1)
    expect(widget).to_have_attribute("data-panel", "timeline")
    assert widget.locator(".ragtt-timeline .ragtt-tl-query").inner_text().endswith(EVIL)
    assert offline.dialogs == [] and page.locator("script").count() == 3
    assert offline.aborted == [] and offline.errors == []


def test_what_the_bound_left_out_says_how_to_put_it_in(evaluated: dict[str, Any], offline: Offline) -> None:
    data = saved_data(evaluated["bounded"].read_text(encoding="utf-8"))
    n_c = len(evaluated["wire"]["columns"])
    states = np.frombuffer(data["cell"]["view"], dtype="u1").reshape(len(QUESTIONS), n_c)
    (kept,) = np.frombuffer(data["diffs"]["cell"]["view"], dtype="<i4").tolist()
    q, c = next((int(a), int(b)) for a, b in np.argwhere(states == hm.CHANGED) if a * n_c + b != kept)
    page = _open(offline, evaluated["bounded"])
    widget = page.locator(".ragtt-history-matrix")
    _click(page, widget, q, c)
    expect(widget).to_have_attribute("data-panel", "missing", timeout=30_000)
    note = widget.locator(".ragtt-hm-note").inner_text()
    assert "its bound left" in note and note.endswith(hm.PAGE_ADVICE["bound"]) and "notebook" not in note
    _click(page, widget, kept // n_c, kept % n_c)
    expect(widget).to_have_attribute("data-panel", "diff")
    _click(page, widget, 0, -1)
    expect(widget).to_have_attribute("data-panel", "missing", timeout=30_000)
    assert hm.PAGE_ADVICE["timelines"] in widget.locator(".ragtt-hm-note").inner_text()
    assert offline.aborted == [] and offline.errors == []


def test_a_matrix_of_no_questions_is_an_empty_page(evaluated: dict[str, Any], offline: Offline) -> None:
    page = _open(offline, evaluated["empty"])
    widget = page.locator(".ragtt-history-matrix")
    n_c = len(evaluated["wire"]["columns"])
    assert widget.locator(".ragtt-hm-counts").inner_text() == f"0 questions × {n_c} versions"
    # nothing got worse, and the widget's list (from the page's own state) says so
    expect(widget).to_have_attribute("data-worse", "none")
    assert "no question's" in widget.locator(".ragtt-hm-worse").inner_text()
    assert offline.aborted == [] and offline.errors == []
