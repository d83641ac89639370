"""Notebook widgets: first paint of a 10,000-event Timeline in headless Chromium, and the
size of the exported quickstart report. The issue's bars: under 1 s, and under 8 MB.

The timeline's project holds real events: documents ingested over many versions with
snapshots, and queries (five events each) until the log holds 10,000 events. The widget's
state is saved in a notebook exported by the ragtt report template (opened with no network);
"first paint" is from navigation start to the frame after the timeline's root appears
(parsing the page and its scripts included), and "render" is the part spent in our view.

    .venv/bin/python bench/bench_widgets.py [--events 10000] [--rounds 3] [--check]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import ragtt

REPO = Path(__file__).resolve().parents[1]
STATIC = REPO / "ragtt_nb" / "templates" / "ragtt" / "static"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
PAINT_TARGET_S = 1.0
SIZE_TARGET = 8_000_000


def build_project(path: Path, events: int) -> tuple[ragtt.Project, str, float]:
    proj = ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False)
    started = time.perf_counter()
    focal = None
    for release in range(40):
        proj.ingest_texts(
            {
                f"doc-{d:02d}.md": f"# Document {d}\n\nRelease {release} says {d * release} days for topic {d}."
                for d in range(release % 7, 25, 3)
            }
        )
        if release % 10 == 0:
            proj.snapshot(f"r{release}")
        focal = focal or proj.query("how many days for topic 4", generate=False).query_id
    while len(proj.events.frame()) < events:
        for _ in range(100):
            proj.query("days for topic 7", generate=False)
    return proj, focal or "", time.perf_counter() - started


def report_page(widget: object, path: Path) -> Path:
    """``widget`` in an offline report, written to ``path`` by ragtt's report template: the
    notebook holds one output, the widget's view, and its saved state, as JupyterLab saves
    them. A ragtt widget's report carries ragtt's bootstrap and no widget manager."""
    import nbformat
    from ipywidgets.embed import embed_data

    from ragtt_nb.export import export_report

    data = embed_data(views=[widget], drop_defaults=False)
    nb = nbformat.v4.new_notebook()
    shown = {"text/plain": type(widget).__name__, "application/vnd.jupyter.widget-view+json": data["view_specs"][0]}
    nb.cells = [nbformat.v4.new_code_cell("widget", outputs=[nbformat.v4.new_output("display_data", data=shown)])]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": data["manager_state"]}
    notebook = path.with_suffix(".ipynb")
    nbformat.write(nb, notebook)
    return export_report(notebook, path)


# Where a report's widget view begins: ragtt's bootstrap's host, or the widget manager's.
VIEW_HOST = ".ragtt-report-view, .widget-subarea"


def first_paint(html: Path, rounds: int) -> list[tuple[float, float]]:
    probe = """
      window.__viewStart = null;
      new MutationObserver((_, obs) => {
        if (!window.__viewStart && document.querySelector('VIEW_HOST')) {
          window.__viewStart = performance.now();
        }
        const root = document.querySelector('.ragtt-timeline');
        if (root && root.querySelector('canvas').width > 0) {
          obs.disconnect();
          requestAnimationFrame(() => { window.__painted = performance.now(); });
        }
      }).observe(document, { childList: true, subtree: true });
    """
    return paint_times(html, probe, rounds, root=".ragtt-timeline", timeout_ms=30_000)


def paint_times(html: Path, probe: str, rounds: int, *, root: str, timeout_ms: int) -> list[tuple[float, float]]:
    """(navigation -> painted, view start -> painted) in seconds, per round, offline.

    ``probe`` is an init script that sets ``window.__painted`` and ``window.__viewStart``; the
    word VIEW_HOST in it stands for ``VIEW_HOST``, the selector of a widget view's host.
    """
    from playwright.sync_api import sync_playwright

    out = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        for _ in range(rounds):
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.route(lambda u: not u.startswith(("file:", "data:", "blob:")), lambda r: r.abort())
            page.add_init_script(probe.replace("VIEW_HOST", VIEW_HOST))
            page.goto(html.as_uri())
            page.wait_for_function("window.__painted", timeout=timeout_ms)
            painted, start = page.evaluate("[window.__painted, window.__viewStart]")
            assert page.evaluate(f"document.querySelectorAll('{root}').length") == 1, f"{root} did not render"
            out.append((painted / 1000, (painted - start) / 1000))
            page.close()
        browser.close()
    return out


def quickstart_size(folder: Path) -> int:
    from ragtt_nb.export import export_report

    os.environ["RAGTT_EMBEDDER"] = "hash"
    out = export_report(REPO / "notebooks" / "quickstart.ipynb", folder / "quickstart.html", execute=True)
    return out.stat().st_size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    from ragtt_nb import Timeline

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        proj, focal, build_s = build_project(folder / "proj", args.events)
        n_events = len(proj.events.frame())
        started = time.perf_counter()
        timeline = Timeline(proj, focal)
        widget_s = time.perf_counter() - started
        html = report_page(timeline, folder / "timeline.html")
        paints = first_paint(html, args.rounds)
        page_mb = html.stat().st_size / 1e6
        proj.close()
        size = quickstart_size(folder)
    paint = statistics.median(p for p, _ in paints)
    render = statistics.median(r for _, r in paints)
    print(
        f"timeline: {n_events:,} events, {len(timeline.versions)} versions (project built in {build_s:.1f} s; "
        f"Timeline() with per-version precompute {widget_s:.2f} s; page {page_mb:.1f} MB)"
    )
    print(
        f"  first paint (navigation -> painted, median of {len(paints)}): {paint:.3f} s "
        f"[target < {PAINT_TARGET_S} s]; of which the widget view: {render:.3f} s"
    )
    print(f"quickstart report: {size / 1e6:.2f} MB [target < {SIZE_TARGET / 1e6:.0f} MB]")
    ok = paint < PAINT_TARGET_S and size < SIZE_TARGET
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
