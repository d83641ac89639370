"""The Timeline's two axes: "time" (wall clock) and "versions" (one equal slot per index
version), the "auto" rule between them, the version axis's layout in the state, and, in an
exported report in headless Chromium (offline), the toggle, scrubbing on the version axis
and snapshot labels that never overlap."""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import nbformat
import numpy as np
import pytest
import traitlets

import ragtt
from ragtt.views.timeline_axis import AUTO_RATIO, SLOT_IN, auto_axis
from ragtt_nb import Timeline

from .conftest import Offline, export, screenshot, settle


def _floats(buf: dict[str, Any]) -> list[float]:
    return np.frombuffer(buf["view"], "<f4").tolist()


def _ints(buf: dict[str, Any]) -> list[int]:
    return np.frombuffer(buf["view"], "<i4").tolist()


# -- the auto rule -------------------------------------------------------------------------------


def test_auto_axis_rule() -> None:
    day = 86_400.0
    # bursts separated by days (the quickstart with a real model: create, 4 s, three ingests 30 ms apart)
    assert auto_axis([0, 0, 4.0, 4.03, 4.06]) == "versions"
    assert auto_axis([0, 0.05, 0.1, day, day + 0.05, 3 * day]) == "versions"
    # evenly spread commits, or gaps within the ratio
    assert auto_axis([0, day, 2 * day, 3 * day]) == "time"
    assert auto_axis([0, 1, 1 + AUTO_RATIO * 0.99]) == "time"
    assert auto_axis([0, 1, 1 + AUTO_RATIO * 1.01]) == "versions"
    # commits of one burst (under 1 ms apart: a project's two creation versions) are not compared
    assert auto_axis([0, 0, 0.0004, 1.0, 2.0]) == "time"
    # fewer than two gaps to compare: nothing says the history is evenly spread
    assert auto_axis([0]) == auto_axis([0, 5]) == auto_axis([0, 0, 5]) == "versions"


# -- the layout in the state ----------------------------------------------------------------------


def test_version_axis_layout(proj: ragtt.Project, sample: dict[str, Any]) -> None:
    tl = Timeline(proj, sample["then"])
    lay = tl._data["layout"]
    committed = proj.versions()["committed_at"].dt.epoch("us").to_numpy() / 1e6
    # "auto" weighs the versions' spread against the whole axis, queries included
    ticks = _ints(tl._data["versions"]["t"]) + _ints(tl._data["events"]["t"])
    span_s = (max(ticks) - min(ticks)) * tl._data["t_unit_ms"] / 1000.0
    assert lay["auto"] == auto_axis(committed, span_s=span_s) and tl.axis == "auto" and tl.axis_mode == lay["auto"]
    # no claims: nothing before the first commit, one slot per version
    assert lay["first"] == 0 and lay["slots"] == len(tl.versions)
    bounds = _ints(lay["bounds"])
    assert bounds[:-1] == _ints(tl._data["versions"]["t"]) and bounds == sorted(bounds)
    events = tl._data["events"]
    x, ev, et = _floats(lay["event_x"]), _ints(events["version"]), _ints(events["t"])
    for i, v in enumerate(ev):  # each event in the slot of its version, inside the margins
        slot = tl.versions.index(v)
        assert slot + SLOT_IN - 1e-6 <= x[i] < slot + 1 - SLOT_IN, (i, v, x[i])
    for v in tl.versions:  # in log order, events of one tick at one place
        mine = [i for i in range(len(ev)) if ev[i] == v]
        assert [x[i] for i in mine] == sorted(x[i] for i in mine)
        for a, b in pairwise(mine):
            assert (x[a] == x[b]) == (et[a] == et[b])
    # the release snapshots sit in their versions' slots, after the ingests
    for snap in tl._data["snapshots"]:
        i = snap["event"]
        assert ev[i] == snap["version"]
        assert x[i] > min(x[j] for j in range(len(ev)) if ev[j] == snap["version"])


def test_axis_trait(proj: ragtt.Project, sample: dict[str, Any]) -> None:
    tl = Timeline(proj, sample["then"], axis="versions")
    assert tl.axis == tl.axis_mode == "versions"
    seen: list[str] = []
    tl.observe(lambda change: seen.append(change["new"]), "axis")
    tl.set_state({"axis": "time"})  # what the header's toggle sends
    assert tl.axis_mode == "time" and seen == ["time"]
    with pytest.raises(traitlets.TraitError):
        tl.axis = "log"
    with pytest.raises(traitlets.TraitError):
        Timeline(proj, axis="days")


def test_magic_axis_flag(shell: Any, sample: dict[str, Any]) -> None:
    from IPython.core.error import UsageError

    shell.run_line_magic("ragtt", f"open {sample['path']}")
    tl = shell.run_line_magic("ragtt", f"timeline {sample['then']} --axis versions")
    assert isinstance(tl, Timeline) and tl.axis_mode == "versions"
    assert shell.run_line_magic("ragtt", "timeline").axis == "auto"
    with pytest.raises(UsageError):
        shell.run_line_magic("ragtt", "timeline --axis weeks")


# -- in an exported report --------------------------------------------------------------------------

# The quickstart's shape with a real model: the project created, a pause (the model loading),
# then three releases, each snapshotted, in a burst. The auto axis picks "versions" when the
# pause is over 3 times the burst's gaps (ragtt/views/timeline_axis.py's AUTO_RATIO); on a
# loaded machine an ingest and a query can take a second, so the pause is 8 times what one
# took on this machine just before (in a throwaway project), and at least 3 s.
BURST = """
import tempfile
import time
import ragtt
from ragtt.demo import sample_releases
from ragtt_nb import Timeline

releases = sample_releases()
with tempfile.TemporaryDirectory() as folder:
    with ragtt.Project.open(folder + "/probe", embedder=ragtt.HashEmbedder(), progress=False) as probe:
        started = time.perf_counter()
        probe.ingest(releases[1])
        probe.snapshot("probe")
        probe.query("How many days do I have to ask for a refund?")
        took = time.perf_counter() - started
proj = ragtt.Project.open(PATH, embedder=ragtt.HashEmbedder(), progress=False)
time.sleep(max(3.0, 8 * took))
proj.ingest(releases[0])
proj.snapshot("release-1_the-first-public-release")
then = proj.query("How many days do I have to ask for a refund?")
for number, release in enumerate(releases[1:], start=2):
    proj.ingest(release)
    proj.snapshot(f"release-{number}")
now = proj.query("How many days do I have to ask for a refund?")
"""


@pytest.fixture(scope="module")
def burst_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("burst-report")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(f"PATH = {str(folder / 'proj')!r}\n" + BURST),
        nbformat.v4.new_code_cell("Timeline(proj, then.query_id, version=then.index_version)"),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, folder / "burst.ipynb")
    return export(folder / "burst.ipynb", folder / "burst.html", execute=True, timeout=120)


@pytest.fixture
def burst(burst_report: Path, offline: Offline) -> Iterator[Any]:
    page = offline.open(burst_report)
    page.wait_for_selector(".ragtt-timeline .ragtt-chunk", timeout=30_000)
    page.locator(".ragtt-timeline").scroll_into_view_if_needed()
    yield page
    assert offline.aborted == [] and offline.errors == []


def _label_boxes(page: Any) -> list[dict[str, Any]]:
    boxes: list[dict[str, Any]] = json.loads(page.locator(".ragtt-timeline").get_attribute("data-label-boxes"))
    return boxes


def _assert_apart(boxes: list[dict[str, Any]], right: float) -> None:
    """Labels on one line never touch (a label that would goes on a line below)."""
    for row in {b.get("row", 0) for b in boxes}:
        for a, b in pairwise(sorted((b for b in boxes if b.get("row", 0) == row), key=lambda b: b["x0"])):
            assert a["x1"] < b["x0"], (a, b)
    for b in boxes:
        assert 150 <= b["x0"] < b["x1"] <= right, b
        # the label, or its distinguishing part, maybe cut with "…"
        cut = b["text"][:-1] if b["text"].endswith("…") else None
        assert b["text"] in (b["label"], b["short"]) or (
            cut is not None and (b["label"].startswith(cut) or b["short"].startswith(cut))
        )


def _chunk_ids(page: Any) -> list[str]:
    return page.eval_on_selector_all(".ragtt-timeline .ragtt-chunk", "els => els.map(e => e.dataset.chunkId)")


def test_labels_never_overlap_in_either_axis(burst: Any) -> None:
    page = burst
    timeline = page.locator(".ragtt-timeline")
    assert timeline.get_attribute("data-axis") == "versions"  # auto: a 3 s pause, then a burst
    width = page.locator(".ragtt-timeline .ragtt-tl-plot").evaluate("e => e.clientWidth")
    versions = _label_boxes(page)
    _assert_apart(versions, width)
    # one slot per version: every label has room; the shared "release-" is dropped but for the
    # cursor's version (the focal query's, release-1), whose label is drawn in full
    assert [b["text"] for b in versions] == ["release-1_the-first-public-release", "2", "3"]
    assert [b["short"] for b in versions] == ["1_the-first-public-release", "2", "3"]
    # and under the axis, the versions by those labels
    axis = json.loads(timeline.get_attribute("data-axis-labels"))
    assert axis[-3:] == ["1_the-first-public-release", "2", "3"] and axis[0] == "v1"
    timeline.locator(".ragtt-tl-axis").click()
    assert timeline.get_attribute("data-axis") == "time"
    assert timeline.locator(".ragtt-tl-axis").inner_text() == "Axis: time"
    crowded = _label_boxes(page)
    _assert_apart(crowded, width)
    # crowded: every label kept (issue 30: they were dropped), on more lines where they collide
    assert sorted(b["label"] for b in crowded) == ["release-1_the-first-public-release", "release-2", "release-3"]
    # the full label of the cursor's version stays readable in the info line
    timeline.focus()
    page.keyboard.press("End")
    assert "snapshot release-3" in timeline.locator(".ragtt-tl-info").inner_text()
    page.set_viewport_size({"width": 700, "height": 1000})  # narrower: redrawn, still apart
    settle(page)  # the resize's redraw runs on the next frame
    _assert_apart(_label_boxes(page), page.locator(".ragtt-timeline .ragtt-tl-plot").evaluate("e => e.clientWidth"))


def test_scrubbing_on_the_version_axis(burst: Any) -> None:
    page = burst
    timeline = page.locator(".ragtt-timeline")
    cursor = timeline.locator(".ragtt-timeline-cursor")
    assert timeline.get_attribute("data-axis") == "versions"
    first, last = int(cursor.get_attribute("aria-valuemin")), int(cursor.get_attribute("aria-valuemax"))
    start = int(cursor.get_attribute("aria-valuenow"))
    then_ids = _chunk_ids(page)
    plot = timeline.locator(".ragtt-tl-plot")
    box = plot.bounding_box()
    width = plot.evaluate("e => e.clientWidth")
    n = last - first + 1

    def x_of(slot: float) -> float:
        return box["x"] + 150 + 8 + slot / n * (width - 150 - 16)

    # the cursor sits at the start of its version's slot
    assert abs(cursor.bounding_box()["x"] + 1 - x_of(start - first)) <= 2
    y = box["y"] + 5
    page.mouse.move(x_of(start - first) + 1, y)
    page.mouse.down()
    page.mouse.move(x_of(n - 1.5), y, steps=4)
    page.mouse.move(x_of(n - 0.5), y, steps=4)  # the middle of the last slot
    page.mouse.up()
    assert int(cursor.get_attribute("aria-valuenow")) == last
    assert abs(cursor.bounding_box()["x"] + 1 - x_of(n - 1)) <= 2  # snapped to the slot's start
    now_ids = _chunk_ids(page)
    assert now_ids and now_ids != then_ids
    # each slot is its version: a click in the middle of every slot lands on it
    # (the plot measured again before each click: a version with fewer chunks shortens the page,
    # which scrolls it when near its end, and a click at the old place would miss the plot)
    for slot in range(n):
        box = plot.bounding_box()
        page.mouse.click(x_of(slot + 0.5), box["y"] + 5)
        assert int(cursor.get_attribute("aria-valuenow")) == first + slot
    assert _chunk_ids(page) == now_ids
    # the keyboard and the toggle keep the cursor's version
    timeline.focus()
    page.keyboard.press("Home")
    assert int(cursor.get_attribute("aria-valuenow")) == first and timeline.locator(".ragtt-chunk").count() == 0
    page.keyboard.press("End")
    page.keyboard.press("ArrowLeft")
    assert int(cursor.get_attribute("aria-valuenow")) == last - 1
    timeline.locator(".ragtt-tl-axis").click()
    assert timeline.get_attribute("data-axis") == "time" and int(cursor.get_attribute("aria-valuenow")) == last - 1
    timeline.locator(".ragtt-chunk").first.click()
    assert timeline.locator(".ragtt-tl-status").inner_text() == "1 selected"


def test_toggle_and_drag_in_the_quickstart_report(quickstart_report: Path, offline: Offline) -> None:
    page = offline.open(quickstart_report)
    page.wait_for_selector(".ragtt-timeline .ragtt-chunk", timeout=30_000)
    timeline = page.locator(".ragtt-timeline")
    timeline.scroll_into_view_if_needed()
    cursor = timeline.locator(".ragtt-timeline-cursor")
    if timeline.get_attribute("data-axis") == "time":  # auto decides by this run's commit times
        timeline.locator(".ragtt-tl-axis").click()
    assert timeline.get_attribute("data-axis") == "versions"
    _assert_apart(_label_boxes(page), timeline.locator(".ragtt-tl-plot").evaluate("e => e.clientWidth"))
    then_ids = _chunk_ids(page)
    box = cursor.bounding_box()
    plot = timeline.locator(".ragtt-tl-plot").bounding_box()
    page.mouse.move(box["x"] + 1, box["y"] + 5)
    page.mouse.down()
    page.mouse.move(plot["x"] + plot["width"] - 3, box["y"] + 5, steps=6)
    page.mouse.up()
    assert cursor.get_attribute("aria-valuenow") == cursor.get_attribute("aria-valuemax")
    now_ids = _chunk_ids(page)
    assert now_ids != then_ids
    assert now_ids == page.eval_on_selector_all(
        ".ragtt-chunk-diff .ragtt-cd-right .ragtt-chunk", "els => els.map(e => e.dataset.chunkId)"
    )
    assert offline.aborted == [] and offline.errors == []


# Flask's docs at 22 releases, each snapshotted by its name: labels that share "flask-".
FLASK = """
import ragtt
from ragtt_nb import Timeline
from tests.conftest import flask_releases

proj = ragtt.Project.open(PATH, embedder=ragtt.HashEmbedder(), progress=False)
asked = None
for release in flask_releases():
    proj.ingest(release)
    proj.snapshot(release.name.split("_", 1)[1])
    if release.name.endswith("flask-1.0"):
        asked = proj.query("How do I set the secret key?")
"""


@pytest.fixture(scope="module")
def flask_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("flask-report")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            f"import sys\nsys.path.insert(0, {str(Path(__file__).parents[2])!r})\n"
            f"PATH = {str(folder / 'proj')!r}\n" + FLASK
        ),
        # The axis is pinned: releases ingested back to back in a test are evenly spread in time,
        # so the auto rule may pick either; this test is about the version labels.
        nbformat.v4.new_code_cell("Timeline(proj, asked.query_id, axis='versions')"),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, folder / "flask.ipynb")
    return export(folder / "flask.ipynb", folder / "flask.html", execute=True, timeout=300)


def test_22_flask_releases_read_by_their_distinguishing_part(
    flask_report: Path, offline: Offline, screens: Path
) -> None:
    page = offline.open(flask_report)
    page.set_viewport_size({"width": 1400, "height": 900})
    page.wait_for_selector(".ragtt-timeline .ragtt-chunk", timeout=30_000)
    settle(page)  # it may have drawn before the resize: its redraw at 1400 px comes a frame later
    timeline = page.locator(".ragtt-timeline")
    assert timeline.get_attribute("data-axis") == "versions"
    boxes = _label_boxes(page)
    # a release whose docs did not change writes no version: its snapshot shares the previous
    # one's slot, and its label goes on the line below: every snapshot keeps its label
    axis = json.loads(timeline.get_attribute("data-axis-labels"))
    named = [t for t in axis if not (t.startswith("v") and t[1:].isdigit())]
    assert len(named) >= 20 and len(boxes) == 22
    _assert_apart(boxes, timeline.locator(".ragtt-tl-plot").evaluate("e => e.clientWidth"))
    # the shared "flask-" is dropped; no label is cut down to "fla…"; the cursor's (1.0, where
    # the question ran) is in full
    assert {b["label"]: b["short"] for b in boxes}["flask-2.0.3"] == "2.0.3"
    assert not any(b["text"].startswith("fla") and b["text"].endswith("…") for b in boxes)
    assert [b["text"] for b in boxes if b["text"].startswith("flask-")] == ["flask-1.0"]
    assert sum(b["text"] == b["short"] for b in boxes) >= 18  # nearly all in full, by their part
    assert "0.10" in axis and "3.1.3" in axis
    assert timeline.locator(".ragtt-tl-where").inner_text().startswith("flask-1.0 (v")
    # hovering a label shows it in full
    label = next(b for b in boxes if b["label"] == "flask-2.2.0")
    plot = timeline.locator(".ragtt-tl-plot").bounding_box()
    page.mouse.move(plot["x"] + (label["x0"] + label["x1"]) / 2, plot["y"] + 16 + 8)
    assert timeline.locator(".ragtt-tl-plot").get_attribute("title").startswith("snapshot flask-2.2.0 (v")
    # the question's words are highlighted in the cards
    assert {t.lower() for t in timeline.locator(".ragtt-hl").all_inner_texts()} & {"secret", "key"}
    screenshot(page, timeline, screens / "timeline_flask_22_releases.png")
