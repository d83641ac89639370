"""Which widget code a report carries, decided at export from the saved widget state: ragtt's
bootstrap when every view shown is a ragtt widget's (its layout model does not count, nor a
model saved but never shown), the widget manager as soon as anything else is shown. And the
bootstrap puts each binary buffer back where the widget manager would: a DriftScatter's
typed arrays and a PdfOverlay's page images render offline."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ipywidgets
import nbformat
import pytest
from ipywidgets.embed import dependency_state, embed_data
from playwright.sync_api import expect

import ragtt
from ragtt.views import page
from ragtt.views.wire import static_file
from ragtt_nb import Timeline
from ragtt_nb.report_widgets import needs_manager
from tests.conftest import corpus

from .conftest import REPO, Offline, export, write_notebook

VIEW = "application/vnd.jupyter.widget-view+json"
STATE = "application/vnd.jupyter.widget-state+json"
EMBED = (REPO / "ragtt_nb" / "templates" / "ragtt" / "static" / "embed-amd.js").read_text(encoding="utf-8")
BOOTSTRAP = static_file("report.js").read_text(encoding="utf-8")
PDF = "docling__normal_4pages.pdf"


@pytest.fixture
def timeline(proj: ragtt.Project, sample: dict[str, Any]) -> Iterator[Timeline]:
    widget = Timeline(proj, sample["then"])
    yield widget
    widget.close()


def notebook(shown: list[Any], saved: list[Any] | None = None) -> Any:
    """A notebook whose outputs show ``shown`` and whose saved state holds them and ``saved``
    (and every model they refer to), as JupyterLab saves it."""
    data = embed_data(
        views=shown, state=dependency_state([*shown, *(saved or [])], drop_defaults=False), drop_defaults=False
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("w", outputs=[nbformat.v4.new_output("display_data", data={VIEW: spec})])
        for spec in data["view_specs"]
    ]
    nb.metadata["widgets"] = {STATE: data["manager_state"]}
    return nb


def _report(nb: Any, folder: Path) -> str:
    nbformat.write(nb, folder / "n.ipynb")
    return export(folder / "n.ipynb", folder / "n.html").read_text(encoding="utf-8")


def test_ragtt_views_alone_get_the_bootstrap(timeline: Timeline, tmp_path: Path) -> None:
    slider = ipywidgets.IntSlider()  # saved, never shown
    nb = notebook([timeline], saved=[slider])
    state = nb.metadata["widgets"][STATE]["state"]
    layout = state[timeline.model_id]["state"]["layout"].removeprefix("IPY_MODEL_")
    assert state[layout]["model_name"] == "LayoutModel" and slider.model_id in state
    assert not needs_manager(nb)
    # an executed notebook's view of a model that is gone (a finished progress bar) renders
    # nowhere either way (exporting without --execute refuses it: views_without_state)
    gone = nbformat.v4.new_output("display_data", data={VIEW: {"model_id": "gone"}})
    nb.cells.append(nbformat.v4.new_code_cell("bar", outputs=[gone]))
    assert not needs_manager(nb)
    nb.cells.pop()
    html = _report(nb, tmp_path)
    assert BOOTSTRAP in html and EMBED not in html and "require.config" not in html
    slider.close()


@pytest.mark.parametrize("case", ["slider shown", "timeline in a box", "other code", "refers to a slider"])
def test_anything_else_shown_brings_the_manager(case: str, timeline: Timeline, tmp_path: Path) -> None:
    slider = ipywidgets.IntSlider()
    box = ipywidgets.VBox([timeline])
    shown = {"slider shown": [timeline, slider], "timeline in a box": [box]}.get(case, [timeline])
    nb = notebook(shown)
    model = nb.metadata["widgets"][STATE]["state"][timeline.model_id]
    if case == "other code":  # another ragtt version's bundle, or anything else saved as a ragtt one
        model["state"]["_esm"] += "\n// changed"
    elif case == "refers to a slider":
        nb = notebook(shown, saved=[slider])
        nb.metadata["widgets"][STATE]["state"][timeline.model_id]["state"]["layout"] = f"IPY_MODEL_{slider.model_id}"
    assert needs_manager(nb)
    html = _report(nb, tmp_path)
    assert EMBED in html and BOOTSTRAP not in html
    box.close()
    slider.close()


@pytest.fixture(scope="module")
def pdf_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report of a DriftScatter and a PdfOverlay (its pages PNG buffers in the state)."""
    folder = tmp_path_factory.mktemp("pdf-report")
    notebook = write_notebook(
        folder / "pdf.ipynb",
        [
            "import ragtt\nfrom ragtt_nb import DriftScatter, PdfOverlay\n"
            f"proj = ragtt.Project.open({str(folder / 'proj')!r}, embedder=ragtt.HashEmbedder(), progress=False)\n"
            f"proj.ingest({str(corpus('pdfs', PDF))!r})\n"
            "proj.ingest_texts({'notes.md': '# Notes\\n\\nThe evaluation table moved to the appendix.'})\n"
            "res = proj.query('table of results and the evaluation of the model', top_k=8, generate=False)",
            "DriftScatter(proj, 1, proj.version)",
            f"PdfOverlay(proj, {PDF!r}, query_id=res.query_id)",
        ],
    )
    return export(notebook, folder / "pdf.html", execute=True, timeout=300, allow_writes=True)


def test_buffers_come_back_where_they_were_in_a_report_of_ragtt_widgets(pdf_report: Path, offline: Offline) -> None:
    html = pdf_report.read_text(encoding="utf-8")
    assert BOOTSTRAP in html and EMBED not in html
    page = offline.open(pdf_report)
    expect(page.locator(".ragtt-report-view[data-state=ready]")).to_have_count(2, timeout=30_000)
    scatter = page.locator(".ragtt-drift-scatter[data-painted]")
    expect(scatter).to_have_count(1)
    assert json.loads(scatter.get_attribute("data-view") or "{}")["k"] > 0  # the points' bounds, from typed buffers
    overlay = page.locator(".ragtt-pdf-overlay[data-page]")
    expect(overlay).to_have_count(1, timeout=30_000)
    # the page image decoded from its PNG buffer (state path _pages/<n>/png)
    size = overlay.locator("img.ragtt-po-image").evaluate("i => [i.naturalWidth, i.naturalHeight]")
    assert size[0] > 100 and size[1] > 100
    regions = overlay.locator(".ragtt-region")  # the page's chunks, from the state's typed arrays
    assert regions.count() > 0
    regions.last.click()  # the smallest, on top
    expect(overlay.locator(".ragtt-region.ragtt-selected")).to_have_count(1)
    assert offline.aborted == [] and offline.errors == []


@pytest.mark.parametrize("bad", ["<script>x()</script>", "s = '</SCRIPT>'", "/* <!-- */", "s = '<Script'"])
def test_a_bootstrap_that_would_break_its_inline_block_is_refused(
    bad: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert page.report_bootstrap() == BOOTSTRAP  # the built one inlines as it is
    built = tmp_path / "report.js"
    built.write_text(f"// a bootstrap\n{bad}\n", encoding="utf-8")
    monkeypatch.setattr(page, "static_file", lambda name: built if name == "report.js" else static_file(name))
    with pytest.raises(ValueError, match=r"report.js holds '.*', which break its inline block: rebuild it"):
        page.widget_page("timeline", {}, title="t")  # a page
    with pytest.raises(ValueError, match="rebuild it"):
        page.report_bootstrap()  # and a notebook report, through ReportWidgets
