"""Tiny helpers for the self-contained, escaped HTML reprs of result objects."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

from ragtt.values import shorten

__all__ = ["BOX", "STYLE", "esc", "runs_html", "table"]

# ``table.ragtt-t td`` (two classes, two elements) outranks JupyterLab's
# ``:not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon td`` (two classes, one element), which
# right-aligns every cell of an HTML output.
STYLE = (
    "<style>.ragtt-r{font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px}"
    ".ragtt-r table.ragtt-t{border-collapse:collapse;margin:4px 0}"
    ".ragtt-r table.ragtt-t th,.ragtt-r table.ragtt-t td{border:1px solid var(--jp-border-color2,#ddd);"
    "padding:2px 6px;text-align:left;vertical-align:top;white-space:normal;overflow-wrap:anywhere}"
    ".ragtt-r table.ragtt-t th{background:var(--jp-layout-color2,#f4f4f4)}"
    ".ragtt-r .add{color:#1a7f37}.ragtt-r .rem{color:#cf222e}.ragtt-r .dim{opacity:.7}"
    ".ragtt-r ins{background:#dafbe1;text-decoration:none}.ragtt-r del{background:#ffebe9}"
    ".ragtt-r pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:0;max-width:70em}</style>"
)
# The box every report's HTML sits in: MathJax (JupyterLab, nbconvert) skips elements with
# these classes, so a "$" in chunk text (shell prompts, prices) never turns into maths.
BOX = "<div class='ragtt-r tex2jax_ignore mathjax_ignore'>"


def esc(value: Any, limit: int | None = None) -> str:
    text = "" if value is None else str(value)
    if limit is not None:
        text = shorten(text, limit)
    return html.escape(text, quote=True)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], *, raw_columns: frozenset[int] = frozenset()) -> str:
    """An HTML table with every cell escaped, except columns the caller built from escaped parts."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{c if i in raw_columns else esc(c)}</td>" for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f"<table class='ragtt-t'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def runs_html(runs: Iterable[tuple[str, str]]) -> str:
    """Word runs (``ragtt.timetravel.passages.word_runs``) as escaped text with <del>/<ins>."""
    tags = {"delete": "del", "insert": "ins"}
    return "".join(f"<{tags[op]}>{esc(text)}</{tags[op]}>" if op in tags else esc(text) for op, text in runs)
