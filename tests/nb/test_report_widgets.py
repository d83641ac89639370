"""Which widget code a report carries, decided at export from the saved widget state: ragtt's
bootstrap when every view shown is a ragtt widget's (its layout model does not count, nor a
model saved but never shown), the widget manager as soon as anything else is shown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ipywidgets
import nbformat
import pytest
from ipywidgets.embed import dependency_state, embed_data

import ragtt
from ragtt.views.wire import static_file
from ragtt_nb import Timeline
from ragtt_nb.report_widgets import needs_manager

from .conftest import REPO, export

VIEW = "application/vnd.jupyter.widget-view+json"
STATE = "application/vnd.jupyter.widget-state+json"
EMBED = (REPO / "ragtt_nb" / "templates" / "ragtt" / "static" / "embed-amd.js").read_text(encoding="utf-8")
BOOTSTRAP = static_file("report.js").read_text(encoding="utf-8")


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
