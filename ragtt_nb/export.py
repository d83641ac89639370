"""Offline HTML reports: one file that renders every widget with no kernel and no network.

The ``ragtt`` nbconvert template (``templates/ragtt``) extends ``lab`` and inlines
require.js, the widget html-manager and anywidget's AMD build (the recipe measured in
``shared/design/RECIPES.md``). Notebook HTML is untrusted: ``ReportSanitizer`` strips
scripts, event handlers and ``javascript:`` URLs from HTML and Markdown outputs and drops
JavaScript outputs, unless the notebook is trusted (``trusted=True``, ``--trust``).

Widget state is rendered as saved. An anywidget's state includes its front-end code, so
rendering widgets means running the code their notebook saved: export notebooks whose
widgets you would run in JupyterLab. A notebook whose widget outputs have no saved state
(JupyterLab saves it only with "Save Widget State Automatically" on) is refused with a
``ReportError``: its report would show text fallbacks where the widgets were.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Any

import bleach
from bleach.css_sanitizer import ALLOWED_CSS_PROPERTIES, CSSSanitizer
from nbconvert.preprocessors import Preprocessor

from ragtt.errors import RagttError

__all__ = ["TEMPLATES", "ReportError", "ReportSanitizer", "clean_html", "export_report", "views_without_state"]

_VIEW = "application/vnd.jupyter.widget-view+json"
_STATE = "application/vnd.jupyter.widget-state+json"


class ReportError(RagttError):
    """The notebook cannot become a faithful report as it is (and what to do about it)."""


TEMPLATES = Path(__file__).resolve().parent / "templates"
"""The folder holding the ``ragtt`` template (passed to nbconvert as an extra base dir)."""

_TAGS = frozenset(
    {
        "a",
        "abbr",
        "b",
        "blockquote",
        "br",
        "caption",
        "cite",
        "code",
        "col",
        "colgroup",
        "dd",
        "del",
        "details",
        "div",
        "dl",
        "dt",
        "em",
        "figcaption",
        "figure",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "i",
        "img",
        "ins",
        "kbd",
        "li",
        "mark",
        "ol",
        "p",
        "pre",
        "q",
        "s",
        "samp",
        "small",
        "span",
        "strong",
        "style",
        "sub",
        "summary",
        "sup",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "u",
        "ul",
        "var",
    }
)
_ATTRIBUTES = {
    "*": ["class", "id", "title", "style", "align", "lang", "dir"],
    "a": ["href", "name", "target", "rel"],
    "img": ["src", "alt", "width", "height"],
    "td": ["colspan", "rowspan"],
    "th": ["colspan", "rowspan", "scope"],
    "col": ["span"],
    "ol": ["start", "type"],
    "table": ["border"],
    "details": ["open"],
}
_PROTOCOLS = frozenset({"http", "https", "mailto", "data"})
_SCRIPT_MIMETYPES = ("application/javascript", "text/javascript", "application/x-javascript")
_CSS = CSSSanitizer(
    allowed_css_properties=ALLOWED_CSS_PROPERTIES | {"display", "max-width", "max-height", "overflow", "white-space"}
)


def clean_html(html: str) -> str:
    """Notebook HTML without scripts, event handlers, ``javascript:`` URLs or unknown tags.

    Tables, headings, lists, images and ``<style>`` survive, so DataFrames and ragtt's own
    reprs keep their look.
    """
    return str(
        bleach.clean(
            str(html),
            tags=_TAGS,
            attributes=_ATTRIBUTES,
            protocols=_PROTOCOLS,
            strip=True,
            strip_comments=True,
            css_sanitizer=_CSS,
        )
    )


class ReportSanitizer(Preprocessor):  # type: ignore[misc]
    """Makes notebook HTML safe to open: the ragtt template calls ``resources.ragtt_clean``.

    Disable it (``--ReportSanitizer.enabled=False``, or ``ragtt report --trust``) only for
    notebooks whose JavaScript outputs you mean to run.
    """

    def preprocess(self, nb: Any, resources: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        resources["ragtt_clean"] = clean_html
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                data = output.get("data")
                if data:
                    for mimetype in _SCRIPT_MIMETYPES:
                        data.pop(mimetype, None)
        return nb, resources


def export_report(
    notebook: str | Path,
    output: str | Path | None = None,
    *,
    execute: bool = False,
    allow_errors: bool = False,
    trusted: bool = False,
    timeout: int = 600,
    kernel_name: str | None = None,
) -> Path:
    """Write ``notebook`` as one offline HTML file (default: beside it, ``.html``); returns its path.

    ``execute=True`` runs it first (in its own folder, widget state stored) and does not
    change the ``.ipynb``. A cell that fails stops the export with the kernel's error, unless
    ``allow_errors=True``: then the error is shown in the report under its cell and the
    export goes on (a warning on the "ragtt" logger counts the failed cells). Without
    ``execute``, widget outputs need their saved state (else ``ReportError``).
    """
    import nbformat
    from nbconvert import HTMLExporter

    source = Path(notebook)
    if source.suffix != ".ipynb":
        raise ValueError(f"expected a .ipynb notebook; got {source.name!r}")
    nb = nbformat.read(source, as_version=4)
    if execute:
        _execute(nb, source, timeout, kernel_name or _kernel_name(nb), allow_errors)
    else:
        missing = views_without_state(nb)
        if missing:
            raise ReportError(
                f"{source.name} has {len(missing)} widget output(s) without saved widget state, so its report would "
                "show text in their place: run it while exporting (ragtt report --execute, export_report(..., "
                "execute=True)) or save the widget state (JupyterLab: Settings > Save Widget State Automatically, "
                "then save the notebook)"
            )
    from traitlets.config import Config

    config = Config({"ReportSanitizer": {"enabled": not trusted}})
    exporter = HTMLExporter(config=config, template_name="ragtt", extra_template_basedirs=[str(TEMPLATES)])
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": source.stem}})
    out = Path(output) if output is not None else source.with_suffix(".html")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(body, encoding="utf-8")
    return out


def views_without_state(nb: Any) -> list[str]:
    """Model ids of the notebook's widget outputs that its saved widget state lacks."""
    state = nb.metadata.get("widgets", {}).get(_STATE, {}).get("state", {})
    views = [
        output["data"][_VIEW].get("model_id")
        for cell in nb.cells
        for output in cell.get("outputs", [])
        if _VIEW in output.get("data", {})
    ]
    return [v for v in views if v not in state]


def _execute(nb: Any, source: Path, timeout: int, kernel_name: str, allow_errors: bool) -> None:
    from nbclient import NotebookClient
    from traitlets.config import Config

    with tempfile.TemporaryDirectory(prefix="ragtt-kernel-") as sockets:
        # IPC sockets in a private folder: no open TCP ports, and no ipykernel warning about
        # plain-text TCP printed into every report command's output. (The client still owns
        # and shuts down its kernel manager.)
        ipc = Config({"KernelManager": {"transport": "ipc", "ip": str(Path(sockets) / "kernel")}})
        client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name=kernel_name,
            allow_errors=allow_errors,
            resources={"metadata": {"path": str(source.parent.resolve())}},
            store_widget_state=True,
            config=ipc,
        )
        # The kernel inherits it: widgets embed everything a report needs (every PDF page).
        previous = os.environ.get("RAGTT_REPORT")
        os.environ["RAGTT_REPORT"] = "1"
        # The kernel process's own stderr (not its cells', which arrive as outputs) goes to a
        # file: ipykernel can log a traceback while it shuts down, into every report's output.
        # It is shown only when the run fails, where it may say why.
        kernel_log = Path(sockets) / "kernel-stderr.log"
        try:
            with kernel_log.open("wb") as log:
                client.execute(stderr=log)
        except Exception:
            tail = kernel_log.read_text(encoding="utf-8", errors="replace")[-4000:].strip()
            if tail:
                logging.getLogger("ragtt").warning("the kernel's own output:\n%s", tail)
            raise
        finally:
            if previous is None:
                os.environ.pop("RAGTT_REPORT", None)
            else:
                os.environ["RAGTT_REPORT"] = previous
    failed = sum(any(o.get("output_type") == "error" for o in cell.get("outputs", [])) for cell in nb.cells)
    if failed:
        logging.getLogger("ragtt").warning(
            "%d cell(s) of %s failed; the report shows their errors", failed, source.name
        )


def _kernel_name(nb: Any) -> str:
    return str(nb.metadata.get("kernelspec", {}).get("name") or os.environ.get("RAGTT_KERNEL", "python3"))
