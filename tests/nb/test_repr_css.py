"""ragtt's HTML reprs under JupyterLab's own output CSS (the lab template's index.css, the
stylesheet JupyterLab renders outputs with): text cells stay left-aligned."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import ragtt

LAB_CSS = Path(sys.prefix) / "share" / "jupyter" / "nbconvert" / "templates" / "lab" / "static" / "index.css"


def test_text_columns_stay_left_aligned_under_jupyterlab_css(
    browser: Any, proj: ragtt.Project, sample: dict[str, Any], tmp_path: Path
) -> None:
    assert LAB_CSS.is_file(), LAB_CSS
    reports = [
        proj.diff(sample["then"], sample["now"]),
        proj.lineage(sample["then"], sample["now"]),
        proj.snapshots(),
        proj.drift("release-1", "release-3"),
    ]
    body = "".join(
        f"<div class='jp-OutputArea-output jp-RenderedHTMLCommon jp-RenderedHTML'>{r._repr_html_()}</div>"
        for r in reports
    )
    page_file = tmp_path / "reprs.html"
    page_file.write_text(
        f"<!DOCTYPE html><html><head><link rel='stylesheet' href='{LAB_CSS.as_uri()}'></head>"
        f"<body class='jp-Notebook'>{body}</body></html>",
        encoding="utf-8",
    )
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        page.goto(page_file.as_uri())
        # JupyterLab's rule is there and right-aligns a plain table cell in an output ...
        plain = page.evaluate("""() => { const d = document.createElement('div');
            d.className = 'jp-RenderedHTMLCommon jp-RenderedHTML'; d.innerHTML = '<table><tr><td>x</td></tr></table>';
            document.body.appendChild(d); return getComputedStyle(d.querySelector('td')).textAlign; }""")
        assert plain == "right"
        # ... but not ragtt's: every cell of every report table is left-aligned.
        aligns = page.eval_on_selector_all(
            ".ragtt-r td, .ragtt-r th", "els => els.map(e => getComputedStyle(e).textAlign)"
        )
        assert aligns and set(aligns) == {"left"}
    finally:
        context.close()
