"""The Timeline with thousands of versions (a folder watched for weeks): runs of quiet
versions fold into compressed segments, while snapshots and query runs keep their slots, their
marks and their labels; in headless Chromium (offline) with 800 versions the segments are
drawn and labelled, every snapshot label is drawn, and stepping the cursor stays quick."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragtt
from ragtt.views.timeline import KIND_QUERY, KIND_SNAPSHOT, model
from ragtt.views.timeline_axis import COMPRESS_FROM, MIN_RUN, RUN_W, axis_warp
from ragtt.views.wire import static_file

from .conftest import Offline, screenshot

VERSIONS = 800  # thousands in a real watch; past COMPRESS_FROM the same folding (bench_widgets times 10,000)
SNAPSHOT_EVERY = 160
QUERY_AT = (7, 8, 9, 434, 799)  # a run of queries at three versions in a row, then two alone


def _ints(buf: dict[str, Any]) -> list[int]:
    return np.frombuffer(buf["view"], "<i4").tolist()


def _floats(buf: dict[str, Any]) -> list[float]:
    return np.frombuffer(buf["view"], "<f4").tolist()


def test_axis_warp_folds_quiet_runs_only_past_the_threshold() -> None:
    assert axis_warp(COMPRESS_FROM - 1, 0, set()) == ([], [0.0, COMPRESS_FROM - 1.0], [0.0, COMPRESS_FROM - 1.0])
    slots = 200
    keep = {0, 5, 6, 10, 12, 199}  # 1-4 and 7-9 are runs of MIN_RUN or more; 11 alone stays
    runs, pos, x = axis_warp(slots, 0, keep)
    assert runs[:4] == [1, 5, 7, 10] and MIN_RUN == 3
    assert 11 not in [j for a, b in zip(runs[::2], runs[1::2], strict=True) for j in range(a, b)]
    assert runs[-2:] == [13, 199]
    assert pos == sorted(pos) and x == sorted(x) and pos[-1] == slots
    kept = slots - sum(b - a for a, b in zip(runs[::2], runs[1::2], strict=True))
    assert x[-1] == kept + RUN_W * len(runs) // 2
    # a leading "earlier" slot (first=1) is never folded
    runs, _, _ = axis_warp(slots, 1, {1, 199})
    assert runs == [2, 199]


@pytest.fixture(scope="module")
def long_history(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """800 small versions (a watched folder's history), a snapshot every 160, queries at a few."""
    path = tmp_path_factory.mktemp("long") / "proj"
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        for n in range(VERSIONS):  # by count: maintenance may add versions of its own
            proj.ingest_texts({f"page-{n % 5}.md": f"page {n % 5}, edit {n}: the watched folder changed again"})
            if (n + 1) % SNAPSHOT_EVERY == 0:
                proj.snapshot(f"week-{(n + 1) // SNAPSHOT_EVERY}")
            if n in QUERY_AT:
                proj.query("what changed in the watched folder?", generate=False)
        state = model(proj)
    return {"path": path, "state": state}


def test_snapshots_and_queries_keep_their_slots(long_history: dict[str, Any]) -> None:
    data = long_history["state"]["_data"]
    lay = data["layout"]
    versions = _ints(data["versions"]["version"])
    runs = _ints(lay["runs"])
    folded = {versions[j - lay["first"]] for a, b in zip(runs[::2], runs[1::2], strict=True) for j in range(a, b)}
    kinds, event_v = _ints(data["events"]["kind"]), _ints(data["events"]["version"])
    marked = {v for k, v in zip(kinds, event_v, strict=True) if k in (KIND_SNAPSHOT, KIND_QUERY)}
    assert len(marked) == len(QUERY_AT) + VERSIONS // SNAPSHOT_EVERY - 1  # the last query and snapshot share a version
    assert not marked & folded and versions[0] not in folded and versions[-1] not in folded
    assert len(folded) > 0.98 * len(versions)  # nearly everything folds...
    assert lay["width"] < 60  # ...into an axis a few dozen slots wide, not 800
    pos, x = _floats(lay["warp_pos"]), _floats(lay["warp_x"])
    assert pos[-1] == lay["slots"] and x[-1] == lay["width"] and x == sorted(x)


# The page: the Timeline bundle imported from a blob (a file: page cannot import a module),
# rendered with a model that holds the state locally, buffers as base64.
PAGE = """<!doctype html><meta charset="utf-8"><style>{css}</style><body><div id="host"></div>
<script type="module">
const state = {state};
const unwire = (v) => Array.isArray(v) ? v.map(unwire) : v === null || typeof v !== "object" ? v
  : typeof v.$b64 === "string" ? Uint8Array.from(atob(v.$b64), (c) => c.charCodeAt(0)).buffer
  : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unwire(x)]));
const values = unwire(state), handlers = {{}};
const model = {{
  get: (k) => values[k], set: (k, v) => {{ values[k] = v; (handlers["change:" + k] || []).forEach((f) => f()); }},
  on: (e, f) => (handlers[e] ||= []).push(f), off: () => {{}}, save_changes: () => {{}}, send: () => {{}},
}};
const src = {bundle};
const mod = await import(URL.createObjectURL(new Blob([src], {{ type: "text/javascript" }})));
mod.default.render({{ model, el: document.getElementById("host") }});
document.body.dataset.ready = "1";
</script>"""


def _wired(value: Any) -> Any:
    if isinstance(value, memoryview):
        return {"$b64": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, dict):
        return {k: _wired(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_wired(v) for v in value]
    return value


@pytest.fixture
def long_page(long_history: dict[str, Any], offline: Offline, tmp_path: Path) -> Iterator[Any]:
    page_file = tmp_path / "timeline.html"
    page_file.write_text(
        PAGE.format(
            css=static_file("timeline.css").read_text(),
            state=json.dumps(_wired(long_history["state"])),
            bundle=json.dumps(static_file("timeline.js").read_text()),
        )
    )
    page = offline.open(page_file)
    page.wait_for_selector("body[data-ready] .ragtt-timeline[data-compressed]", timeout=30_000)
    yield page
    assert offline.aborted == [] and offline.errors == []


def test_a_long_history_stays_readable_and_responsive(
    long_page: Any, long_history: dict[str, Any], screens: Path
) -> None:
    page = long_page
    timeline = page.locator(".ragtt-timeline")
    assert timeline.get_attribute("data-axis") == "versions"
    segments = json.loads(timeline.get_attribute("data-compressed"))
    assert len(segments) >= VERSIONS // SNAPSHOT_EVERY  # the quiet stretches between the marks
    assert sum(s["to"] - s["from"] + 1 for s in segments) > 0.98 * VERSIONS
    # every snapshot's label drawn, apart from the others
    labels = json.loads(timeline.get_attribute("data-label-boxes"))
    assert sorted({b["label"] for b in labels}) == [f"week-{k}" for k in range(1, VERSIONS // SNAPSHOT_EVERY + 1)]
    # the segments say how many versions they fold; the kept versions keep their own labels
    axis = json.loads(timeline.get_attribute("data-axis-labels"))
    assert any(t.startswith("⋯ ") for t in axis)
    assert sum(t.startswith("⋯ ") for t in axis) + sum(not t.startswith("⋯ ") for t in axis) == len(axis)
    # a segment of hundreds of versions takes the room of one kept version, and the kept
    # versions share the plot (each dozens of px wide, not a third of a pixel)
    width = page.locator(".ragtt-timeline .ragtt-tl-plot").evaluate("e => e.clientWidth")
    per_unit = (width - 150 - 16) / long_history["state"]["_data"]["layout"]["width"]
    assert per_unit > 15
    for s in segments:
        assert abs((s["x1"] - s["x0"]) - RUN_W * per_unit) <= 1.5, s
    # hovering a segment names what it folds
    box = page.locator(".ragtt-timeline .ragtt-tl-plot").bounding_box()
    widest = max(segments, key=lambda s: s["x1"] - s["x0"])
    page.mouse.move(box["x"] + (widest["x0"] + widest["x1"]) / 2, box["y"] + 5)
    tip = page.locator(".ragtt-timeline .ragtt-tl-plot").get_attribute("title")
    assert f"v{widest['from']} to v{widest['to']}" in tip and "compressed" in tip
    # stepping the cursor through versions stays quick (each step redraws the whole plot)
    cursor = timeline.locator(".ragtt-timeline-cursor")
    timeline.focus()
    page.keyboard.press("Home")
    started = time.perf_counter()
    for _ in range(40):
        page.keyboard.press("ArrowRight")
    assert int(cursor.get_attribute("aria-valuenow")) == int(cursor.get_attribute("aria-valuemin")) + 40
    assert (time.perf_counter() - started) / 40 < 0.25  # a loose bound: a frozen page takes seconds
    page.keyboard.press("End")
    screenshot(page, timeline, screens / "timeline-long-history.png")
