"""A widget as one self-contained HTML page: it works from ``file://``, with no server, no kernel
and no network.

The page is what an exported notebook report of that one widget is when the report renders
its widgets without the Jupyter widget manager: the widget's model state in a
``widget-state+json`` block, in the widget manager's format (each binary buffer base64, at its
path: a third larger than the buffer, as in a saved notebook; a bound on the state, such as
the history matrix's ``embed_limit``, counts the bytes the widget holds, so the page carries
up to a third more), a ``widget-view+json`` block where the view goes, and ragtt's report bootstrap
(``js/src/report.js``) inlined, which renders the view from the state's own code (``_esm``,
``_css``: the widget's bundle) over the model shim the ``/ui`` dashboard and the JupyterLab
tabs use. There is no second bootstrap: this module writes the markup that one reads. What a
view asks of a kernel gets no answer; the views say what the state lacks.

Untrusted text (questions, chunk texts, labels) is only in the JSON of the state block, with
every ``<``, ``>`` and ``&`` written as a JSON escape, so no ``</script>`` or ``<!--`` in it
can end the block or open a comment there; the views put it in the DOM as text. The inlined
bootstrap is ragtt's own code, checked all the same: one holding ``<script``, ``</script``
or ``<!--`` (which end its block, or change how the HTML parser reads the rest of it) is
refused. The page's
Content-Security-Policy lets the bootstrap run (by its hash), and the widget's module it
imports (a ``blob:`` URL), and nothing else: no other script, and no request out.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from typing import Any

from ragtt._html import esc
from ragtt.views.wire import static_file

__all__ = ["WIDGET_STATE_MIME", "WIDGET_VIEW_MIME", "report_bootstrap", "widget_page"]

WIDGET_STATE_MIME = "application/vnd.jupyter.widget-state+json"
"""A notebook's (and a page's) saved widget state: its metadata key, and the script block's type."""
WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"
"""An output (and a page's script block) that shows a widget: ``{"model_id": ...}``."""
# what must not be in a script inlined in the page: each ends the block or changes how the
# HTML parser reads the rest of it (a "<!--" then "<script" hides the block's own end)
_NOT_INLINE = ("<script", "</script", "<!--")
_CSP = (
    "default-src 'none'; script-src '{hash}' blob:; style-src 'unsafe-inline'; img-src data: blob:; "
    "base-uri 'none'; form-action 'none'"
)
_STYLE = (
    "body{margin:16px 24px;font:13px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1f2328}"
    ".ragtt-page-head{margin:0 0 12px}.ragtt-page-head h1{font-size:16px;margin:0 0 2px}"
    ".ragtt-page-head p{margin:0;opacity:.75}"
    ".ragtt-page-foot{margin-top:16px}"
)


def widget_page(widget: str, traits: dict[str, Any], *, title: str, head: str = "", foot: str = "") -> str:
    """The page showing ``widget`` (a bundle's name: ``history_matrix``, ``timeline`` ...) with
    ``traits`` (its model state, buffers as ``ragtt.views.wire.array`` makes them; ``_esm`` and
    ``_css`` are added). ``title`` is text; ``head`` and ``foot`` are HTML shown above and below
    the widget, which the caller built from escaped parts."""
    state, buffers = _saved({**traits, "_esm": _text(f"{widget}.js"), "_css": _text(f"{widget}.css")})
    model_id = f"ragtt-{widget}"
    saved = {"version_major": 2, "version_minor": 0, "state": {model_id: {"state": state, "buffers": buffers}}}
    bootstrap = report_bootstrap()
    digest = base64.b64encode(hashlib.sha256(bootstrap.encode("utf-8")).digest()).decode("ascii")
    csp = _CSP.format(hash=f"sha256-{digest}")
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="{csp}">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{esc(title)}</title>'
        f'<link rel="icon" href="data:,"><style>{_STYLE}</style></head>\n'
        f'<body>{head}<script type="{WIDGET_VIEW_MIME}">{_script_json({"model_id": model_id})}</script>'
        "<noscript>This page shows a ragtt widget, which needs JavaScript.</noscript>\n"
        f"{foot}\n"
        f'<script type="{WIDGET_STATE_MIME}">{_script_json(saved)}</script>\n'
        f'<script type="module">{bootstrap}</script>\n'
        "</body></html>\n"
    )


def report_bootstrap() -> str:
    """ragtt's report bootstrap (``js/src/report.js``, built), to inline in a ``<script>`` block
    of a page or an exported report; ValueError when it holds what would break that block."""
    bootstrap = _text("report.js")
    found = [m for m in _NOT_INLINE if m in bootstrap.lower()]
    if found:
        raise ValueError(f"report.js holds {' and '.join(map(repr, found))}, which break its inline block: rebuild it")
    return bootstrap


def _text(name: str) -> str:
    return static_file(name).read_text(encoding="utf-8")


def _script_json(value: Any) -> str:
    """JSON for a ``<script type="...json">`` block: ``<``, ``>`` and ``&`` as ``\\u`` escapes
    (JSON.parse reads them back), so no text inside can close the block or start a comment."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _saved(traits: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The traits as the widget manager saves them: each buffer taken out (None in its place)
    and listed with its path and base64 data; non-finite floats as None (JSON has no NaN)."""
    buffers: list[dict[str, Any]] = []

    def walk(value: Any, path: list[str | int]) -> Any:
        if isinstance(value, memoryview | bytes | bytearray):
            data = base64.b64encode(bytes(value)).decode("ascii")
            buffers.append({"path": path, "data": data, "encoding": "base64"})
            return None
        if isinstance(value, dict):
            return {str(k): walk(v, [*path, str(k)]) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [walk(v, [*path, i]) for i, v in enumerate(value)]
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return value

    return walk(traits, []), buffers
