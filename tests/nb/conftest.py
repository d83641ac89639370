"""Fixtures for the notebook layer: a sample project, a real IPython shell, an exported
quickstart report and headless Chromium with every non-file request aborted."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ragtt
from ragtt.demo import sample_releases
from tests.conftest import SCREENS_ENV

REPO = Path(__file__).resolve().parents[2]
QUESTION = "How many days do I have to ask for a refund?"


def build_sample(path: Path) -> dict[str, Any]:
    """The bundled sample's three releases, one snapshot each, the question asked after the
    first and after the last release."""
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        releases = sample_releases()
        proj.ingest(releases[0])
        proj.snapshot("release-1")
        then = proj.query(QUESTION)
        for number, release in enumerate(releases[1:], start=2):
            proj.ingest(release)
            proj.snapshot(f"release-{number}")
        now = proj.query(QUESTION)
        return {"path": path, "then": then.query_id, "now": now.query_id, "latest": proj.version}


@pytest.fixture(scope="session")
def sample(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return build_sample(tmp_path_factory.mktemp("sample") / "proj")


@pytest.fixture
def proj(sample: dict[str, Any]) -> Iterator[ragtt.Project]:
    with ragtt.Project.open(sample["path"], embedder=ragtt.HashEmbedder(), progress=False) as p:
        yield p


@pytest.fixture
def shell(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A real InteractiveShell with ``%load_ext ragtt_nb`` and the hash embedder."""
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setenv("RAGTT_EMBEDDER", "hash")
    sh = InteractiveShell.instance()
    sh.extension_manager.load_extension("ragtt_nb")
    from ragtt_nb.magics import RagttMagics

    magics = RagttMagics(shell=sh)  # a fresh instance per test: no project left open by another
    sh.register_magics(magics)
    yield sh
    if magics._proj is not None:
        magics._proj.close()


def write_notebook(path: Path, sources: list[str]) -> Path:
    """A Python 3 notebook of code cells (``sources``), written to ``path``."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


def export(notebook: Path, out: Path, **kwargs: Any) -> Path:
    from ragtt_nb.export import export_report

    return export_report(notebook, out, **kwargs)


@pytest.fixture(scope="session")
def quickstart_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """notebooks/quickstart.ipynb executed with the hash embedder and exported (about 15 s)."""
    os.environ["RAGTT_EMBEDDER"] = "hash"  # the kernel inherits it
    try:
        return export(
            REPO / "notebooks" / "quickstart.ipynb",
            tmp_path_factory.mktemp("report") / "quickstart.html",
            execute=True,
            timeout=300,
        )
    finally:
        os.environ.pop("RAGTT_EMBEDDER", None)


SCREEN = {"width": 1400, "height": 900}


@pytest.fixture(scope="session")
def screens() -> Path:
    """The folder the browser tests save their 1400x900 widget screenshots in: $RAGTT_SCREENSHOTS,
    which tests/conftest.py sets once per run (every parallel worker saves into the same
    folder) and names at the end of the run."""
    folder = Path(os.environ[SCREENS_ENV])
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# Three animation frames: a resize's ResizeObserver callbacks run in the first (after its
# requestAnimationFrame callbacks), the redraws they make queue the chunk cards' scroll to their
# best sentence (js/src/chunk_card.js) for the second, and the third comes after both.
SETTLE = """n => new Promise((done, fail) => {
  const timer = setTimeout(() => fail(new Error(`no ${n} animation frames in 30 s`)), 30000);
  const step = (k) => (k ? requestAnimationFrame(() => step(k - 1)) : (clearTimeout(timer), done(true)));
  step(n);
})"""


def settle(page: Any, frames: int = 3) -> None:
    """Wait (bounded) until the page has drawn ``frames`` more frames: what the widgets do a frame
    later (a resize's redraw, a pan's or zoom's redraw, a card scrolling to its best sentence) has
    run, however slow the machine. Never a fixed sleep: a loaded machine draws frames late."""
    page.evaluate(SETTLE, frames)


def screenshot(page: Any, widget: Any, path: Path) -> Path:
    """The 1400x900 viewport with `widget`'s top at the top of the window."""
    page.set_viewport_size(SCREEN)
    widget.evaluate("e => e.scrollIntoView({block: 'start'})")
    settle(page)  # a resize redraws the canvases; cards settle their scroll a frame later
    page.screenshot(path=str(path))
    assert path.stat().st_size > 10_000, f"{path} looks blank"
    return path


# One word (no break opportunity) wider than half a chunk diff (a lab tab, a notebook cell, a /ui
# pane): a chunk holding it must not push the diff's "Now" column out
LONG_URL = "https://flask.palletsprojects.com/en/latest/api/#flask.Flask." + "register_blueprint_" * 8


def assert_columns_fit(diff: Any) -> None:
    """The chunk diff's two columns share its width, "Now" wholly inside it, nothing wider than
    its column (a 1fr column grew to its longest word and pushed "Now" out of the tab)."""
    fit = diff.evaluate(
        """(d) => {
          const box = d.getBoundingClientRect(), cols = d.querySelector('.ragtt-cd-cols');
          const [then, now] = [...cols.children].map((c) => c.getBoundingClientRect());
          const wide = [...cols.querySelectorAll('*')].filter((e) => e.scrollWidth > e.clientWidth + 1
            && getComputedStyle(e).overflowX !== 'visible').map((e) => e.className);
          return {right: box.right, nowRight: now.right, ratio: now.width / then.width,
                  over: cols.scrollWidth - cols.clientWidth, wide};
        }"""
    )
    assert fit["nowRight"] <= fit["right"] and fit["over"] <= 0 and not fit["wide"], fit
    assert 0.95 < fit["ratio"] < 1.05, fit


class Offline:
    """A page whose every request other than file:, data: and blob: (or the ``allowed``
    prefixes, e.g. a server's own origin) is aborted and recorded, with console errors, page
    errors and dialogs (alert/confirm) recorded too."""

    def __init__(self, browser: Any, allowed: tuple[str, ...] = ("file:", "data:", "blob:")) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 1000})
        self.page = self.context.new_page()
        self.aborted: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.route(lambda url: not url.startswith(allowed), self._abort)
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", self._dialog)

    def _abort(self, route: Any) -> None:
        self.aborted.append(route.request.url)
        route.abort()

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def open(self, path: Path) -> Any:
        self.page.goto(path.resolve().as_uri())
        return self.page


@pytest.fixture
def offline(browser: Any) -> Iterator[Offline]:
    o = Offline(browser)
    yield o
    o.context.close()
