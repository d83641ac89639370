"""Offline HTML reports: one file that renders every widget with no kernel and no network.

The ``ragtt`` nbconvert template (``templates/ragtt``) extends ``lab`` and inlines the
scripts that render the widgets: ragtt's own bootstrap when every widget shown is ragtt's,
else require.js, the widget html-manager's ``embed-amd.js`` and anywidget's AMD build, which
``templates/ragtt/static/THIRD_PARTY_LICENSES.md`` lists with the change it needs (plain
``nbconvert --to html`` loads those three from CDNs, and offline no widget renders);
``ragtt_nb.report_widgets`` decides. Notebook HTML is
untrusted: ``ReportSanitizer`` strips scripts, event handlers and ``javascript:`` URLs from
HTML and Markdown outputs and drops JavaScript outputs, unless the notebook is trusted
(``trusted=True``, ``--trust``).

Widget state is rendered as saved. An anywidget's state includes its front-end code, so
rendering widgets means running the code their notebook saved: export notebooks whose
widgets you would run in JupyterLab. A notebook whose widget outputs have no saved state
(JupyterLab saves it only with "Save Widget State Automatically" on) is refused with a
``ReportError`` naming each such cell: its report would show text fallbacks where the
widgets were. Progress bars are the exception: a finished bar's model is closed, so no
front end can save it, and the report shows its final text (``closed_progress_text``).

``execute=True`` never writes to a project unless ``allow_writes=True``: in the kernel that
runs the notebook, each project it opens is a throwaway copy (``ragtt_nb.report_sandbox``);
one that cannot be copied (remote stores) fails its cell, saying so, and a notebook that
runs the ragtt CLI in a shell is refused, naming the cells.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import bleach
from bleach.css_sanitizer import ALLOWED_CSS_PROPERTIES, CSSSanitizer
from nbconvert.preprocessors import Preprocessor

from ragtt.errors import RagttError
from ragtt.views.page import WIDGET_STATE_MIME, WIDGET_VIEW_MIME

if TYPE_CHECKING:
    from ragtt_nb.report_sandbox import Sandbox

__all__ = [
    "TEMPLATES",
    "ReportError",
    "ReportSanitizer",
    "clean_html",
    "closed_progress_text",
    "export_report",
    "views_without_state",
]


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
    allow_writes: bool = False,
) -> Path:
    """Write ``notebook`` as one offline HTML file (default: beside it, ``.html``); returns its path.

    ``execute=True`` runs it first (in its own folder, widget state stored) and does not
    change the ``.ipynb``. A cell that fails stops the export with the kernel's error, unless
    ``allow_errors=True``: then the error is shown in the report under its cell and the
    export goes on (a warning on the "ragtt" logger counts the failed cells). Executing runs
    against throwaway copies of the projects the notebook opens (a warning on the "ragtt"
    logger names them) unless ``allow_writes=True``; see ``ragtt_nb.report_sandbox``.
    Without ``execute``, widget outputs need their saved state (else ``ReportError`` naming
    the cells), except finished progress bars, shown as their final text.
    """
    import nbformat
    from nbconvert import HTMLExporter

    source = Path(notebook)
    if source.suffix != ".ipynb":
        raise ValueError(f"expected a .ipynb notebook; got {source.name!r}")
    nb = nbformat.read(source, as_version=4)
    if execute:
        kernel = kernel_name or _kernel_name(nb)
        if allow_writes:
            _execute(nb, source, timeout, kernel, allow_errors)
        else:
            from ragtt_nb.report_sandbox import sandbox

            with sandbox(nb, source) as box:
                _execute(nb, source, timeout, kernel, allow_errors, box)
                copied = box.copied()
            if copied:
                logging.getLogger("ragtt").warning(
                    "ran %s against a throwaway copy of %s: the project%s unchanged (--allow-writes, "
                    "allow_writes=True: run against the project itself)",
                    source.name,
                    ", ".join(copied),
                    "s are" if len(copied) > 1 else " is",
                )
    else:
        _show_closed_progress(nb)
        missing = views_without_state(nb)
        if missing:
            cells = _cells_of(nb, set(missing))
            raise ReportError(
                f"{source.name} has {len(missing)} widget output(s) without saved widget state, so its report would "
                f"show text in their place ({'; '.join(cells)}): run it while exporting (ragtt report --execute, "
                "export_report(..., execute=True)) or save the widget state (JupyterLab: Settings > Save Widget "
                "State Automatically, then save the notebook)"
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
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE_MIME, {}).get("state", {})
    views = [
        output["data"][WIDGET_VIEW_MIME].get("model_id")
        for cell in nb.cells
        for output in cell.get("outputs", [])
        if WIDGET_VIEW_MIME in output.get("data", {})
    ]
    return [v for v in views if v not in state]


# tqdm's text for a bar: "ragtt embed:  40%|####      | 16/40 [00:01<00:02, 9.1chunk/s]"
_METER = re.compile(r"^(?P<desc>[^\n|]*?):?\s*\d+%\|[^|\n]*\|\s*(?P<n>\d+)/(?P<total>\d+)(?P<rest>.*)$", re.DOTALL)


def closed_progress_text(text: str) -> str | None:
    """The final text of a finished progress bar from the text its widget output saved (tqdm's
    meter as first displayed), or None when ``text`` is not a progress bar's.

    tqdm closes a notebook bar's model only when it finished (a bar that stopped short turns
    red and stays open), so its final text is the total reached.
    """
    m = _METER.match(text.strip())
    if m is None:
        return None
    unit = re.search(r"[\d?.]+(?P<unit>[A-Za-z]+)/s\]", m["rest"])
    what = f" {unit['unit']}s" if unit and unit["unit"] != "it" else ""
    desc = m["desc"].strip()
    return f"{desc + ': ' if desc else ''}100% {m['total']}/{m['total']}{what} (finished)"


def _show_closed_progress(nb: Any) -> None:
    """Widget outputs of finished progress bars, whose closed models no front end saves, become
    their final text (see ``closed_progress_text``)."""
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE_MIME, {}).get("state", {})
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW_MIME not in data or data[WIDGET_VIEW_MIME].get("model_id") in state:
                continue
            final = closed_progress_text(str(data.get("text/plain", "")))
            if final is not None:
                output["data"] = {"text/plain": final}


def _cells_of(nb: Any, model_ids: set[str]) -> list[str]:
    """``cell 4 (%ragtt timeline last)`` (numbered from 1 among all cells) for each cell with an
    output of one of ``model_ids``."""
    found = []
    for number, cell in enumerate(nb.cells, start=1):
        if any(
            o.get("data", {}).get(WIDGET_VIEW_MIME, {}).get("model_id") in model_ids for o in cell.get("outputs", [])
        ):
            first = next((line.strip() for line in str(cell.source).splitlines() if line.strip()), "")
            first = first if len(first) <= 60 else first[:59] + "…"
            found.append(f"cell {number} ({first})")
    return found


def _execute(
    nb: Any, source: Path, timeout: int, kernel_name: str, allow_errors: bool, box: Sandbox | None = None
) -> None:
    """Run ``nb`` in its folder; with ``box``, in a kernel whose projects are throwaway copies
    (the run stops before its first cell if the kernel did not install the redirect)."""
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
            extra_arguments=box.kernel_arguments if box is not None else [],
            on_cell_execute=(lambda **_: _check_installed(box)) if box is not None else None,
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


def _check_installed(box: Sandbox) -> None:
    if not box.installed:
        raise ReportError(
            "the report's kernel did not start with ragtt's project copies installed (is ragtt_nb importable "
            "in that kernel?), so running the notebook would write to its projects: nothing was run; pass "
            "--allow-writes to run it against them"
        )


def _kernel_name(nb: Any) -> str:
    return str(nb.metadata.get("kernelspec", {}).get("name") or os.environ.get("RAGTT_KERNEL", "python3"))
