"""Both widgets in an exported report, opened in Chromium with every non-file request
aborted: they render with no console errors, a lasso selects points, a click on a known
chunk's words selects that chunk, and no injected script runs."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pymupdf

import ragtt
from ragtt.ingest import pixel_box
from ragtt.ingest.types import Region
from ragtt_nb.drift_scatter import DriftScatter
from tests.nb.conftest import screenshot, settle

from .conftest import PAYLOADS, REAL_PDF, Offline

HEIGHT = 460  # js/src/drift_scatter.js's plot height


def _drawn_at(page: Any, ds: DriftScatter) -> tuple[np.ndarray, np.ndarray]:
    """Where the view draws each point (CSS px in the plot), from its `data-view` hook."""
    view = json.loads(page.locator(".ragtt-drift-scatter").get_attribute("data-view"))
    pts = ds.points()
    x = view["w"] / 2 + (pts["x"].to_numpy() - view["ux"]) * view["k"]
    y = view["h"] / 2 - (pts["y"].to_numpy() - view["uy"]) * view["k"]
    return x, y


def _centre_in_view(image: Any, y: float) -> None:
    """Scroll the overlay's viewport, then the page, so that ``y`` px below the image's top is
    on screen (mouse clicks do not scroll)."""
    image.evaluate(
        """(el, y) => { const sc = el.closest('.ragtt-po-viewport');
        const r = el.getBoundingClientRect(), s = sc.getBoundingClientRect();
        sc.scrollTop += r.top + y - s.top - sc.clientHeight / 2;
        sc.scrollIntoView({block: 'center'}); }""",
        y,
    )


def _no_errors(offline: Offline) -> None:
    assert offline.errors == [] and offline.aborted == [] and offline.dialogs == []


def test_report_renders_both_widgets_offline(report_page: Any, offline: Offline) -> None:
    page = report_page
    assert page.locator(".ragtt-drift-scatter").count() == 1
    assert page.locator(".ragtt-pdf-overlay").count() == 2
    assert page.locator(".ragtt-drift-scatter .ragtt-ds-status").inner_text() == "0 selected"
    # the scatter painted pixels: the points canvas is not blank
    filled = page.evaluate("""() => { const c = document.querySelector('.ragtt-ds-points');
        const a = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 3; i < a.length; i += 4) if (a[i]) n++; return n; }""")
    assert filled > 50
    overlay = page.locator(".ragtt-pdf-overlay").first
    assert overlay.locator(".ragtt-po-engine").inner_text() == "text"
    assert overlay.locator(".ragtt-region.ragtt-retrieved").count() >= 1
    assert overlay.locator("img.ragtt-po-image").evaluate("i => i.complete && i.naturalWidth > 0")
    _no_errors(offline)


def test_lasso_in_the_report_selects_points(
    report_page: Any, offline: Offline, wproj: ragtt.Project, widget_project: dict[str, Any]
) -> None:
    page = report_page
    canvas = page.locator(".ragtt-drift-scatter .ragtt-ds-overlay")
    box = canvas.bounding_box()
    w = box["width"]
    split = w / 2  # lasso the left half of the plot
    page.mouse.move(box["x"] + 1, box["y"] + 1)
    page.mouse.down()
    for x, y in [(split, 1), (split, HEIGHT - 1), (1, HEIGHT - 1), (1, 1)]:
        page.mouse.move(box["x"] + x, box["y"] + y, steps=8)
    page.mouse.up()
    status = page.locator(".ragtt-drift-scatter .ragtt-ds-status").inner_text()
    selected = set(
        page.eval_on_selector_all(
            ".ragtt-drift-scatter .ragtt-ds-list .ragtt-chunk", "els => els.map(e => e.dataset.chunkId)"
        )
    )
    # what lies left of the split, from the widget's own coordinates (1 px of slack at the edge)
    ds = DriftScatter(wproj, widget_project["v_a"], widget_project["v_b"], query=widget_project["query_id"])
    px, _ = _drawn_at(page, ds)
    chunk_ids = ds.points()["chunk_id"].to_list()
    surely = {c for c, x in zip(chunk_ids, px, strict=True) if 3 < x < split - 1}
    maybe = {c for c, x in zip(chunk_ids, px, strict=True) if x < split + 1}
    n = int(status.split()[0])
    assert surely and len(surely) <= n <= len(maybe)
    assert surely <= selected <= maybe or n > 200
    _no_errors(offline)


def test_click_on_a_chunks_words_selects_it(
    report_page: Any, offline: Offline, wproj: ragtt.Project, widget_project: dict[str, Any]
) -> None:
    """The centre of a known chunk's region on the real PDF, located from PyMuPDF's own box,
    not from the overlay's elements."""
    page = report_page
    pdf = widget_project["docs"] / REAL_PDF
    overlay = page.locator(".ragtt-pdf-overlay").first
    shown = int(overlay.get_attribute("data-page"))
    chunks = wproj.chunks(source=REAL_PDF)
    regions = [
        (row["chunk_id"], Region(r["page"], r["x0"], r["y0"], r["x1"], r["y1"]))
        for row in chunks.iter_rows(named=True)
        for r in row["regions"]
        if r["page"] == shown
    ]
    target = None
    for chunk_id, reg in sorted(regions, key=lambda cr: -(cr[1].x1 - cr[1].x0) * (cr[1].y1 - cr[1].y0)):
        cx, cy = (reg.x0 + reg.x1) / 2, (reg.y0 + reg.y1) / 2
        others = [o for c, o in regions if c != chunk_id and o.x0 <= cx <= o.x1 and o.y0 <= cy <= o.y1]
        if not others:
            target = chunk_id, reg, (cx, cy)
            break
    assert target is not None, "no region on the shown page is free of overlaps at its centre"
    chunk_id, reg, (cx, cy) = target
    with pymupdf.open(pdf) as doc:
        words = doc[reg.page - 1].get_text("words", clip=pymupdf.Rect(cx - 20, cy - 4, cx + 20, cy + 4))
        page_w = doc[reg.page - 1].rect.width
    text = chunks.filter(chunks["chunk_id"] == chunk_id)["text"][0]
    assert any(w[4] in text for w in words)  # the centre of the box is on this chunk's words
    x0, y0, x1, y1 = pixel_box(pdf, reg, zoom=1.0)
    image = overlay.locator("img.ragtt-po-image")
    s = image.bounding_box()["width"] / page_w
    _centre_in_view(image, (y0 + y1) / 2 * s)
    img = image.bounding_box()
    page.mouse.click(img["x"] + (x0 + x1) / 2 * s, img["y"] + (y0 + y1) / 2 * s)
    assert overlay.locator(".ragtt-po-status").inner_text() == "1 selected"
    assert overlay.locator(".ragtt-po-list .ragtt-chunk").evaluate_all("els => els.map(e => e.dataset.chunkId)") == [
        chunk_id
    ]
    _no_errors(offline)


def test_overlay_pages_turn_from_the_embedded_state(report_page: Any, offline: Offline) -> None:
    page = report_page
    overlay = page.locator(".ragtt-pdf-overlay").first
    start = int(overlay.get_attribute("data-page"))
    step = 1 if start < 4 else -1
    # every Blob URL the page makes from here on: turning to an embedded neighbour needs none
    page.evaluate("""() => { window.__madeAfter = []; const make = URL.createObjectURL.bind(URL);
        URL.createObjectURL = (blob) => { const url = make(blob); window.__madeAfter.push(url); return url; }; }""")
    overlay.locator("button[aria-label='next page' i]" if step == 1 else "button[aria-label='previous page' i]").click()
    page.wait_for_function(
        "p => document.querySelector('.ragtt-pdf-overlay').dataset.page === String(p)", arg=start + step, timeout=30_000
    )
    assert overlay.locator(".ragtt-po-where").inner_text() == f"page {start + step} of 4"
    assert overlay.locator(".ragtt-po-notice").is_hidden()
    # shown from the embedded state with no Blob work: its image's URL was made (warmed) before
    # the click. (This replaces a 150 ms bound on data-page-ms, which a loaded machine failed.)
    src = overlay.locator("img.ragtt-po-image").get_attribute("src") or ""
    assert src.startswith("blob:") and src not in page.evaluate("window.__madeAfter")
    overlay.locator("button[aria-label='zoom in']").click()
    assert overlay.locator(".ragtt-region").count() >= 1
    _no_errors(offline)


def test_no_injected_script_runs(report_page: Any, offline: Offline) -> None:
    page = report_page
    evil = page.locator(".ragtt-pdf-overlay").nth(1)
    regions = evil.locator(".ragtt-region")
    assert regions.count() >= 1
    regions.first.hover()
    regions.first.click()
    shown = evil.locator(".ragtt-po-list .ragtt-chunk-text").inner_text()
    assert "<script>" in shown and "onerror" in shown  # shown as text
    # every payload chunk of the scatter, hovered and listed after a box over the whole plot
    scatter = page.locator(".ragtt-drift-scatter")
    scatter.locator("button[data-mode='box']").click()
    box = scatter.locator(".ragtt-ds-overlay").bounding_box()
    page.mouse.move(box["x"] + 1, box["y"] + 1)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] - 1, box["y"] + box["height"] - 1, steps=5)
    page.mouse.up()
    listed = scatter.locator(".ragtt-ds-list").inner_text()
    assert all(p in listed for p in PAYLOADS[:2])
    page.wait_for_timeout(500)
    assert page.evaluate("window.__ran") == []
    assert (
        page.locator(
            ".ragtt-drift-scatter img, .ragtt-pdf-overlay img[onerror], .ragtt-pdf-overlay a, .ragtt-drift-scatter a"
        ).count()
        == 0
    )
    _no_errors(offline)


ALPHAS = """sel => { const c = document.querySelector(sel); const a = c.getContext('2d')
    .getImageData(0, 0, c.width, c.height).data; const h = {}; let x0 = 1e9, y0 = 1e9, x1 = -1, y1 = -1;
  for (let i = 3; i < a.length; i += 4) if (a[i]) { h[a[i]] = (h[a[i]] || 0) + 1;
    const p = (i - 3) / 4, x = p % c.width, y = (p / c.width) | 0;
    x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y); }
  return { hist: h, box: [x0, y0, x1, y1], dpr: window.devicePixelRatio || 1 }; }"""


def _lasso_left_half(page: Any) -> None:
    box = page.locator(".ragtt-drift-scatter .ragtt-ds-overlay").bounding_box()
    split = box["width"] / 2
    page.mouse.move(box["x"] + 1, box["y"] + 1)
    page.mouse.down()
    for x, y in [(split, 1), (split, HEIGHT - 1), (1, HEIGHT - 1), (1, 1)]:
        page.mouse.move(box["x"] + x, box["y"] + y, steps=8)
    page.mouse.up()


def test_selection_is_ringed_and_the_rest_dimmed(report_page: Any, offline: Offline, screens: Any) -> None:
    page = report_page
    before = page.evaluate(ALPHAS, ".ragtt-ds-points")["hist"]
    assert set(before) == {"217"}  # every point at 0.85 alpha
    rings_before = sum(page.evaluate(ALPHAS, ".ragtt-ds-overlay")["hist"].values())
    _lasso_left_half(page)
    assert int(page.locator(".ragtt-ds-status").inner_text().split()[0]) > 0
    after = page.evaluate(ALPHAS, ".ragtt-ds-points")["hist"]
    # selected points opaque (and larger: more opaque pixels than points), the rest dimmed to 0.18
    assert set(after) == {"255", "46"}, after
    assert sum(page.evaluate(ALPHAS, ".ragtt-ds-overlay")["hist"].values()) > rings_before  # the rings
    legend = page.locator(".ragtt-ds-legend")
    assert "selected" in legend.inner_text() and "centroid" in legend.inner_text()
    # no legend text is clipped
    assert legend.locator(".ragtt-ds-legend-text").evaluate_all(
        "els => els.every(e => e.scrollWidth <= e.clientWidth + 1 && e.scrollHeight <= e.clientHeight + 1)"
    )
    screenshot(page, page.locator(".ragtt-drift-scatter"), screens / "drift_scatter.png")
    page.locator(".ragtt-drift-scatter button", has_text="Clear").click()
    assert set(page.evaluate(ALPHAS, ".ragtt-ds-points")["hist"]) == {"217"}
    _no_errors(offline)


def test_scatter_axes_share_one_scale(
    report_page: Any, offline: Offline, wproj: ragtt.Project, widget_project: dict[str, Any]
) -> None:
    """The painted cloud has the data's aspect ratio: an axis with little variance is not stretched."""
    page = report_page
    ds = DriftScatter(wproj, widget_project["v_a"], widget_project["v_b"], query=widget_project["query_id"])
    pts = ds.points()
    spans = (pts["x"].max() - pts["x"].min(), pts["y"].max() - pts["y"].min())
    shot = page.evaluate(ALPHAS, ".ragtt-ds-points")
    x0, y0, x1, y1 = shot["box"]
    point = 6 * shot["dpr"]  # the squares' size at this point count
    drawn = ((x1 - x0 + 1 - point), (y1 - y0 + 1 - point))
    assert abs(drawn[1] / drawn[0] - spans[1] / spans[0]) < 0.05 * max(1.0, spans[1] / spans[0]), (drawn, spans)
    assert drawn[1] < HEIGHT * shot["dpr"] - 2 * 12 * shot["dpr"] or drawn[0] >= drawn[1]  # fitted, not stretched
    _no_errors(offline)


def test_scatter_pans_and_zooms(report_page: Any, offline: Offline) -> None:
    page = report_page
    scatter = page.locator(".ragtt-drift-scatter")
    view = lambda: json.loads(scatter.get_attribute("data-view"))  # noqa: E731
    start = view()
    box = scatter.locator(".ragtt-ds-overlay").bounding_box()
    cx, cy = box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.4
    page.mouse.move(cx, cy)
    for _ in range(3):  # zoom in about the pointer
        page.mouse.wheel(0, -100)
        settle(page)  # the view redraws (and writes data-view) on the next frame
    zoomed = view()
    assert zoomed["k"] > 1.5 * start["k"]
    # the projection point under the pointer stays under it
    ux = start["ux"] + (cx - box["x"] - start["w"] / 2) / start["k"]
    assert abs(zoomed["w"] / 2 + (ux - zoomed["ux"]) * zoomed["k"] - (cx - box["x"])) < 1.5
    scatter.locator("button[data-mode='pan']").click()
    page.mouse.move(cx, cy)
    page.mouse.down()
    page.mouse.move(cx + 80, cy + 30, steps=4)
    page.mouse.up()
    settle(page)
    panned = view()
    assert abs((panned["ux"] - zoomed["ux"]) * zoomed["k"] + 80) < 1.5 and panned["k"] == zoomed["k"]
    assert scatter.locator(".ragtt-ds-status").inner_text() == "0 selected"  # panning selects nothing
    page.mouse.dblclick(cx, cy)
    settle(page)
    assert view() == start
    _no_errors(offline)


def test_overlay_screenshot(report_page: Any, offline: Offline, screens: Any) -> None:
    page = report_page
    overlay = page.locator(".ragtt-pdf-overlay").first
    assert overlay.locator(".ragtt-region.ragtt-retrieved[data-rank='1']").count() >= 1  # opened on the best hit
    overlay.locator(".ragtt-region.ragtt-retrieved[data-rank='1']").first.click()
    assert overlay.locator(".ragtt-po-list .ragtt-chunk .ragtt-chunk-text").count() == 1
    screenshot(page, overlay, screens / "pdf_overlay.png")
    _no_errors(offline)
