"""One real JupyterLab on 127.0.0.1: load the extension, run a magic, the widget renders,
a click in the page changes a trait that Python reads back; script payloads in documents
stay text in the live widget too; a "$" in chunk text never turns into maths (MathJax does
run: a Markdown cell's formula is typeset) and text columns of the reprs stay left-aligned."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from .conftest import screenshot
from .jupyter import running
from .test_browser import PAYLOADS

READ_BACK = """async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  let out = "";
  const future = kernel.requestExecute({ code });
  future.onIOPub = (msg) => { if (msg.header.msg_type === "stream") out += msg.content.text; };
  await future.done;
  return out.trim();
}"""


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[str]:
    args = [
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        f"--LabServerApp.workspaces_dir={tmp_path / 'ws'}",
    ]
    with running("jupyter-lab", tmp_path, tmp_path / ".jupyter-state", args) as url:
        yield url


# The notebook's panel once its file is loaded and its kernel has answered (kernel_info): a run
# asked for earlier may meet an empty notebook (nothing runs) or no kernel yet (a dialog).
# Bounded: the promise fails after 120 s, with what it was waiting for.
NOTEBOOK_READY = """async (path) => {
  const app = window.jupyterapp;
  let step = "the notebook's panel";
  const ready = (async () => {
    const panel = app.shell.currentWidget;
    if (!panel || !panel.context || panel.context.path !== path) throw new Error(`current widget is not ${path}`);
    step = "its file"; await panel.context.ready;
    step = "its session"; await panel.sessionContext.ready;
    step = "its kernel"; const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
    if (!kernel) throw new Error("the notebook has no kernel");
    await kernel.info;
    return panel.content.widgets.length;
  })();
  const late = new Promise((_, fail) => setTimeout(() => fail(new Error(`no ${step} in 120 s`)), 120000));
  return Promise.race([ready, late]);
}"""


def run_all_cells(page: Any, url: str) -> None:
    """Open the notebook at ``url`` in JupyterLab and run all its cells, once its file is
    loaded and its kernel ready."""
    page.goto(url)
    path = url.split("/lab/tree/", 1)[1].split("?", 1)[0]
    page.wait_for_function(
        "p => window.jupyterapp && window.jupyterapp.shell.currentWidget"
        " && window.jupyterapp.shell.currentWidget.context"
        " && window.jupyterapp.shell.currentWidget.context.path === p",
        arg=path,
        timeout=90_000,
    )
    assert page.evaluate(NOTEBOOK_READY, path) > 0
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")


DOLLARS = (
    "# Install\n\nAt the prompt type $ pip install flask and then $ flask run. "
    "It costs $0 today and $5 a month later.\n"
)


def test_magic_widget_and_trait_round_trip_in_jupyterlab(lab: str, tmp_path: Path, browser: Any, screens: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "%load_ext ragtt_nb\n"
            f"proj = %ragtt open {tmp_path / 'proj'} --create\n"
            f"proj.ingest_texts({PAYLOADS!r})\n"
            "res = %ragtt query refund window\n"
            f"proj.ingest_texts({ {k: v.replace('30', '45') for k, v in PAYLOADS.items()}!r})\n"
            "tl = %ragtt timeline last\n"
            "tl"
        ),
        nbformat.v4.new_code_cell("from IPython.display import HTML\nHTML('<p>MathJax is on: $x^2 + y^2$</p>')"),
        nbformat.v4.new_code_cell(
            f"proj.ingest_texts({ {'install.md': DOLLARS}!r})\n"
            "shell = proj.query('pip install flask prompt costs')\n"
            "shell"
        ),
        # typeset after the output above: once it is, MathJax has had its turn at that one too
        nbformat.v4.new_code_cell("HTML('<p>MathJax ran after the query: $z^3$</p>')"),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / "live.ipynb")

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        run_all_cells(page, f"{lab}/lab/tree/live.ipynb")
        page.wait_for_selector(".ragtt-timeline .ragtt-chunk", timeout=90_000)
        # it opens at the version the query ran at, before the second ingest
        start, latest = map(int, page.evaluate(READ_BACK, "print(tl.version, tl.versions[-1])").split())
        assert start < latest
        first_ids = page.eval_on_selector_all(".ragtt-timeline .ragtt-chunk", "els => els.map(e => e.dataset.chunkId)")

        page.locator(".ragtt-timeline button[aria-label='next version']").click()
        page.locator(".ragtt-timeline .ragtt-chunk").first.click()
        deadline = time.monotonic() + 60
        while True:  # the trait syncs to the kernel asynchronously
            version, selected = page.evaluate(READ_BACK, "print(tl.version, len(tl.selected))").split()
            if (int(version) == start + 1 and selected == "1") or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert (int(version), selected) == (start + 1, "1")
        chosen = page.evaluate(READ_BACK, "print(tl.selected[0])")
        assert chosen == page.locator(".ragtt-timeline .ragtt-chunk").first.get_attribute("data-chunk-id")
        assert chosen in page.evaluate(READ_BACK, "print(tl.chunks_at())")
        assert first_ids == page.evaluate(READ_BACK, f"print(' '.join(tl.chunks_at({start})))").split()

        # Python moves the cursor back; the page follows
        page.evaluate(READ_BACK, f"tl.version = {start}")
        page.wait_for_function(
            f"document.querySelector('.ragtt-timeline-cursor').getAttribute('aria-valuenow') === '{start}'",
            timeout=60_000,
        )
        # payloads stayed text
        assert page.evaluate("window.__pwned") is None and dialogs == []
        assert page.locator(".ragtt-timeline img, .ragtt-timeline [onerror]").count() == 0
        _no_maths_from_dollars(page)
        screenshot(page, page.locator(".ragtt-timeline"), screens / "jupyterlab_timeline.png")
        page.evaluate("() => window.jupyterapp.serviceManager.sessions.shutdownAll()")
    finally:
        context.close()


def _no_maths_from_dollars(page: Any) -> None:
    """The control formulas in HTML outputs are typeset; the chunk text's dollars are not; text
    cells are left-aligned. JupyterLab typesets each output as it renders, in order, so once the
    control rendered after the query's output is typeset, MathJax has had its turn at the query's
    (no fixed wait, which a loaded machine can outlast)."""
    out = page.locator(".jp-OutputArea-output", has_text="pip install flask")
    out.first.wait_for(timeout=60_000)
    after = page.locator(".jp-OutputArea-output", has_text="MathJax ran after the query")
    after.locator("mjx-container").first.wait_for(timeout=60_000)
    assert page.locator(".jp-OutputArea mjx-container").count() == 2  # the controls only
    assert out.first.locator("mjx-container, .MathJax").count() == 0
    assert "$ pip install flask" in out.first.inner_text()
    cells = out.first.locator("td", has_text="pip install")
    assert cells.count() >= 1
    assert cells.first.evaluate("e => getComputedStyle(e).textAlign") in ("left", "start")
