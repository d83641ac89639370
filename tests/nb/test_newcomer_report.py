"""Issue 30, item 6: reports from the notebook a newcomer writes (README's "In Jupyter" on 6
Flask releases). Saved from JupyterLab with widget state on, it has finished ingest progress
bars whose models are closed: the report shows their final text instead of refusing; a
refusal names the cells; ``ragtt report --execute`` never writes to the project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

import ragtt
from ragtt_nb.export import ReportError, closed_progress_text, export_report, views_without_state
from tests.conftest import flask_releases
from tests.nb.newcomer import code_notebook, notebook, run_like_jupyterlab

RAGTT = str(Path(sys.executable).parent / "ragtt")
EXTRA = next(p for p in flask_releases() if p.name.endswith("_flask-3.1.2"))


def _report(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RAGTT, "report", *args], capture_output=True, text=True, timeout=600)


def _version(path: Path) -> tuple[int, int]:
    """The project's index version and its number of events."""
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        return proj.version, len(proj.events.frame())


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The newcomer's notebook run in a kernel and saved as JupyterLab saves it."""
    folder = tmp_path_factory.mktemp("newcomer")
    old = os.environ.get("RAGTT_EMBEDDER")
    os.environ["RAGTT_EMBEDDER"] = "hash"  # the kernel inherits it
    try:
        nb = run_like_jupyterlab(notebook(), folder)
    finally:
        if old is None:
            os.environ.pop("RAGTT_EMBEDDER")
        else:
            os.environ["RAGTT_EMBEDDER"] = old
    path = folder / "flask.ipynb"
    nbformat.write(nb, path)
    yield {"path": path, "folder": folder, "project": folder / "flaskproj"}


def test_the_saved_notebook_has_closed_progress_bars(saved: dict[str, Any]) -> None:
    """The symptom's cause, reproduced: widget outputs whose state JupyterLab could not save."""
    nb = nbformat.read(saved["path"], as_version=4)
    missing = views_without_state(nb)
    assert missing, "the ingests showed no progress bar: the reproduction is lost"
    texts = [
        o["data"]["text/plain"]
        for c in nb.cells
        for o in c.get("outputs", [])
        if o.get("data", {}).get("application/vnd.jupyter.widget-view+json", {}).get("model_id") in missing
    ]
    assert all("ragtt embed" in t or "ragtt parse" in t for t in texts), texts


def test_the_newcomer_notebook_exports_as_saved_and_leaves_the_project_alone(
    saved: dict[str, Any], tmp_path: Path
) -> None:
    before = _version(saved["project"])
    done = _report(str(saved["path"]), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "(finished)" in html and "ragtt embed: 100%" in html
    assert _version(saved["project"]) == before


def test_execute_runs_against_a_throwaway_copy_and_says_so(saved: dict[str, Any]) -> None:
    """The newcomer's `ragtt report --execute` re-ran the notebook's ingests into the project
    (v8 -> v14, permanent). Here a notebook beside it ingests one more release and snapshots it."""
    nb = code_notebook(
        "%load_ext ragtt_nb",
        "%ragtt open ./flaskproj",
        f"%ragtt ingest {EXTRA}\n%ragtt snapshot one-more",
        "res = %ragtt query What is the minimum Python version?",
        "%ragtt timeline last",
    )
    path = saved["folder"] / "one_more.ipynb"
    nbformat.write(nb, path)
    before = _version(saved["project"])
    out = saved["folder"] / "one_more.html"
    done = _report(str(path), "-o", str(out), "--execute", "--embedder", "hash")
    assert done.returncode == 0, done.stderr
    assert "throwaway copy of ./flaskproj" in done.stderr and "unchanged" in done.stderr
    assert _version(saved["project"]) == before
    assert "one-more" in out.read_text(encoding="utf-8")  # the copy got the ingest and the snapshot


def test_allow_writes_writes_and_needs_execute(saved: dict[str, Any], tmp_path: Path) -> None:
    misuse = _report(str(saved["path"]), "--allow-writes")
    assert misuse.returncode == 2 and "--allow-writes needs --execute" in misuse.stderr


def test_a_computed_path_outside_the_folder_runs_against_a_copy_too(saved: dict[str, Any], tmp_path: Path) -> None:
    """Paths are redirected where the kernel opens them, so a path computed at run time or
    outside the notebook's folder cannot slip through."""
    nb = code_notebook(
        "%load_ext ragtt_nb\nimport ragtt\nfrom pathlib import Path",
        f"WHERE = Path({str(saved['folder'])!r})\nproj = ragtt.Project.open(WHERE / 'flaskproj')",
        f"proj.ingest({str(EXTRA)!r})\nproj.snapshot('computed')",
        "%ragtt open {WHERE / 'flaskproj'}\n%ragtt snapshot via-magic",
    )
    (tmp_path / "elsewhere").mkdir()
    path = tmp_path / "elsewhere" / "computed.ipynb"
    nbformat.write(nb, path)
    before = _version(saved["project"])
    done = _report(str(path), "--execute", "--embedder", "hash")
    assert done.returncode == 0, done.stderr
    assert f"throwaway copy of {saved['folder'] / 'flaskproj'}" in done.stderr
    assert _version(saved["project"]) == before


def test_shell_lines_running_ragtt_are_refused_naming_the_cell(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell(f"!ragtt ingest {EXTRA} --project p")]
    path = tmp_path / "shell.ipynb"
    nbformat.write(nb, path)
    done = _report(str(path), "--execute")
    assert done.returncode == 2 and not (tmp_path / "p").exists()
    assert "cell 2 (!ragtt ingest" in done.stderr and "--allow-writes" in done.stderr


def test_a_refusal_names_each_cell(saved: dict[str, Any], tmp_path: Path) -> None:
    nb = nbformat.read(saved["path"], as_version=4)
    nb.metadata.pop("widgets")  # "Save Widget State Automatically" off
    path = tmp_path / "stateless.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(ReportError) as info:
        export_report(path, tmp_path / "r.html")
    message = str(info.value)
    n = len(nb.cells)
    assert f"cell {n - 2} (%ragtt timeline last)" in message
    assert f"cell {n - 1} (%ragtt diff {{then.query_id}} last)" in message
    assert f"cell {n} (%ragtt drift" in message
    assert "ragtt embed" not in message  # finished progress bars are not what is missing


def test_closed_progress_text() -> None:
    assert closed_progress_text("ragtt embed:   0%|          | 0/40 [00:00<?, ?chunk/s]") == (
        "ragtt embed: 100% 40/40 chunks (finished)"
    )
    assert closed_progress_text("ragtt parse:   0%|          | 0/3 [00:00<?, ?doc/s]") == (
        "ragtt parse: 100% 3/3 docs (finished)"
    )
    assert closed_progress_text("Timeline(versions 1-7)") is None
    assert closed_progress_text(json.dumps({"a": 1})) is None


@pytest.fixture(scope="module")
def report_html(saved: dict[str, Any]) -> Path:
    """The newcomer's notebook exported as saved (no kernel)."""
    return export_report(saved["path"], saved["folder"] / "flask.html")


def _boxes(timeline: Any) -> list[dict[str, Any]]:
    return list(json.loads(timeline.get_attribute("data-label-boxes")))


def _no_overlap(boxes: list[dict[str, Any]]) -> bool:
    from itertools import pairwise

    rows = {b["row"] for b in boxes}
    return all(
        a["x1"] <= b["x0"]
        for row in rows
        for a, b in pairwise(sorted((b for b in boxes if b["row"] == row), key=lambda b: b["x0"]))
    )


def test_browser_report_timeline_keeps_every_snapshot_label(report_html: Path, offline: Any, screens: Path) -> None:
    """Item 6 (the report renders, progress bars as text) and item 8 (every release keeps its
    label, on either axis, however squeezed)."""
    from tests.nb.conftest import screenshot, settle
    from tests.nb.newcomer import RELEASES

    page = offline.open(report_html)
    page.wait_for_selector(".ragtt-timeline canvas", timeout=30_000)
    page.wait_for_selector(".ragtt-chunk-diff .ragtt-chunk", timeout=30_000)
    assert page.get_by_text("ragtt embed: 100%").count() >= 1
    timeline = page.locator(".ragtt-timeline")
    want = {f"flask-{tag}" for tag in RELEASES}
    for width in (1400, 520):  # a narrow window squeezes the releases together
        page.set_viewport_size({"width": width, "height": 900})
        settle(page)  # the resize redraws the timeline (and its label boxes) on the next frame
        for _ in range(2):  # both axes
            boxes = _boxes(timeline)
            assert {b["label"] for b in boxes} == want, (width, timeline.get_attribute("data-axis"), boxes)
            assert _no_overlap(boxes), boxes
            if width == 520 and timeline.get_attribute("data-axis") == "time":
                screenshot(page, timeline, screens / "newcomer_timeline_time_axis.png")
            timeline.locator(".ragtt-tl-axis").click()  # redrawn at once, in the click's handler
    screenshot(page, timeline, screens / "newcomer_timeline.png")
    assert [e for e in offline.errors if "Failed to load resource" not in e] == []


def test_browser_diff_card_shows_its_why_beside_it(report_html: Path, offline: Any, screens: Path) -> None:
    """Item 8: clicking a diff card showed its "why" 1,000 px below, at the foot of the widget."""
    from tests.nb.conftest import screenshot

    page = offline.open(report_html)
    page.wait_for_selector(".ragtt-chunk-diff .ragtt-chunk", timeout=30_000)
    diff = page.locator(".ragtt-chunk-diff")
    card = diff.locator(".ragtt-cd-right .ragtt-chunk").first
    card.click()
    detail = diff.locator(".ragtt-cd-detail")
    assert detail.count() == 1 and "Why:" in detail.inner_text()
    chosen = diff.locator(".ragtt-cd-right .ragtt-chunk.ragtt-selected").first
    gap = detail.bounding_box()["y"] - (chosen.bounding_box()["y"] + chosen.bounding_box()["height"])
    assert 0 <= gap < 20, gap
    screenshot(page, chosen, screens / "newcomer_diff_why.png")


@pytest.mark.parametrize(
    "source",
    [
        "!!ragtt ingest docs --project p",
        "out = !ragtt query hello",
        "!{sys.executable} -m ragtt ingest docs",
        "!python -m ragtt.cli ingest docs",
        "%system ragtt ingest docs",
        "%%bash\ncd /tmp\nragtt ingest docs --project p",
        "%%script sh\nexec ragtt ingest docs",
        "%%sh\necho hi && ragtt snapshot x",
    ],
)
def test_each_shell_form_running_ragtt_is_caught(source: str) -> None:
    from ragtt_nb.report_sandbox import shell_writers

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell(source)]
    assert [found.split(" (")[0] for found in shell_writers(nb)] == ["cell 2"]


@pytest.mark.parametrize(
    "source",
    ["!ls ragtt_data", "!cat ragtt.json", "ragtt = 1\nprint(ragtt)", "%%bash\nls ragtt_data", "%%html\nragtt x"],
)
def test_shell_lines_not_running_ragtt_pass(source: str) -> None:
    from ragtt_nb.report_sandbox import shell_writers

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source)]
    assert shell_writers(nb) == []


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``install()`` run here as the report's kernel runs it; ``Project.open`` put back after."""
    from ragtt_nb import report_sandbox

    copies = tmp_path / "copies"
    copies.mkdir()
    monkeypatch.setenv(report_sandbox.ENV, str(copies))
    opener = ragtt.Project.__dict__["open"]
    try:
        report_sandbox.install()
        yield copies
    finally:
        ragtt.Project.open = opener  # type: ignore[method-assign]


def test_a_postgres_log_project_is_not_copyable_and_the_uris_are_dropped(
    installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The marker of a project whose log is in Postgres says "events": "postgresql", no URI."""
    from ragtt.marker import Marker
    from ragtt_nb.report_sandbox import NotCopyableError

    project = tmp_path / "shared"
    project.mkdir()
    Marker.new("chunks").with_store("events", "postgresql").with_store("tables", ["chunks"]).write(project)
    with pytest.raises(NotCopyableError, match="events: postgresql"):
        ragtt.Project.open(project, embedder=ragtt.HashEmbedder(), progress=False)
    assert "RAGTT_EVENTS_URI" not in os.environ and "RAGTT_INDEX_URI" not in os.environ


def test_install_drops_the_store_uris_from_the_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ragtt_nb import report_sandbox

    monkeypatch.setenv(report_sandbox.ENV, str(tmp_path))
    monkeypatch.setenv("RAGTT_EVENTS_URI", "postgresql://someone@127.0.0.1/history")
    monkeypatch.setenv("RAGTT_INDEX_URI", "s3://bucket/index")
    opener = ragtt.Project.__dict__["open"]
    try:
        report_sandbox.install()
        assert "RAGTT_EVENTS_URI" not in os.environ and "RAGTT_INDEX_URI" not in os.environ
    finally:
        ragtt.Project.open = opener  # type: ignore[method-assign]


def test_a_local_project_is_copied_with_its_log_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The log is copied through SQLite's backup API while the original is open (WAL), so
    the copy holds what was committed, and writing to the copy leaves the original alone."""
    from ragtt_nb import report_sandbox

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("Flask needs Python 3.9 or newer.", encoding="utf-8")
    monkeypatch.setenv(report_sandbox.ENV, str(tmp_path))
    opener = ragtt.Project.__dict__["open"]
    with ragtt.Project.open(tmp_path / "proj", embedder=ragtt.HashEmbedder(), progress=False) as original:
        original.ingest(tmp_path / "docs")
        events = len(original.events.frame())
        try:
            report_sandbox.install()
            with ragtt.Project.open(tmp_path / "proj", embedder=ragtt.HashEmbedder(), progress=False) as copy:
                assert copy.path == tmp_path / "1-proj" and len(copy.events.frame()) == events
                copy.snapshot("only-in-the-copy")
        finally:
            ragtt.Project.open = opener  # type: ignore[method-assign]
        assert len(original.events.frame()) == events
