"""The "RAG history" sidebar in a real JupyterLab (token auth, ragtt's server extension and
its built lab extension) over a folder holding a project of several Flask releases, driven
by headless Chromium: the panel lists snapshots and queries; a click opens a timeline tab
that scrubs; "Diff with now" opens the chunk diff; "Insert in notebook" writes the %ragtt
line; `%ragtt open` of a second project in a notebook moves the panel to it; script
payloads in queries, documents and source names stay text."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

import ragtt
from tests.conftest import flask_releases

from .conftest import REPO, screenshot
from .jupyter import WITH_RAGTT, running

BUILT = REPO / "ragtt_nb" / "labextension"
TOKEN = secrets.token_hex(16)
EVIL_QUERY = "blueprint <img src=x onerror=\"window.__pwned='query'\"><script>window.__pwned='s'</script>"
EVIL_SOURCE = "<img src=x onerror=\"window.__pwned='source'\">.md"


@pytest.fixture(scope="module")
def lab_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    if not (BUILT / "package.json").is_file():
        pytest.fail(f"the lab extension is not built ({BUILT}): run `npm run build` (./dev test does)")
    home = tmp_path_factory.mktemp("lab")
    root = home / "root"
    with ragtt.Project.open(root / "flask", embedder=ragtt.HashEmbedder(), progress=False, create=True) as proj:
        for number, release in enumerate(flask_releases()[:4]):
            proj.ingest(release)
            proj.snapshot(release.name.split("_", 1)[1])
            if number == 0:  # asked at the first release: "Diff with now" has history to show
                proj.query("how do I register a blueprint")
        proj.ingest_texts({EVIL_SOURCE: "# Evil\n\nA blueprint <script>window.__pwned='doc'</script> here.\n"})
        proj.snapshot("with-payloads")  # labels are letters, digits, '.', '-', '_' only: no markup can be one
        for text in ("application context teardown", EVIL_QUERY):
            proj.query(text)
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
    yield {"home": home, "root": root}


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


def test_history_sidebar_in_jupyterlab(lab: str, lab_root: dict[str, Any], browser: Any, screens: Path) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
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
        screenshot(page, panel, screens / "lab_sidebar.png")

        # a query opens its timeline in a tab; scrubbing moves the version shown
        panel.locator(".ragtt-history-row", has_text="register a blueprint").click()
        timeline = page.locator(".ragtt-tab .ragtt-timeline")
        timeline.locator(".ragtt-chunk").first.wait_for(timeout=60_000)
        cursor = timeline.locator(".ragtt-timeline-cursor")
        before = cursor.get_attribute("aria-valuenow")
        timeline.locator("button[aria-label='previous version']").click()
        page.wait_for_function(
            f"document.querySelector('.ragtt-tab .ragtt-timeline-cursor').getAttribute('aria-valuenow') !== '{before}'"
        )
        screenshot(page, timeline, screens / "lab_timeline_tab.png")

        # "Diff with now": a replay at the latest version, diffed with the query as it ran
        panel.get_by_role("button", name="diff the selected query with a replay now").click()
        diff = page.locator(".ragtt-tab .ragtt-chunk-diff")
        diff.wait_for(timeout=60_000)
        assert "register a blueprint" in diff.locator(".ragtt-cd-query").first.inner_text()
        heads = diff.locator(".ragtt-cd-colhead").all_inner_texts()
        assert "flask-0.10" in heads[0] and "with-payloads" in heads[1]  # then and now
        screenshot(page, diff, screens / "lab_chunk_diff_tab.png")

        # "Insert in notebook" writes the %ragtt line below the active cell
        page.locator(".ragtt-tab:visible .ragtt-insert").click()
        page.wait_for_function(
            "() => window.jupyterapp.shell.currentWidget && window.jupyterapp.shell.currentWidget.sessionContext"
        )
        written = cells(page)
        assert len(written) == 2 and written[1].startswith("%ragtt diff ") and len(written[1].split()) == 4

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
        screenshot(page, panel, screens / "lab_sidebar_second.png")

        # nothing ran from the payloads
        assert page.evaluate("window.__pwned") is None and dialogs == []
        assert page.locator("#ragtt-history img, .ragtt-tab img[onerror]").count() == 0
        page.evaluate("() => window.jupyterapp.serviceManager.sessions.shutdownAll()")
    finally:
        context.close()
