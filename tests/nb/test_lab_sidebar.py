"""The "RAG history" sidebar in a real JupyterLab (token auth, ragtt's server extension and
its built lab extension) over a folder holding a project of several Flask releases, driven
by headless Chromium: the panel lists snapshots and queries; a click opens a timeline tab
that scrubs; "Diff with now" opens the chunk diff; "Insert in notebook" writes the %ragtt
line; `%ragtt open` of a second project in a notebook moves the panel to it; script
payloads in queries, documents and source names stay text."""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import shutil
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import nbformat
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

import ragtt
from tests.conftest import SCREENS_ENV, corpus, flask_releases

from .conftest import LONG_URL, REPO, assert_columns_fit, screenshot
from .jupyter import WITH_RAGTT, running

BUILT = REPO / "ragtt_nb" / "labextension"
TOKEN = secrets.token_hex(16)
EVIL_QUERY = "blueprint <img src=x onerror=\"window.__pwned='query'\"><script>window.__pwned='s'</script>"
EVIL_SOURCE = "<img src=x onerror=\"window.__pwned='source'\">.md"
EVIL_PDF = "crazy<img src=x onerror=\"window.__pwned='pdf'\">.pdf"
EVIL_QUESTION = "blueprint <img src=x onerror=\"window.__pwned='question'\">"
EVIL_DATASET = "q<img src=x onerror=\"window.__pwned='dataset'\">"  # a file name: the matrix's label
# a question whose reference passage flask-1.0 rewrote: it gets worse there (the got-worse list)
EVIL_WORSE = (
    "What is the most kick-ass method to install Flask's libraries? <img src=x onerror=\"window.__pwned='worse'\">"
)
KICK_ASS = "There are many ways you could do that, but the most kick-ass method is virtualenv"
ASKED_OF_THE_PAST = "how do I serve static files"  # replay --text: a row of its own, kind replay
THROTTLE_ENV = "RAGTT_CPU_THROTTLE"  # N > 1: the pages run N times slower (see new_page)


# The ragtt tabs in the main area (their ids, sorted), and the sidebar widget.
RAGTT_TABS_JS = """() => Array.from(window.jupyterapp.shell.widgets('main'))
  .filter((w) => w.hasClass('ragtt-tab')).map((w) => w.id).sort()"""
PANEL_JS = "Array.from(window.jupyterapp.shell.widgets('left')).find((w) => w.id === 'ragtt-history')"


@pytest.fixture(scope="module")
def lab_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    if not (BUILT / "package.json").is_file():
        pytest.fail(f"the lab extension is not built ({BUILT}): run `npm run build` (./dev test does)")
    home = tmp_path_factory.mktemp("lab")
    root = home / "root"
    with ragtt.Project.open(root / "flask", embedder=ragtt.HashEmbedder(), progress=False, create=True) as proj:
        for number, release in enumerate(flask_releases()[:4]):
            proj.ingest(release, as_of=release_date(release))  # dated, as `--as-of-date` does
            proj.snapshot(release.name.split("_", 1)[1])
            if number == 0:  # asked at the first release: "Diff with now" has history to show
                # asked of the past, then that replay replayed: a replay's row with a replay of its own
                proj.replay(proj.replay_text(ASKED_OF_THE_PAST, at=release.name.split("_", 1)[1]).query_id)
                proj.query("how do I register a blueprint")
        pdfs = home / "pdfs"
        pdfs.mkdir()
        shutil.copy(corpus("pdfs", "pypdf__crazyones.pdf"), pdfs / EVIL_PDF)
        proj.ingest([pdfs / EVIL_PDF])
        proj.ingest_texts(
            {EVIL_SOURCE: f"# Evil\n\nA blueprint <script>window.__pwned='doc'</script> here.\n\n{LONG_URL}\n"}
        )
        proj.snapshot("with-payloads")  # labels are letters, digits, '.', '-', '_' only: no markup can be one
        for text in ("application context teardown", EVIL_QUERY):
            proj.query(text)
        dataset = home / f"{EVIL_DATASET}.jsonl"
        rows = [
            {"id": "bp", "question": EVIL_QUESTION, "must_contain": ["register"]},
            {"id": "venv", "question": EVIL_WORSE, "reference_contexts": [KICK_ASS]},
        ]
        dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        matrix = proj.evaluate(dataset)  # every snapshot
        evaluation = matrix.evaluation_id
        cells = sum(1 for row in matrix.query_ids for run in row if run)
        worse = {metric: matrix.regressions(metric).to_dicts() for metric in ("context_recall", "contains")}
    with ragtt.Project.open(root / "second", embedder=ragtt.HashEmbedder(), progress=False, create=True) as other:
        other.ingest_texts({"second.md": "# Second\n\nThe second project.\n"})
        other.query("second project")
    labextensions = home / "jupyter-path" / "labextensions"
    labextensions.mkdir(parents=True)
    (labextensions / "ragtt").symlink_to(BUILT, target_is_directory=True)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell("%load_ext ragtt_nb")]
    nbformat.write(nb, root / "work.ipynb")
    yield {"home": home, "root": root, "dataset": dataset, "evaluation": evaluation, "cells": cells, "worse": worse}


@pytest.fixture
def lab(lab_root: dict[str, Any], tmp_path: Path) -> Iterator[str]:
    args = [
        f"--IdentityProvider.token={TOKEN}",
        "--ServerApp.allow_unauthenticated_access=False",
        WITH_RAGTT,
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        f"--LabServerApp.workspaces_dir={tmp_path / 'ws'}",
    ]
    env = {"JUPYTER_PATH": str(lab_root["home"] / "jupyter-path")}
    with running("jupyter-lab", lab_root["root"], tmp_path / "state", args, env) as url:
        yield url


def release_date(release: Path) -> datetime:
    """A release folder's date ("2013-06-13_flask-0.10"), midnight UTC: what `--as-of-date 2013-06-13` records."""
    return datetime.fromisoformat(release.name.split("_")[0]).replace(tzinfo=UTC)


def cells(page: Any) -> list[str]:
    return list(
        page.evaluate(
            """() => {
              const main = Array.from(window.jupyterapp.shell.widgets('main'));
              const nb = main.find((w) => w.content && w.content.model && w.sessionContext);
              return nb.content.model.sharedModel.cells.map((c) => c.getSource());
            }"""
        )
    )


def new_page(browser: Any) -> tuple[Any, Any]:
    """A 1400x900 page; $RAGTT_CPU_THROTTLE=N slows its CPU N times (CDP), as a loaded CI machine does."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    rate = float(os.environ.get(THROTTLE_ENV, "1") or 1)
    if rate > 1:
        context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": rate})
    return context, page


def test_history_sidebar_in_jupyterlab(lab: str, lab_root: dict[str, Any], browser: Any, screens: Path) -> None:
    context, page = new_page(browser)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        page.goto(f"{lab}/lab/tree/work.ipynb?token={TOKEN}")
        page.wait_for_function("window.jupyterapp && window.jupyterapp.shell.currentWidget", timeout=120_000)
        page.evaluate("() => window.jupyterapp.commands.execute('ragtt:open-history')")
        panel = page.locator("#ragtt-history")
        panel.wait_for(timeout=60_000)
        # the snapshots (labels as text, payload included) and the queries, newest first
        page.wait_for_selector("#ragtt-history .ragtt-history-row", timeout=60_000)
        snapshots = panel.locator(".ragtt-history-snapshot").all_inner_texts()
        assert any("flask-0.10" in s for s in snapshots) and any("flask-1.0" in s for s in snapshots)
        assert any("with-payloads" in s for s in snapshots)
        rows = panel.locator(".ragtt-history-row .ragtt-history-text").all_inner_texts()
        assert rows[:3] == [EVIL_QUERY, "application context teardown", "how do I register a blueprint"]
        assert panel.get_attribute("data-project") == "flask"
        # what is counted: the queries listed and, apart, the evaluations' runs (not "4 queries" alone)
        count = panel.locator(".ragtt-history-search + .ragtt-history-meta").inner_text()
        assert count == f"4 queries, newest first · {lab_root['cells']} evaluation runs (in their matrices)", count
        assert not panel.locator(".ragtt-history-count").evaluate("(e) => e.scrollWidth > e.clientWidth")  # whole
        # a replay's row says "replay" once, its own replay counted as one more (was "↻ 1 replay · replay")
        replayed = panel.locator(".ragtt-history-row", has_text=ASKED_OF_THE_PAST).locator(".ragtt-history-meta")
        assert re.match(r"replay · ↻ 1 more replay · \S+ · v3 · ", replayed.inner_text()), replayed.inner_text()
        screenshot(page, panel, screens / "lab_sidebar.png")

        # the answer preview shows what the answer says, an extractive one marked by a badge
        # (the label "[extractive answer: no generation mo…" filled the line)
        answer = panel.locator(".ragtt-history-row", has_text="application context teardown").locator(
            ".ragtt-history-answer"
        )
        assert answer.locator(".ragtt-history-badge").inner_text() == "extractive"
        assert "[extractive answer" not in answer.inner_text() and len(answer.inner_text()) > len("extractive ") + 10
        # each version row reads whole at the default width: its name and date, then what its ingest
        # changed, wrapped, none of it cut (one line each cut the dates); the list shows several
        line = page.evaluate(
            "() => parseFloat(getComputedStyle(document.querySelector('#ragtt-history')).lineHeight) || 20"
        )
        versions = panel.locator(".ragtt-history-snapshots")
        sized = versions.evaluate(
            """(ul) => ({client: ul.clientHeight, width: ul.clientWidth, items: ul.children.length,
              rows: [...ul.querySelectorAll('label')].map((l) => {
                const r = l.getBoundingClientRect(), parts = [...l.children].map((c) => c.getBoundingClientRect());
                return {text: l.innerText, height: r.height, cut: l.scrollWidth > l.clientWidth
                  || parts.some((p) => p.right > r.right + 0.5 || p.left < r.left - 0.5)};
              })})"""
        )
        assert sized["items"] >= 8 and not [r for r in sized["rows"] if r["cut"]], sized
        assert all(r["height"] <= 3.6 * line for r in sized["rows"]), sized  # two lines, a long label three
        assert sized["client"] >= 4 * min(r["height"] for r in sized["rows"]), sized  # four rows at least, no scroll
        v3 = versions.locator("li[data-version='3'] label").inner_text().splitlines()
        assert v3[0] == f"v3 flask-0.10 · as of {release_date(flask_releases()[0]).date().isoformat()}", v3
        assert re.fullmatch(r"ingest \+\d+/−\d+ chunks \(\d+ documents\)", v3[1]), v3
        assert len(sized["rows"][0]["text"].splitlines()) == 2  # the newest: "v8 with-payloads · <date>", its change
        # a long status line stays one line in the panel, cut, whole in its title
        long = "flask: " + "a status line longer than the panel is wide " * 3
        page.evaluate(f"(t) => {PANEL_JS}.say(t)", long)
        status = panel.locator(".ragtt-history-status")
        box, outer = status.bounding_box(), panel.bounding_box()
        assert box["x"] + box["width"] <= outer["x"] + outer["width"] and box["height"] <= 1.6 * line, (box, outer)
        assert status.get_attribute("title") == long
        page.evaluate(f"() => {PANEL_JS}.refresh()")

        # the project's lists paint together, keyed: painting them again keeps every row's node,
        # so a click that began on a row is never lost to a repaint
        page.wait_for_selector("#ragtt-history[data-painted='flask']", timeout=60_000)
        rows_and_items = "#ragtt-history .ragtt-history-row, #ragtt-history li"
        marked = page.evaluate(f"() => [...document.querySelectorAll({rows_and_items!r})].map((e) => (e.__kept = 1))")
        page.evaluate(f"() => {PANEL_JS}.refresh()")
        kept = page.evaluate(f"() => [...document.querySelectorAll({rows_and_items!r})].map((e) => e.__kept || 0)")
        assert len(marked) > 8 and kept == marked, kept  # the same nodes, none made again

        # a query opens its timeline in a tab (one click: a lost click fails); scrubbing moves the version shown
        panel.locator(".ragtt-history-row", has_text="register a blueprint").click()
        timeline = tab(page, "timeline", ".ragtt-timeline")
        timeline.locator(".ragtt-chunk").first.wait_for(timeout=60_000)
        # dated versions: the query's (the first release's) at its date, shown as that date; the
        # table's creation versions, committed today, no longer sit after every release
        info = timeline.locator(".ragtt-tl-info").inner_text()
        first_date = release_date(flask_releases()[0]).date().isoformat()
        assert f"flask-0.10 (v3) · {first_date} · ingest" in info and "Before the first" not in info, info
        cursor = timeline.locator(".ragtt-timeline-cursor")
        before = cursor.get_attribute("aria-valuenow")
        timeline.locator("button[aria-label='previous version']").click()
        page.wait_for_function(
            f"document.querySelector('.ragtt-tab .ragtt-timeline-cursor').getAttribute('aria-valuenow') !== '{before}'"
        )
        screenshot(page, timeline, screens / "lab_timeline_tab.png")

        # "Diff with now": a replay at the latest version, diffed with the query as it ran
        panel.get_by_role("button", name="diff the selected query with a replay now").click()
        diff = tab(page, "chunk_diff", ".ragtt-chunk-diff")
        assert "register a blueprint" in diff.locator(".ragtt-cd-query").first.inner_text()
        heads = diff.locator(".ragtt-cd-colhead").all_inner_texts()
        assert "flask-0.10" in heads[0] and "with-payloads" in heads[1]  # then and now
        assert LONG_URL in diff.locator(".ragtt-cd-right").inner_text()  # a word wider than the column
        assert_columns_fit(diff)
        screenshot(page, diff, screens / "lab_chunk_diff_tab.png")

        # "Insert in notebook" writes the %ragtt line below the active cell
        page.locator(".ragtt-tab:visible .ragtt-insert").click()
        page.wait_for_function(
            "() => window.jupyterapp.shell.currentWidget && window.jupyterapp.shell.currentWidget.sessionContext"
        )
        written = cells(page)
        then, now = diff.locator(".ragtt-cd-id").all_inner_texts()
        assert written[1:] == [f"%ragtt diff --left {then} --right {now}"]  # the magic's own syntax

        # the kernel opens the second project: the panel follows
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.ready")
        page.evaluate(
            """(code) => {
              const nb = window.jupyterapp.shell.currentWidget;
              nb.content.activeCell.model.sharedModel.setSource(code);
              return window.jupyterapp.commands.execute('notebook:run-cell');
            }""",
            f"%load_ext ragtt_nb\n%ragtt open {json.dumps(str(lab_root['root'] / 'second'))[1:-1]}",
        )
        page.wait_for_selector("#ragtt-history[data-project='second']", timeout=90_000)
        page.wait_for_function(
            "() => [...document.querySelectorAll('#ragtt-history .ragtt-history-text')]"
            ".some((e) => e.textContent === 'second project')",
            timeout=30_000,
        )
        # one query: "1 query", not "1 queries"
        page.wait_for_function(
            "() => document.querySelector('#ragtt-history .ragtt-history-status').textContent.includes('1 query')",
            timeout=30_000,
        )
        assert panel.locator(".ragtt-history-status").inner_text().endswith(" versions, 1 query")
        assert panel.locator(".ragtt-history-search + .ragtt-history-meta").inner_text() == "1 query, newest first"
        screenshot(page, panel, screens / "lab_sidebar_second.png")

        # nothing ran from the payloads
        assert page.evaluate("window.__pwned") is None and dialogs == []
        assert page.locator("#ragtt-history img, .ragtt-tab img[onerror]").count() == 0
        page.evaluate("() => window.jupyterapp.serviceManager.sessions.shutdownAll()")
    finally:
        context.close()


def open_lab(browser: Any, lab: str) -> tuple[Any, Any, list[str]]:
    """A 1400x900 page on the notebook with the sidebar open and its query rows painted."""
    context, page = new_page(browser)
    dialogs: list[str] = []
    # A reload leaves an unsaved notebook: its "leave the page?" is accepted; any other dialog
    # (an alert a payload raised) is recorded.
    page.on("dialog", lambda d: d.accept() if d.type == "beforeunload" else (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{lab}/lab/tree/work.ipynb?token={TOKEN}")
    page.wait_for_function("window.jupyterapp && window.jupyterapp.shell.currentWidget", timeout=120_000)
    page.evaluate("() => window.jupyterapp.commands.execute('ragtt:open-history')")
    page.wait_for_selector("#ragtt-history[data-project='flask'] .ragtt-history-row", timeout=60_000)
    return context, page, dialogs


# A tab's state is bounded by the product (labextension/src/tab.ts, MODEL_WAIT_S = 120 s): every
# tab ends ready or error by then. The tests wait a little longer, for a loaded 2-core CI machine.
SETTLED_MS = 150_000


def tab(page: Any, widget: str, css: str, state: str = "ready") -> Any:
    """The current main-area tab once it shows ``widget`` settled (ready or error), then the
    element matching ``css`` in it; another ``state`` than the one expected fails with the
    message the tab shows."""
    try:
        settled = page.wait_for_function(
            """(widget) => {
              const w = window.jupyterapp.shell.currentWidget;
              const host = w && w.node.querySelector(':scope > .ragtt-tab-host');
              if (!host || host.dataset.widget !== widget) return null;
              const state = host.dataset.state;
              return state === 'ready' || state === 'error' ? {id: w.id, state, text: host.innerText} : null;
            }""",
            arg=widget,
            timeout=SETTLED_MS,
            polling=200,
        ).json_value()
    except PlaywrightTimeout:  # say what the page shows instead
        shown = page.evaluate(
            """() => ({current: window.jupyterapp.shell.currentWidget?.id,
              tabs: Array.from(window.jupyterapp.shell.widgets('main')).map((w) => [w.id,
                w.node.querySelector(':scope > .ragtt-tab-host')?.dataset.state, w.isVisible]),
              status: document.querySelector('#ragtt-history .ragtt-history-status')?.textContent})"""
        )
        page.screenshot(path=str(Path(os.environ[SCREENS_ENV]) / f"lab_no_{widget}_tab.png"))
        pytest.fail(f"no {widget} tab settled within {SETTLED_MS // 1000} s; the page shows {shown}")
    assert settled["state"] == state, settled["text"]
    found = page.locator(f"#{settled['id']} {css}")
    found.wait_for(timeout=60_000)
    return found


def tab_titles(page: Any) -> list[str]:
    return list(page.locator(".lm-DockPanel-tabBar .lm-TabBar-tabLabel").all_inner_texts())


def test_matrix_drift_pdf_and_picked_diff_tabs(
    lab: str, lab_root: dict[str, Any], browser: Any, screens: Path, shell: Any
) -> None:
    """The evaluation matrix (read back), two versions' drift, a PDF's overlay and two picked
    runs' diff, each in a tab whose "Insert in notebook" line a notebook runs to the same view;
    the palette's commands; the tabs come back on reload; the picker keeps its height."""
    context, page, dialogs = open_lab(browser, lab)
    try:
        panel = page.locator("#ragtt-history")
        # the picker is one line high and overlaps nothing (JupyterLab's select style let it grow)
        picker, status = panel.locator("select").bounding_box(), panel.locator(".ragtt-history-status").bounding_box()
        assert picker["height"] <= 34 and picker["y"] + picker["height"] <= status["y"], (picker, status)

        lines: dict[str, str] = {}

        def line_of(widget: str) -> str:
            lines[widget] = page.locator(".ragtt-tab:visible .ragtt-tab-line").inner_text()
            return lines[widget]

        # the evaluation matrix, read back from the log: the dataset's name and questions as text
        item = panel.locator(".ragtt-history-evaluation")
        assert item.count() == 1 and item.get_attribute("data-evaluation") == lab_root["evaluation"]
        assert EVIL_DATASET in item.inner_text() and "2 questions × 5 versions" in item.inner_text()
        item.locator("button").click()
        matrix = tab(page, "history_matrix", ".ragtt-history-matrix[data-painted]")
        assert EVIL_QUESTION in matrix.inner_text()
        line_of("history_matrix")
        # the got-worse list of the metric shown, from the server (the tab's state carries none),
        # each regression with its reason; a click opens its cell's diff (the tab showed no list)
        (fell,) = lab_root["worse"]["context_recall"]
        expect(matrix).to_have_attribute("data-worse", "list", timeout=60_000)
        assert matrix.get_attribute("data-worse-metric") == "context_recall"
        item = matrix.locator(".ragtt-hm-worse-go")
        assert item.count() == 1 and item.locator(".ragtt-hm-worse-q").inner_text() == EVIL_WORSE
        assert item.locator(".ragtt-hm-worse-why").inner_text() == f"why: {fell['reason']}"
        assert fell["first_bad_label"] == "flask-1.0" and "no longer holds it" in fell["reason"]
        item.click()
        expect(matrix).to_have_attribute("data-panel", "diff", timeout=60_000)
        assert matrix.locator(".ragtt-cd-id").last.inner_text() == fell["first_bad_query_id"]
        assert matrix.locator(".ragtt-hm-readout").inner_text().startswith(f"{EVIL_WORSE} · flask-1.0 (v")
        screenshot(page, matrix, screens / "lab_history_matrix_tab.png")
        # another metric's list, asked of the server when picked: its own
        matrix.locator(".ragtt-hm-metric").select_option("contains")
        contains = lab_root["worse"]["contains"]
        expect(matrix).to_have_attribute("data-worse", "list" if contains else "none", timeout=60_000)
        assert matrix.locator(".ragtt-hm-worse-why").all_inner_texts() == [f"why: {r['reason']}" for r in contains]
        matrix.locator(".ragtt-hm-metric").select_option("context_recall")
        expect(matrix).to_have_attribute("data-worse", "list")
        # a cell opened below the plot: hovering it again, the tip never covers what opened
        canvas = matrix.locator(".ragtt-hm-canvas")
        cbox = canvas.bounding_box()
        geo = {k: float(canvas.get_attribute(f"data-{k}")) for k in ("left", "top", "cell-w", "cell-h")}
        x, y = cbox["x"] + geo["left"] + 1.5 * geo["cell-w"], cbox["y"] + geo["top"] + 0.5 * geo["cell-h"]
        page.mouse.click(x, y)
        page.wait_for_function(
            "() => ['diff', 'same', 'first'].includes(document.querySelector('.ragtt-tab:not(.lm-mod-hidden) "
            ".ragtt-history-matrix')?.dataset.panel)",
            timeout=60_000,
        )
        assert not matrix.locator(".ragtt-hm-tip").is_visible()  # hidden as the cell opens
        page.mouse.move(x + 2, y + 1)
        tip = matrix.locator(".ragtt-hm-tip")
        expect(tip).to_be_visible()
        opened = matrix.locator(".ragtt-hm-panel").bounding_box()
        assert tip.bounding_box()["y"] + tip.bounding_box()["height"] <= opened["y"], (tip.bounding_box(), opened)
        # the tip and the readout say the column's time as the Timeline does: a release's date, not ISO text
        released = f"flask-0.11 (v4) · {release_date(flask_releases()[1]).date().isoformat()}"
        assert tip.locator(".ragtt-hm-tip-line").first.inner_text() == released
        assert f"{released} · " in matrix.locator(".ragtt-hm-readout").inner_text()
        cell = {  # what the opened cell shows: a reload must show it again
            "panel": matrix.get_attribute("data-panel"),
            "title": matrix.locator(".ragtt-hm-panel-title").inner_text(),
        }
        screenshot(page, matrix, screens / "lab_history_matrix_tip.png")
        # every count in words agrees with its number
        assert matrix.locator(".ragtt-hm-counts").inner_text() == "2 questions × 5 versions"

        # two versions picked: their drift
        drift_button = panel.get_by_role("button", name="open the drift between the two picked versions")
        assert drift_button.is_disabled()
        for version in ("3", "8"):  # v8 added the source named with a payload: the drift lists it
            panel.locator(f".ragtt-history-snapshots li[data-version='{version}'] input").check()
        drift_button.click()
        drift = tab(page, "drift_scatter", ".ragtt-drift-scatter[data-painted]")
        assert line_of("drift_scatter") == "%ragtt drift 3 8" and EVIL_SOURCE in drift.inner_text()
        # source names wrap at their separators (or spaces), never mid-word ("docs/installatio" / "n.rst")
        breaks = drift.locator(".ragtt-ds-source").evaluate_all(
            """(cells) => cells.flatMap((cell) => {
              const chars = [];
              for (const node of [...cell.childNodes].filter((n) => n.nodeType === 3)) {
                for (let i = 0; i < node.data.length; i++) chars.push([node, i]);
              }
              const out = [];
              let top = null;
              chars.forEach(([node, i], k) => {
                const range = document.createRange();
                range.setStart(node, i); range.setEnd(node, i + 1);
                const t = range.getBoundingClientRect().top;
                if (top !== null && t > top + 2) {
                  const [pn, pi] = chars[k - 1];
                  out.push({text: cell.textContent, after: pn.data[pi]});
                }
                top = t;
              });
              return out;
            })"""
        )
        assert breaks and all(b["after"] in "/_.- " for b in breaks), breaks  # names do wrap, at separators
        screenshot(page, drift, screens / "lab_drift_tab.png")

        # a PDF source: its pages with the chunks' regions
        pdf_item = panel.locator(".ragtt-history-pdf")
        assert pdf_item.all_inner_texts() == [EVIL_PDF]
        pdf_item.locator("button").click()
        pdf = tab(page, "pdf_overlay", ".ragtt-pdf-overlay[data-page]")
        line_of("pdf_overlay")
        screenshot(page, pdf, screens / "lab_pdf_tab.png")

        # two runs picked: their diff, the older on the left
        rows = panel.locator(".ragtt-history-row")
        # (an earlier test's "Diff with now" logged replays of the blueprint question: its first run is last)
        rows.filter(has_text="register a blueprint").last.locator("input").check()
        rows.filter(has_text="application context teardown").first.locator("input").check()
        panel.get_by_role("button", name="diff the two picked runs").click()
        diff = tab(page, "chunk_diff", ".ragtt-chunk-diff")
        ids = diff.locator(".ragtt-cd-id").all_inner_texts()
        assert len(ids) == 2 and line_of("chunk_diff") == f"%ragtt diff --left {ids[0]} --right {ids[1]}"
        screenshot(page, diff, screens / "lab_picked_diff_tab.png")

        # every line is the magic's own syntax and shows the same thing in a notebook
        shell.run_line_magic("ragtt", f"open {shlex.quote(str(lab_root['root'] / 'flask'))}")
        with ragtt.Project.open(lab_root["root"] / "flask", embedder=ragtt.HashEmbedder(), progress=False) as proj:
            logged = proj.events.frame().height
        shown = {widget: shell.run_line_magic("ragtt", line.removeprefix("%ragtt ")) for widget, line in lines.items()}
        assert {w: type(v).__name__ for w, v in shown.items()} == {
            "history_matrix": "HistoryMatrix",
            "drift_scatter": "DriftScatter",
            "pdf_overlay": "PdfOverlay",
            "chunk_diff": "ChunkDiff",
        }
        assert repr(shown["pdf_overlay"]).startswith(f"PdfOverlay({EVIL_PDF!r}")
        assert shlex.split(lines["history_matrix"])[2] == str(lab_root["dataset"])
        with ragtt.Project.open(lab_root["root"] / "flask", embedder=ragtt.HashEmbedder(), progress=False) as proj:
            assert proj.events.frame().height == logged  # the eval line read the matrix back: nothing ran

        # "Insert in notebook" from a tab (the command, on the last ragtt tab used)
        page.evaluate("() => window.jupyterapp.commands.execute('ragtt:insert-in-notebook')")
        page.wait_for_function("() => window.jupyterapp.shell.currentWidget.sessionContext")
        assert cells(page)[-1] == lines["chunk_diff"]

        # the palette lists ragtt's commands; "Diff with now" from it opens a diff
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:activate-command-palette')")
        page.locator(".lm-CommandPalette-input").fill("ragtt")
        labels = page.locator(".lm-CommandPalette-itemLabel").all_inner_texts()
        for label in ("ragtt: Open history", "ragtt: Replay query...", "ragtt: Diff with now"):
            assert label in labels, labels
        before = len(tab_titles(page))
        page.locator(".lm-CommandPalette-item", has_text="ragtt: Diff with now").click()
        page.wait_for_function(
            f"() => document.querySelectorAll('.lm-DockPanel-tabBar .lm-TabBar-tab').length > {before}"
        )
        tab(page, "chunk_diff", ".ragtt-chunk-diff")
        # "Replay query..." asks for an id (the selected query's), replays it, opens its timeline
        page.evaluate("() => { window.jupyterapp.commands.execute('ragtt:replay-query'); }")  # resolves on OK
        page.locator(".jp-Dialog .jp-mod-accept").click()
        timeline = tab(page, "timeline", ".ragtt-timeline")
        # scrubbed two versions back: a reload must come back there, not at the latest
        cursor = timeline.locator(".ragtt-timeline-cursor")
        for _ in range(2):
            before = cursor.get_attribute("aria-valuenow")
            timeline.locator("button[aria-label='previous version']").click()
            expect(cursor).not_to_have_attribute("aria-valuenow", before)
        scrubbed = {
            "at": cursor.get_attribute("aria-valuenow"),
            "info": timeline.locator(".ragtt-tl-info").inner_text(),
        }

        # reload: every tab comes back (ILayoutRestorer), the sidebar's four and the palette's two
        # alike (one command opens them all), each rendering again
        opened = page.evaluate(RAGTT_TABS_JS)
        assert len(opened) == 6, opened
        # the workspace saved them all, its layout naming each (saves are debounced: poll, bounded)
        saved_js = """(n) => fetch('/lab/api/workspaces/default', {headers: {Authorization: 'token ' + n}})
          .then((r) => r.json()).then((w) => {
            const names = Object.keys(w.data).filter((k) => k.startsWith('ragtt:'));
            const main = JSON.stringify((w.data['layout-restorer:data'] || {}).main || {});
            return names.filter((k) => main.includes(JSON.stringify(k))).length;
          })"""
        deadline = time.monotonic() + 30
        while page.evaluate(saved_js, TOKEN) < 6 and time.monotonic() < deadline:
            page.wait_for_timeout(500)
        assert page.evaluate(saved_js, TOKEN) == 6
        # and where each was left: the opened cell, the version scrubbed to (with the tabs' restore args)
        views_js = """(n) => fetch('/lab/api/workspaces/default', {headers: {Authorization: 'token ' + n}})
          .then((r) => r.json()).then((w) => Object.entries(w.data).filter(([k]) => k.startsWith('ragtt:'))
            .map(([, v]) => [v.data.widget, v.data.view || null]))"""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            views = dict(page.evaluate(views_js, TOKEN))
            if (views.get("history_matrix") or {}).get("selected") and (views.get("timeline") or {}).get("version"):
                break
            page.wait_for_timeout(500)
        assert (views.get("history_matrix") or {}).get("selected") == {"question": 0, "column": 1}, views
        assert (views.get("timeline") or {}).get("version") == int(scrubbed["at"]), (views, scrubbed)
        page.reload(wait_until="commit", timeout=120_000)
        page.wait_for_function("window.jupyterapp && window.jupyterapp.shell.currentWidget", timeout=120_000)
        page.evaluate("() => window.jupyterapp.restored")
        restored = page.evaluate(RAGTT_TABS_JS)
        assert restored == opened, {"opened": opened, "restored": restored}
        states = page.wait_for_function(  # every restored tab settles, and settles ready
            """() => { const s = [...document.querySelectorAll('.ragtt-tab-host')].map((h) => h.dataset.state);
                       return s.every((x) => x === 'ready' || x === 'error') && s; }""",
            timeout=SETTLED_MS,
            polling=500,
        ).json_value()
        assert states == ["ready"] * 6, page.locator(".ragtt-tab-host[data-state=error]").all_inner_texts()
        # A click while the restored layout still settles can land on a moving tab bar: click
        # until the tab is the current one (bounded), then its widget must paint.
        _make_current(page, "Matrix · ")
        matrix = tab(page, "history_matrix", ".ragtt-history-matrix[data-painted]")
        # the matrix shows the cell opened before the reload (it came back with none)
        expect(matrix).to_have_attribute("data-panel", cell["panel"], timeout=60_000)
        assert matrix.locator(".ragtt-hm-panel-title").inner_text() == cell["title"]
        assert matrix.locator(".ragtt-hm-readout").inner_text().startswith(f"{EVIL_QUESTION} · {released} · ")
        screenshot(page, matrix, screens / "lab_history_matrix_restored.png")
        # the timeline is where it was scrubbed to (it came back at the latest version)
        _make_current(page, "Timeline · ")
        timeline = tab(page, "timeline", ".ragtt-timeline")
        assert timeline.locator(".ragtt-timeline-cursor").get_attribute("aria-valuenow") == scrubbed["at"]
        assert timeline.locator(".ragtt-tl-info").inner_text() == scrubbed["info"]
        screenshot(page, timeline, screens / "lab_timeline_restored.png")

        # nothing ran from the payloads (question, dataset name, PDF name)
        assert page.evaluate("window.__pwned") is None and dialogs == []
        assert page.locator("#ragtt-history img, .ragtt-tab img[onerror]").count() == 0
        page.evaluate("() => window.jupyterapp.serviceManager.sessions.shutdownAll()")
    finally:
        context.close()


def test_read_only_setting(lab: str, lab_root: dict[str, Any], browser: Any) -> None:
    """The lab setting readOnly (settings schema labextension/schema/plugin.json): no query box,
    the replaying commands off, and the server refuses what the front end still asks."""
    import httpx

    auth = {"Authorization": f"token {TOKEN}"}
    put = httpx.put(
        f"{lab}/lab/api/settings/ragtt:plugin", headers=auth, json={"raw": json.dumps({"readOnly": True})}, timeout=30
    )
    assert put.status_code == 204, put.text
    schema = httpx.get(f"{lab}/lab/api/settings/ragtt:plugin", headers=auth, timeout=30).json()["schema"]
    assert set(schema["properties"]) == {"defaultProject", "readOnly"}
    events = f"{lab}/ragtt/api/projects/flask/events"
    logged = len(httpx.get(events, headers=auth, timeout=60).json())
    context, page, dialogs = open_lab(browser, lab)
    try:
        panel = page.locator("#ragtt-history[data-read-only='true']")
        panel.wait_for(timeout=30_000)
        assert not panel.locator(".ragtt-history-ask").is_visible()
        assert panel.get_by_role("button", name="diff the selected query with a replay now").is_disabled()
        enabled = page.evaluate(
            "() => ['ragtt:diff-with-now', 'ragtt:replay-query', 'ragtt:open-history']"
            ".map((c) => window.jupyterapp.commands.isEnabled(c))"
        )
        assert enabled == [False, False, True]
        # a command run anyway: the request carries the setting and the server refuses it
        page.evaluate("() => window.jupyterapp.commands.execute('ragtt:diff-with-now')")
        status = panel.locator(".ragtt-history-status.ragtt-history-error")
        status.wait_for(timeout=30_000)
        assert "403" in status.inner_text() and "readOnly" in status.inner_text()
        panel.locator(".ragtt-history-row").first.click()  # reading still works
        tab(page, "timeline", ".ragtt-timeline")
        assert len(httpx.get(events, headers=auth, timeout=60).json()) == logged and dialogs == []

        # a server error ends the tab in an error that says why, with a way to try again
        page.evaluate(
            "() => window.jupyterapp.commands.execute('ragtt:open-widget',"
            " {project: 'flask', widget: 'chunk_diff', args: {left: 'no-such-run', right: 'nor-this'}})"
        )
        failed = tab(page, "chunk_diff", ".ragtt-tab-host", state="error")
        assert (
            "Could not show the chunk_diff: Error: 404" in failed.inner_text() and "no-such-run" in failed.inner_text()
        )
        assert failed.get_by_role("button", name="load the chunk_diff again").is_visible()
    finally:
        context.close()


def test_a_workspace_edited_with_views_that_do_not_fit_keeps_the_servers(
    lab: str, lab_root: dict[str, Any], browser: Any
) -> None:
    """A saved workspace whose tabs' views no longer fit what the server holds (a page past the
    PDF's last, a zoom of 1e9, a metric named "constructor", a matrix cell outside the matrix, an
    unknown axis or colouring: a stale or hand-edited workspace): after a reload every tab still
    renders, each such value replaced by the server's and a value that fits kept."""
    import httpx

    auth = {"Authorization": f"token {TOKEN}"}
    workspace = f"{lab}/lab/api/workspaces/default"
    host_js = "(w) => document.querySelector(`.ragtt-tab-host[data-widget='${w}']`).closest('.ragtt-tab').id"

    def show(page: Any, widget: str, css: str) -> Any:
        page.evaluate(f"(w) => window.jupyterapp.shell.activateById(({host_js})(w))", widget)
        return tab(page, widget, css)

    def shown(page: Any) -> dict[str, Any]:
        """What each of the four tabs shows where its view traits act."""
        timeline = show(page, "timeline", ".ragtt-timeline-cursor")
        matrix = show(page, "history_matrix", ".ragtt-history-matrix[data-painted]")
        drift = show(page, "drift_scatter", ".ragtt-drift-scatter[data-painted]")
        pdf = show(page, "pdf_overlay", ".ragtt-pdf-overlay[data-page]")
        box = pdf.locator(".ragtt-po-page").bounding_box()
        return {
            "version": timeline.get_attribute("aria-valuenow"),
            "first": timeline.get_attribute("aria-valuemin"),
            "metric": matrix.locator("select").input_value(),
            "panel": matrix.get_attribute("data-panel"),
            "color_by": drift.locator("select[aria-label='colour points by']").input_value(),
            "page": pdf.get_attribute("data-page"),
            "width": box and box["width"],
        }

    context, page, dialogs = open_lab(browser, lab)
    try:
        panel = page.locator("#ragtt-history")
        panel.locator(".ragtt-history-row").filter(has_text="application context teardown").first.click()
        tab(page, "timeline", ".ragtt-timeline")
        panel.locator(".ragtt-history-evaluation button").click()
        tab(page, "history_matrix", ".ragtt-history-matrix[data-painted]")
        for version in ("3", "8"):
            panel.locator(f".ragtt-history-snapshots li[data-version='{version}'] input").check()
        panel.get_by_role("button", name="open the drift between the two picked versions").click()
        tab(page, "drift_scatter", ".ragtt-drift-scatter[data-painted]")
        panel.locator(".ragtt-history-pdf button").click()
        tab(page, "pdf_overlay", ".ragtt-pdf-overlay[data-page]")
        server = shown(page)
        assert server["panel"] is None and 0 < server["width"] < 2000, server
        assert server["first"] != server["version"], server  # the version kept below is not the server's
        deadline = time.monotonic() + 30  # the workspace saves the four tabs (debounced: poll, bounded)
        while time.monotonic() < deadline:
            saved = httpx.get(workspace, headers=auth, timeout=30).json()
            if sum(k.startswith("ragtt:") for k in saved["data"]) == 4:
                break
            page.wait_for_timeout(500)
    finally:
        context.close()  # nothing saves the workspace over the edit below

    views = {
        "timeline": {"version": int(server["first"]), "axis": "sideways"},  # the version fits: kept
        "history_matrix": {"selected": {"question": 99, "column": 0}, "metric": "constructor"},
        "drift_scatter": {"color_by": "<img src=x onerror=\"window.__pwned='view'\">"},
        "pdf_overlay": {"page": 10_000, "scale": 1e9},
    }
    entries = {k: v for k, v in saved["data"].items() if k.startswith("ragtt:")}
    assert sorted(v["data"]["widget"] for v in entries.values()) == sorted(views), entries
    for entry in entries.values():
        entry["data"]["view"] = views[entry["data"]["widget"]]
    put = httpx.put(workspace, headers=auth, json=saved, timeout=30)
    assert put.status_code == 204, put.text

    context, page, dialogs = open_lab(browser, lab)
    try:
        states = page.wait_for_function(  # every restored tab settles, and settles ready
            """() => { const s = [...document.querySelectorAll('.ragtt-tab-host')].map((h) => h.dataset.state);
                       return s.length === 4 && s.every((x) => x === 'ready' || x === 'error') && s; }""",
            timeout=SETTLED_MS,
            polling=500,
        ).json_value()
        assert states == ["ready"] * 4, page.locator(".ragtt-tab-host[data-state=error]").all_inner_texts()
        assert shown(page) == {**server, "version": server["first"]}
        assert page.evaluate("window.__pwned") is None and dialogs == []
    finally:
        context.close()


def _make_current(page: Any, title: str) -> None:
    """Click the main-area tab whose title holds ``title`` until it is the current one (30 s at most)."""
    tab_ = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text=title)
    current = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current", has_text=title)
    deadline = time.monotonic() + 30
    while current.count() == 0 and time.monotonic() < deadline:
        tab_.click()
        page.wait_for_timeout(500)
