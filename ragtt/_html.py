"""Tiny helpers for the self-contained, escaped HTML reprs of result objects."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["STYLE", "esc", "table"]

STYLE = (
    "<style>.ragtt-r{font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px}"
    ".ragtt-r table{border-collapse:collapse;margin:4px 0}"
    ".ragtt-r th,.ragtt-r td{border:1px solid var(--jp-border-color2,#ddd);padding:2px 6px;"
    "text-align:left;vertical-align:top}"
    ".ragtt-r th{background:var(--jp-layout-color2,#f4f4f4)}"
    ".ragtt-r .add{color:#1a7f37}.ragtt-r .rem{color:#cf222e}.ragtt-r .dim{opacity:.7}"
    ".ragtt-r pre{white-space:pre-wrap;margin:0;max-width:70em}</style>"
)


def esc(value: Any, limit: int | None = None) -> str:
    text = "" if value is None else str(value)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return html.escape(text, quote=True)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], *, raw_columns: frozenset[int] = frozenset()) -> str:
    """An HTML table with every cell escaped, except columns the caller built from escaped parts."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{c if i in raw_columns else esc(c)}</td>" for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
