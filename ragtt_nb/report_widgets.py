"""How an offline report renders its widgets: ragtt's own bootstrap, or the widget manager.

The Jupyter widget manager (its embed bundle, RequireJS and anywidget's AMD build) is
several megabytes of JavaScript that the browser parses before any widget shows. ragtt's
widgets need none of it: their views run on a small model (``js/src/model_shim.js``, the one
the ``/ui`` dashboard and the JupyterLab tabs use). So ``ReportWidgets`` (a preprocessor of
the ``ragtt`` template) reads the notebook's saved widget state and, when every widget view
the notebook shows is one of ragtt's, has the template inline ragtt's report bootstrap
(``js/src/report.js``) instead of the manager. A view of anything else (an ipywidgets
slider, a box, another anywidget) brings the manager back for the whole report, which then
renders every view, ragtt's too, as before.

A model is ragtt's when it is an anywidget whose saved code (``_esm``) is one of this
ragtt's widget bundles, byte for byte: a notebook saved by another ragtt version renders
through the manager. The layout and style models a ragtt view refers to need no manager.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from nbconvert.preprocessors import Preprocessor

from ragtt.views.page import WIDGET_STATE_MIME, WIDGET_VIEW_MIME, report_bootstrap
from ragtt.views.wire import static_file

__all__ = ["ReportWidgets", "needs_manager"]

_REF = "IPY_MODEL_"
# js/build.mjs's first line of each bundle
_BANNER = re.compile(r"// Generated from js/src/(?P<name>\w+)\.js by js/build\.mjs")
# what a DOMWidget's layout and style traits hold: no view of their own
_BASE = "@jupyter-widgets/base"
_PLAIN = frozenset({"LayoutModel", "StyleModel"})


@cache
def _bundle(name: str) -> str | None:
    try:
        return static_file(f"{name}.js").read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _is_ragtt(model: dict[str, Any]) -> bool:
    state = model.get("state", {})
    esm = state.get("_esm")
    if model.get("model_module") != "anywidget" or not isinstance(esm, str):
        return False
    banner = _BANNER.match(esm)
    return banner is not None and esm == _bundle(banner["name"])


def _refs(value: Any) -> list[str]:
    """The model ids a trait value refers to (``"IPY_MODEL_<id>"``, in lists and dicts too)."""
    if isinstance(value, str):
        return [value[len(_REF) :]] if value.startswith(_REF) else []
    if isinstance(value, dict):
        return [r for v in value.values() for r in _refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    return []


def needs_manager(nb: Any) -> bool:
    """Whether the notebook's report needs the widget manager: a widget output shows a model
    that is not ragtt's, or a ragtt model refers to one that is neither a layout nor a style.
    (A view whose model the state lacks renders nowhere either way and does not count.)"""
    models = nb.metadata.get("widgets", {}).get(WIDGET_STATE_MIME, {}).get("state", {})
    shown = {
        output["data"][WIDGET_VIEW_MIME].get("model_id")
        for cell in nb.cells
        for output in cell.get("outputs", [])
        if WIDGET_VIEW_MIME in output.get("data", {})
    }
    for model_id in shown & models.keys():
        model = models[model_id]
        if not _is_ragtt(model):
            return True
        for ref in _refs(model.get("state", {})):
            other = models.get(ref, {})
            if other.get("model_module") != _BASE or other.get("model_name") not in _PLAIN:
                return True
    return False


class ReportWidgets(Preprocessor):  # type: ignore[misc]
    """Tells the ``ragtt`` template how to render the widgets: ``resources["ragtt_widgets"]``
    is ``"manager"``, ``"views"`` (ragtt's bootstrap, its code in
    ``resources["ragtt_report_js"]``) or absent (no saved widget state)."""

    def preprocess(self, nb: Any, resources: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        if "widgets" in nb.metadata:
            if needs_manager(nb):
                resources["ragtt_widgets"] = "manager"
            else:
                resources["ragtt_widgets"] = "views"
                resources["ragtt_report_js"] = report_bootstrap()
        return nb, resources
