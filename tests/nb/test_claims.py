"""Assertion lanes on the Timeline: the claims of one namespace of ``proj.assertions`` drawn
per entity on the index's time axis; the claims valid at the cursor's time listed as text,
in the state, in ``%ragtt``, and in an exported report in headless Chromium (offline)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import numpy as np
import polars as pl
import pytest
from IPython.core.error import UsageError

from ragtt.views.timeline_claims import FLAG_OPEN, FLAG_SUPERSEDED
from ragtt_nb import Timeline

from .conftest import Offline, export
from .test_widgets import _buffers, _no_number_lists

# Builds `proj` (a project with one document) and writes claims around `T` (UNIX seconds):
# the refund window is superseded an hour ago, the uptime claim closed half an hour ago
# without a successor, a note has no entity. Run as-is in the tests and in the exported
# notebook's kernel. Payloads in a claim's content and in an entity id must run nowhere.
SETUP = """
import time
import ragtt
from ragtt.temporal import Assertion, Citation, Episode

proj = ragtt.Project.open(PATH, embedder=ragtt.HashEmbedder(), progress=False)
proj.ingest_texts({"policy.md": "# Refunds\\n\\nRefunds within 30 days."})
T = time.time()
store = proj.assertions
store.init_namespace("policy")
store.init_namespace("other")
EVIL_ENTITY = "<img src=x onerror=\\"window.__pwned='entity'\\">"
NEW = "Refunds within 14 days. <script>window.__pwned='claim'</script><img src=x onerror=\\"window.__pwned='img'\\">"

def claim(aid, content, start, *, ns="policy", entity=None, type_="policy", end=None, supersedes=None):
    return Assertion(id=aid, namespace=ns, type=type_, content=content, valid_from=start, confidence=0.9,
                     source_episode_id="ep", citations=(Citation(f"c-{aid}", "ep", "policy.md", content),),
                     valid_until=end, supersedes_id=supersedes, entity_id=entity)

store.write_episode_bundle(Episode("ep", "policy", T - 7200, "2024-01-01T00:00:00+00:00", "doc", "policy.md"), [
    claim("refund-r1", "Refunds within 30 days.", T - 7200, entity="refund-window"),
    claim("uptime", "The Pro plan guarantees 99.5% uptime.", T - 5400, entity=EVIL_ENTITY, end=T - 1800),
    claim("note", "Support is closed on Sundays.", T - 6000, type_="note"),
])
store.write_assertion(claim("refund-r2", NEW, T - 3600, entity="refund-window", supersedes="refund-r1"))
store.write_episode(Episode("ep2", "other", T, "2024-01-01T00:00:00+00:00", "doc", "x"))
store.write_assertion(Assertion(id="elsewhere", namespace="other", type="fact", content="Not in policy.",
                                valid_from=T, confidence=1.0, source_episode_id="ep2",
                                citations=(Citation("c-x", "ep2", "x", "Not in policy."),)))
"""


def _build(path: Path) -> dict[str, Any]:
    scope: dict[str, Any] = {"PATH": str(path)}
    exec(SETUP, scope)  # our own setup code, shared with the exported notebook
    return scope


@pytest.fixture(scope="module")
def claims_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    scope = _build(tmp_path_factory.mktemp("claims") / "proj")
    yield scope
    scope["proj"].close()


def _ints(buf: dict[str, Any]) -> list[int]:
    return np.frombuffer(buf["view"], "<i4").tolist()


def test_lanes_and_bars_match_the_store(claims_project: dict[str, Any]) -> None:
    proj, store, T = claims_project["proj"], claims_project["store"], claims_project["T"]
    tl = Timeline(proj, assertions="policy")
    assert tl.namespace == "policy" and "4 claims in 'policy'" in repr(tl)
    # one lane per entity (in order of their first claim), then one per type for entity-less claims
    assert tl.claim_lanes == [("entity", "refund-window"), ("entity", claims_project["EVIL_ENTITY"]), ("type", "note")]
    wire = tl._data["claims"]
    _no_number_lists(tl._data)
    assert {b["dtype"] for b in _buffers(wire)} <= {"int32", "float32"}
    t0, unit = tl._data["t0_ms"], tl._data["t_unit_ms"]
    assert t0 <= (T - 7200) * 1000  # the axis starts at the earliest claim, before any index version
    every = store.snapshot("policy", 1e300, include_superseded=True)
    assert sorted(wire["ids"]) == sorted(every["id"]) and "elsewhere" not in wire["ids"]
    frm, until, lane, flags = (_ints(wire[k]) for k in ("from", "until", "lane", "flags"))
    lanes = wire["lanes"]
    for row in every.iter_rows(named=True):
        i = wire["ids"].index(row["id"])
        assert wire["content"][i] == row["content"] and wire["type"][i] == row["type"]
        assert lanes[lane[i]] == (row["entity_id"] if row["entity_id"] is not None else row["type"])
        assert abs(t0 + frm[i] * unit - row["valid_from"] * 1000) <= unit
        assert bool(flags[i] & FLAG_SUPERSEDED) == (row["superseded_by"] is not None)
        assert bool(flags[i] & FLAG_OPEN) == (row["valid_until"] is None)
        if row["valid_until"] is not None:
            assert abs(t0 + until[i] * unit - row["valid_until"] * 1000) <= unit
    by_id = {aid: flags[wire["ids"].index(aid)] for aid in wire["ids"]}
    assert by_id == {"refund-r1": FLAG_SUPERSEDED, "refund-r2": FLAG_OPEN, "uptime": 0, "note": FLAG_OPEN}
    # the supersession closed the old claim exactly where the new one starts
    assert until[wire["ids"].index("refund-r1")] == frm[wire["ids"].index("refund-r2")]


def test_claims_at_follow_the_store_snapshot(claims_project: dict[str, Any]) -> None:
    proj, store, T = claims_project["proj"], claims_project["store"], claims_project["T"]
    tl = Timeline(proj, assertions="policy")
    for at in (T - 9000, T - 7200, T - 5000, T - 3600, T - 3599, T - 1800, T + 60):
        assert sorted(tl.claims_at(at)) == sorted(store.snapshot("policy", at)["id"]), at
    assert tl.claims_at(T - 3601) == ["refund-r1", "uptime", "note"]  # lane order
    assert tl.claims_at(T - 3600) == ["refund-r2", "uptime", "note"]  # half-open: the successor from its start
    assert tl.claims_at() == ["refund-r2", "note"]  # at the cursor's version: committed after T - 1800


def test_unknown_namespace_names_the_known_ones(claims_project: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"no assertion namespace 'nope'.*known: 'other', 'policy'"):
        Timeline(claims_project["proj"], assertions="nope")
    with pytest.raises(TypeError, match="namespace name"):
        Timeline(claims_project["proj"], assertions=1)  # type: ignore[arg-type]
    tl = Timeline(claims_project["proj"])
    assert tl._data["claims"] is None and tl.claim_lanes == []
    with pytest.raises(ValueError, match="no assertion lanes"):
        tl.claims_at()


def test_magics_timeline_and_assertions_at(shell: Any, claims_project: dict[str, Any]) -> None:
    T = claims_project["T"]
    magics = shell.magics_manager.registry["RagttMagics"]
    magics._proj = claims_project["proj"]
    try:
        tl = shell.run_line_magic("ragtt", "timeline --assertions policy")
        assert isinstance(tl, Timeline) and tl.namespace == "policy"
        with pytest.raises(UsageError, match=r"known: 'other', 'policy'"):
            shell.run_line_magic("ragtt", "timeline --assertions nope")
        at = shell.run_line_magic("ragtt", f"assertions policy --at {T - 5000}")
        assert isinstance(at, pl.DataFrame) and sorted(at["id"]) == ["note", "refund-r1", "uptime"]
        iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(T - 3000))
        assert sorted(shell.run_line_magic("ragtt", f"assertions policy --at {iso}")["id"]) == [
            "note",
            "refund-r2",
            "uptime",
        ]
        for line in ("assertions policy --at now", "assertions policy"):
            assert sorted(shell.run_line_magic("ragtt", line)["id"]) == ["note", "refund-r2"]
        everything = shell.run_line_magic("ragtt", "assertions policy --at now --include-superseded")
        assert sorted(everything["id"]) == ["note", "refund-r1", "refund-r2", "uptime"]
        for bad in ("assertions policy --at yesterday", "assertions policy --at inf", "assertions nope"):
            with pytest.raises(UsageError):
                shell.run_line_magic("ragtt", bad)
    finally:
        magics._proj = None  # the module fixture closes it


# -- in an exported report ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def claims_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("claims-report")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(f"PATH = {str(folder / 'proj')!r}\n" + SETUP),
        nbformat.v4.new_code_cell("from ragtt_nb import Timeline\nTimeline(proj, assertions='policy')"),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, folder / "claims.ipynb")
    return export(folder / "claims.ipynb", folder / "claims.html", execute=True, timeout=120)


def _claims(page: Any) -> list[str]:
    return page.eval_on_selector_all(".ragtt-timeline .ragtt-claim", "els => els.map(e => e.dataset.assertionId)")


def _time_axis(page: Any) -> None:
    """Switch to the time axis (the drags below are in its geometry) if auto chose versions."""
    timeline = page.locator(".ragtt-timeline")
    if timeline.get_attribute("data-axis") == "versions":
        timeline.locator(".ragtt-tl-axis").click()
    assert timeline.get_attribute("data-axis") == "time"


def _drag_to(page: Any, fraction: float) -> None:
    """Drag the cursor to `fraction` of the plot's time axis (the geometry of timeline.js)."""
    plot = page.locator(".ragtt-timeline .ragtt-tl-plot")
    box = plot.bounding_box()
    width = plot.evaluate("e => e.clientWidth")
    x = box["x"] + 150 + 8 + fraction * (width - 150 - 16)
    page.mouse.move(x, box["y"] + 8)
    page.mouse.down()
    page.mouse.move(x + 1, box["y"] + 8)
    page.mouse.move(x, box["y"] + 8)
    page.mouse.up()


def test_scrubbing_across_a_supersession_in_the_report(claims_report: Path, offline: Offline) -> None:
    page = offline.open(claims_report)
    page.wait_for_selector(".ragtt-timeline .ragtt-claim", timeout=30_000)
    timeline = page.locator(".ragtt-timeline")
    timeline.scroll_into_view_if_needed()
    # it opens where the newest claims are valid (refund-r2 from T - 1 h), not on stale ones
    assert _claims(page) == ["refund-r2", "uptime", "note"]
    assert "superseded later" not in timeline.locator(".ragtt-tl-claims").inner_text()
    _time_axis(page)
    # the axis runs from T - 2 h to now plus 4 % (room for open bars): 0.3 is about T - 1.4 h
    _drag_to(page, 0.3)
    assert _claims(page) == ["refund-r1", "uptime", "note"]
    old = timeline.locator(".ragtt-claim[data-assertion-id='refund-r1']")
    assert old.locator(".ragtt-claim-text").inner_text() == "Refunds within 30 days."
    assert "superseded later" in old.inner_text()
    _drag_to(page, 0.6)  # about T - 0.8 h: after the supersession, the uptime claim still valid
    assert _claims(page) == ["refund-r2", "uptime", "note"]
    new = timeline.locator(".ragtt-claim[data-assertion-id='refund-r2'] .ragtt-claim-text").inner_text()
    assert new.startswith("Refunds within 14 days. <script>")  # shown as text
    _drag_to(page, 0.9)  # after the uptime claim closed
    assert _claims(page) == ["refund-r2", "note"]
    # the keyboard moves between versions, and the list follows the version's commit time
    timeline.focus()
    page.keyboard.press("Home")
    assert _claims(page) == ["refund-r2", "note"]
    assert "Claims valid at" in timeline.locator(".ragtt-tl-claims .ragtt-tl-pane-title").inner_text()
    assert offline.aborted == [] and offline.errors == []


def test_script_payloads_in_claims_never_run_in_the_report(claims_report: Path, offline: Offline) -> None:
    page = offline.open(claims_report)
    page.wait_for_selector(".ragtt-timeline .ragtt-claim", timeout=30_000)
    _time_axis(page)
    for fraction in (0.1, 0.95, 0.3):
        _drag_to(page, fraction)
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None and offline.dialogs == []
    assert page.locator(".ragtt-timeline img, .ragtt-timeline script, [onerror]").count() == 0
    uptime = page.locator(".ragtt-timeline .ragtt-claim[data-assertion-id='uptime'] .ragtt-claim-entity")
    assert "onerror" in uptime.inner_text()  # the entity id, shown as text
    assert offline.aborted == [] and offline.errors == []


def test_claims_on_the_version_axis(claims_project: dict[str, Any]) -> None:
    """The version axis (ragtt/views/timeline_axis.py's rule): claims older than the first commit get a
    leading slot; open claims run to the axis end; a time maps into the slot of the version
    committed at or before it, linearly inside it."""
    proj = claims_project["proj"]
    tl = Timeline(proj, assertions="policy", axis="versions")
    lay, wire = tl._data["layout"], tl._data["claims"]
    assert tl.axis_mode == "versions" and lay["first"] == 1 and lay["slots"] == len(tl.versions) + 1
    bounds = np.frombuffer(lay["bounds"]["view"], "<i4").tolist()
    assert bounds[1:-1] == _ints(tl._data["versions"]["t"]) and bounds[0] == min(_ints(wire["from"]))
    frm = np.frombuffer(wire["from_x"]["view"], "<f4").tolist()
    until = np.frombuffer(wire["until_x"]["view"], "<f4").tolist()
    ids = wire["ids"]
    flags = _ints(wire["flags"])
    for i, aid in enumerate(ids):
        assert 0 <= frm[i] < 1, aid  # every claim starts before the project existed
        if flags[i] & FLAG_OPEN:
            assert until[i] == lay["slots"], aid
        else:
            assert frm[i] <= until[i] < 1, aid
    # the supersession: the old claim ends where its successor starts
    assert until[ids.index("refund-r1")] == frm[ids.index("refund-r2")]
    # the earliest claim starts the axis; the pre-slot's positions follow the claims' times linearly
    ticks = _ints(wire["from"])
    for i in range(len(ids)):
        assert abs(frm[i] - (ticks[i] - bounds[0]) / (bounds[1] - bounds[0])) < 1e-5
