"""The exported quickstart report in headless Chromium with every non-file request aborted:
the widgets render, the timeline scrubs, the chunk diff explains; and a project full of
script payloads runs none of them."""

from __future__ import annotations

import json
import re
from itertools import pairwise
from pathlib import Path
from typing import Any

from .conftest import LONG_URL, Offline, assert_columns_fit, export, screenshot, settle, write_notebook


def _chunk_ids(page: Any, selector: str) -> list[str]:
    return page.eval_on_selector_all(selector, "els => els.map(e => e.dataset.chunkId)")


def _open_quickstart(offline: Offline, report: Path) -> Any:
    page = offline.open(report)
    page.wait_for_selector(".ragtt-timeline .ragtt-chunk", timeout=30_000)
    page.wait_for_selector(".ragtt-chunk-diff .ragtt-chunk", timeout=30_000)
    settle(page)  # each card scrolls to its best sentence a frame after it is drawn
    return page


def test_quickstart_report_renders_offline(quickstart_report: Path, offline: Offline) -> None:
    size = quickstart_report.stat().st_size
    print(f"quickstart report: {size / 1e6:.2f} MB")
    assert size < 8_000_000
    page = _open_quickstart(offline, quickstart_report)
    page.wait_for_selector(".vega-embed", timeout=30_000)  # the Altair JupyterChart renders too
    page.wait_for_timeout(500)
    assert offline.aborted == [] and offline.errors == []
    assert page.locator(".ragtt-timeline").count() == 1 and page.locator(".ragtt-chunk-diff").count() == 1
    assert page.locator(".ragtt-timeline .ragtt-tl-status").inner_text() == "0 selected"
    assert all(_chunk_ids(page, ".ragtt-chunk"))


def test_dragging_the_cursor_in_the_report_changes_the_chunks(quickstart_report: Path, offline: Offline) -> None:
    page = _open_quickstart(offline, quickstart_report)
    timeline = page.locator(".ragtt-timeline")
    cursor = timeline.locator(".ragtt-timeline-cursor")
    then_ids = _chunk_ids(page, ".ragtt-timeline .ragtt-chunk")
    assert then_ids == _chunk_ids(page, ".ragtt-chunk-diff .ragtt-cd-left .ragtt-chunk")  # starts at the old query
    start = cursor.get_attribute("aria-valuenow")
    timeline.scroll_into_view_if_needed()
    plot = timeline.locator(".ragtt-tl-plot").bounding_box()
    box = cursor.bounding_box()
    page.mouse.move(box["x"] + 1, box["y"] + 5)
    page.mouse.down()
    page.mouse.move(plot["x"] + plot["width"] * 0.6, box["y"] + 5, steps=5)
    page.mouse.move(plot["x"] + plot["width"] - 2, box["y"] + 5, steps=5)
    page.mouse.up()
    assert cursor.get_attribute("aria-valuenow") != start
    now_ids = _chunk_ids(page, ".ragtt-timeline .ragtt-chunk")
    assert now_ids != then_ids
    # at the latest version the old question retrieves what the same question retrieved today
    assert now_ids == _chunk_ids(page, ".ragtt-chunk-diff .ragtt-cd-right .ragtt-chunk")
    assert "Index version" in timeline.locator(".ragtt-tl-info").inner_text()
    assert offline.errors == []


def test_timeline_keyboard(quickstart_report: Path, offline: Offline) -> None:
    page = _open_quickstart(offline, quickstart_report)
    timeline = page.locator(".ragtt-timeline")
    cursor = timeline.locator(".ragtt-timeline-cursor")
    timeline.focus()
    page.keyboard.press("End")
    last = int(cursor.get_attribute("aria-valuemax"))
    assert int(cursor.get_attribute("aria-valuenow")) == last
    page.keyboard.press("ArrowLeft")
    assert int(cursor.get_attribute("aria-valuenow")) == last - 1
    page.keyboard.press("Home")
    assert cursor.get_attribute("aria-valuenow") == cursor.get_attribute("aria-valuemin")
    assert timeline.locator(".ragtt-chunk").count() == 0  # nothing was indexed at the first version
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert timeline.locator(".ragtt-chunk").count() > 0
    timeline.locator(".ragtt-chunk").first.click()
    assert timeline.locator(".ragtt-tl-status").inner_text() == "1 selected"


def test_a_changed_passage_is_one_card_with_grouped_runs(quickstart_report: Path, offline: Offline) -> None:
    page = _open_quickstart(offline, quickstart_report)
    diff = page.locator(".ragtt-chunk-diff")
    assert diff.locator(".ragtt-cd-status").inner_text() == "0 selected"
    counts = diff.locator(".ragtt-cd-counts").inner_text()
    assert re.fullmatch(r"[1-9]\d* changed · \d+ added · \d+ removed · \d+ kept", counts), counts
    # the refund window's edit, shown without a click: one card, "30" deleted and "14" inserted
    card = diff.locator(".ragtt-cd-pairs .ragtt-chunk.ragtt-changed", has_text="refund-policy.md")
    assert card.count() == 1
    deleted = card.locator("del.ragtt-wd-del").all_inner_texts()
    inserted = card.locator("ins.ragtt-wd-ins").all_inner_texts()
    assert any("30" in t for t in deleted) and any("14" in t for t in inserted)
    ops = card.locator(".ragtt-chunk-text > *").evaluate_all("els => els.map(e => e.tagName)")
    assert all(not (a == b != "SPAN") for a, b in pairwise(ops))  # runs, not word by word
    # the first change is scrolled into the collapsed card's view
    assert _inside(card.locator("del.ragtt-wd-del").first, card.locator(".ragtt-chunk-text"))
    # clicking its "now" chunk in the right column explains it
    diff.locator(".ragtt-cd-right .ragtt-chunk.ragtt-changed", has_text="refund-policy.md").click()
    assert diff.locator(".ragtt-cd-status").inner_text() == "1 selected"
    assert "30" in " ".join(diff.locator(".ragtt-cd-detail del").all_inner_texts())
    assert diff.locator(".ragtt-cd-reason").inner_text().startswith("Why: chunk ")
    assert offline.errors == []


def _inside(inner: Any, outer: Any) -> bool:
    """Whether `inner`'s box lies within `outer`'s visible box (no scrolling needed)."""
    a, b = inner.bounding_box(), outer.bounding_box()
    return bool(
        a
        and b
        and a["height"] > 0
        and b["y"] - 1 <= a["y"]
        and a["y"] + a["height"] <= b["y"] + b["height"] + 1
        and b["x"] - 1 <= a["x"] <= b["x"] + b["width"]
    )


def _starts_inside(inner: Any, outer: Any) -> bool:
    """Whether the first line of `inner` (an inline run that may go on over blank lines) lies
    within `outer`'s visible box."""
    return bool(
        inner.evaluate(
            """(e, o) => { const a = e.getClientRects()[0], b = o.getBoundingClientRect();
              return !!a && a.height > 0 && a.top >= b.top - 1 && a.bottom <= b.bottom + 1; }""",
            outer.element_handle(),
        )
    )


VISIBLE_HL = """card => { const body = card.querySelector('.ragtt-chunk-text').getBoundingClientRect();
  return [...card.querySelectorAll('.ragtt-hl')].some(m => { const r = m.getBoundingClientRect();
    return r.height > 0 && r.top >= body.top - 1 && r.bottom <= body.bottom + 1; }); }"""


def test_timeline_cards_show_the_query_terms_without_scrolling(
    quickstart_report: Path, offline: Offline, screens: Path
) -> None:
    page = _open_quickstart(offline, quickstart_report)
    page.set_viewport_size({"width": 1400, "height": 900})
    timeline = page.locator(".ragtt-timeline")
    cards = timeline.locator(".ragtt-chunk")
    settle(page)  # the resize redraws the cards; they scroll to their best sentence a frame later
    assert cards.count() >= 2
    # every retrieved card that has the query's words shows one in its collapsed window
    with_terms = [c for c in cards.all() if c.locator(".ragtt-hl").count()]
    assert len(with_terms) >= 2
    assert all(c.evaluate(VISIBLE_HL) for c in with_terms)
    marks = {t.lower() for t in timeline.locator(".ragtt-hl").all_inner_texts()}
    # the query's words ("many", "days", "ask", "refund"; stop words left out) and their inflections
    assert marks and all(m.startswith(("many", "day", "ask", "refund")) for m in marks), marks
    # highlights are text in a mark, never HTML; text is left-aligned and kept from MathJax
    assert timeline.locator("mark.ragtt-hl *").count() == 0
    assert cards.first.locator(".ragtt-chunk-text").evaluate("e => getComputedStyle(e).textAlign") in ("left", "start")
    assert "tex2jax_ignore" in (timeline.get_attribute("class") or "")
    # expand and collapse: the whole chunk, then the window again
    card = next((c for c in with_terms if c.locator(".ragtt-card-toggle").is_visible()), None)
    assert card is not None, "no card is long enough to expand"
    body = card.locator(".ragtt-chunk-text")
    short = body.bounding_box()["height"]
    card.locator(".ragtt-card-toggle").click()
    assert "ragtt-expanded" in (card.get_attribute("class") or "")
    assert body.bounding_box()["height"] > short and body.evaluate("e => e.scrollHeight <= e.clientHeight + 1")
    card.locator(".ragtt-card-toggle").click()
    assert body.bounding_box()["height"] == short and card.evaluate(VISIBLE_HL)
    assert timeline.locator(".ragtt-tl-status").inner_text() == "0 selected"  # expanding is not selecting
    # a selected card is unmistakable: a thick outline, a tinted background and a "selected" mark
    other = cards.nth(1)
    cards.first.click()
    first = cards.first
    assert "ragtt-selected" in (first.get_attribute("class") or "")
    style = "e => { const s = getComputedStyle(e); return [s.outlineWidth, s.backgroundColor]; }"
    (outline, bg), (_, other_bg) = first.evaluate(style), other.evaluate(style)
    assert float(outline.rstrip("px")) >= 3 and bg != other_bg
    assert "selected" in first.locator(".ragtt-chunk-meta").evaluate("e => getComputedStyle(e, '::before').content")
    screenshot(page, timeline, screens / "timeline.png")
    assert offline.errors == []


def test_timeline_axis_names_versions_by_label(quickstart_report: Path, offline: Offline) -> None:
    page = _open_quickstart(offline, quickstart_report)
    timeline = page.locator(".ragtt-timeline")
    if timeline.get_attribute("data-axis") == "time":
        timeline.locator(".ragtt-tl-axis").click()
    boxes = json.loads(timeline.get_attribute("data-label-boxes"))
    labels = {b["label"]: b for b in boxes}
    assert set(labels) == {"release-1", "release-2", "release-3"}
    # the shared "release-" is dropped from the others, the cursor's version (the focal query's) keeps it
    now = int(timeline.locator(".ragtt-timeline-cursor").get_attribute("aria-valuenow"))
    assert [b["text"] for b in boxes if b["version"] == now] == ["release-1"]
    assert all(b["text"] == b["short"] for b in boxes if b["version"] != now)
    assert json.loads(timeline.get_attribute("data-axis-labels"))[-3:] == ["1", "2", "3"]
    assert "release-1 (v" in timeline.locator(".ragtt-tl-where").inner_text()
    assert "release-1 (v" in timeline.locator(".ragtt-tl-chunks .ragtt-tl-pane-title").inner_text()
    timeline.focus()
    page.keyboard.press("End")
    assert [b["text"] for b in json.loads(timeline.get_attribute("data-label-boxes")) if b["label"] == "release-3"] == [
        "release-3"
    ]


def test_chunk_diff_screenshot(quickstart_report: Path, offline: Offline, screens: Path) -> None:
    page = _open_quickstart(offline, quickstart_report)
    diff = page.locator(".ragtt-chunk-diff")
    diff.locator(".ragtt-cd-right .ragtt-chunk.ragtt-changed").first.click()
    assert diff.locator(".ragtt-cd-pairs .ragtt-chunk").first.evaluate("c => c.querySelector('del, ins') !== null")
    screenshot(page, diff.locator(".ragtt-cd-cols"), screens / "chunk_diff.png")
    screenshot(page, diff.locator(".ragtt-cd-changes"), screens / "chunk_diff_changes.png")
    assert offline.errors == []


PAYLOADS = {
    "evil.md": "# Refund\n\nRefunds: <script>window.__pwned = 'script'</script> within 30 days.\n",
    "img.md": "# Refund image\n\nRefund <img src=x onerror=\"window.__pwned = 'img'\"> window policy.\n",
    "link.md": "# Refund link\n\nRefund [click](javascript:window.__pwned='link') "
    f"<a href=\"javascript:window.__pwned='href'\">refund</a>.\n\nRefunds: {LONG_URL}\n",
}
QUERY = "refund <img src=x onerror=\"window.__pwned='query'\">"


def xss_notebook(folder: Path) -> Path:
    """A notebook that builds a project from script payloads and shows every view of it."""
    return write_notebook(
        folder / "xss.ipynb",
        [
            "import ragtt\nfrom ragtt_nb import ChunkDiff, Timeline\n"
            f"proj = ragtt.Project.open({str(folder / 'proj')!r}, embedder=ragtt.HashEmbedder(), progress=False)\n"
            f"first = proj.ingest_texts({ {k: v for k, v in list(PAYLOADS.items())[:2]}!r})",
            f"then = proj.query({QUERY!r})\nthen",
            f"proj.ingest_texts({ {k: v.replace('30', '45') for k, v in PAYLOADS.items()}!r})\n"
            f"now = proj.query({QUERY!r})\nnow",
            "Timeline(proj, then.query_id, version=then.index_version)",
            "ChunkDiff(proj, then.query_id, now.query_id)",
            "proj.diff(then.query_id, now.query_id)",
        ],
    )


def test_script_payloads_in_documents_never_run_in_a_report(tmp_path: Path, offline: Offline) -> None:
    report = export(xss_notebook(tmp_path), tmp_path / "xss.html", execute=True, timeout=120)
    page = offline.open(report)
    page.wait_for_selector(".ragtt-timeline .ragtt-chunk", timeout=30_000)
    page.wait_for_selector(".ragtt-chunk-diff .ragtt-chunk", timeout=30_000)
    for chunk in page.locator(".ragtt-chunk-diff .ragtt-chunk").all():
        chunk.click()  # every word diff rendered too
    page.locator(".ragtt-timeline").focus()
    page.keyboard.press("End")
    page.wait_for_timeout(500)
    assert page.evaluate("window.__pwned") is None and offline.dialogs == []
    widgets = ".ragtt-timeline, .ragtt-chunk-diff, .jp-RenderedHTML"
    assert page.locator(f"{', '.join(w + ' img' for w in widgets.split(', '))}").count() == 0
    assert page.locator("a[href^='javascript:'], [onerror]").count() == 0
    text = page.locator(".ragtt-chunk-diff").inner_text()
    assert "<script>window.__pwned = 'script'</script>" in text  # shown, as text
    assert LONG_URL in page.locator(".ragtt-chunk-diff .ragtt-cd-right").inner_text()
    assert_columns_fit(page.locator(".ragtt-chunk-diff"))  # the notebook's diff, as the lab tab's
    assert "onerror" in page.locator(".ragtt-timeline .ragtt-tl-query").inner_text()
    assert offline.aborted == [] and offline.errors == []


def test_the_diff_page_wraps_to_the_window(tmp_path: Path, offline: Offline) -> None:
    """`ragtt diff --html`'s page: its text dump (one line per answer, each a paragraph long) and
    a URL in a chunk wrap inside the window instead of widening the page to thousands of pixels."""
    import ragtt

    policy = "Refunds are granted within 30 days of purchase. Annual plans are refunded pro rata."
    added = " ".join(f"clause{i} applies to refund requests sent by post" for i in range(40))
    with ragtt.Project.open(tmp_path / "proj", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest_texts({"refunds.md": f"{policy}\nSee {LONG_URL}\n"})
        then = proj.query("refund days", top_k=2)
        proj.ingest_texts({"refunds.md": f"{policy} {added}\nSee {LONG_URL}\n"})
        now = proj.query("refund days", top_k=2)
        report = proj.diff(then.query_id, now.query_id)
    assert max(len(line) for line in report.to_text().splitlines()) > 300  # far wider than the window
    path = tmp_path / "diff.html"
    path.write_text(report.to_html(), encoding="utf-8")
    page = offline.open(path)
    width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], width


PYTHON_QUESTION = "What Python version do I need for Flask?"


def test_a_changed_passage_shows_its_edits_inline_and_folded(tmp_path: Path, offline: Offline, screens: Path) -> None:
    """Flask 1.1.2 -> 2.0.0 rewrote installation.rst's "Flask supports Python 3.5 and newer,
    Python 2.7, and PyPy." as "Flask supports Python\\n3.6 and newer.", and dropped its
    ``.. _installation:`` label. Folded, the changed passage shows the version edit and the
    removed sentence (not just the label), with "3.5" -> "3.6" inline in their sentence; the
    then and now cards show the words that changed, not a window ending at them."""
    import ragtt
    from ragtt.views import chunk_diff
    from ragtt.views.page import widget_page
    from tests.conftest import corpus

    root = corpus("evolving", "flask")
    with ragtt.Project.open(tmp_path / "proj", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest(root / "2020-04-03_flask-1.1.2")
        then = proj.query(PYTHON_QUESTION, mode="bm25", top_k=5)
        proj.ingest(root / "2021-05-11_flask-2.0.0")
        now = proj.query(PYTHON_QUESTION, mode="bm25", top_k=5)
        page_html = widget_page("chunk_diff", chunk_diff.model(proj, then.query_id, now.query_id), title="diff")
    (path := tmp_path / "diff.html").write_text(page_html, encoding="utf-8")
    page = offline.open(path)
    page.wait_for_selector(".ragtt-chunk-diff .ragtt-cd-pairs .ragtt-chunk", timeout=30_000)
    settle(page)
    diff = page.locator(".ragtt-chunk-diff")
    pair = diff.locator(".ragtt-cd-pairs .ragtt-chunk", has=page.locator("del", has_text="3.5"))
    assert pair.count() == 1 and "_installation:" in pair.locator("del").first.inner_text()
    body = pair.locator(".ragtt-chunk-text")
    old, new = pair.locator("del", has_text="3.5"), pair.locator("ins", has_text="3.6")
    pypy = pair.locator("del", has_text="PyPy")
    # folded: the version edit and the removed sentence are in view, the label scrolled past
    assert _inside(old, body) and _inside(new, body) and _starts_inside(pypy, body)
    assert not _inside(pair.locator("del").first, body)
    # inline: "Python 3.5 3.6 and newer." on one line, not "3.5" and "3.6" on lines of their own
    line = [b["y"] for b in (old.bounding_box(), new.bounding_box(), pair.get_by_text("and newer.").bounding_box())]
    assert max(line) - min(line) < 2, line
    # the then and now cards: the words that changed are marked and in view
    cards = {
        side: diff.locator(f".ragtt-cd-{side} .ragtt-chunk.ragtt-changed", has_text="Flask supports Python")
        for side in ("left", "right")
    }
    gone = cards["left"].locator(".ragtt-wd-del", has_text="3.5")
    came = cards["right"].locator(".ragtt-wd-ins", has_text="3.6")
    assert _inside(gone, cards["left"].locator(".ragtt-chunk-text"))
    assert _inside(came, cards["right"].locator(".ragtt-chunk-text"))
    assert _starts_inside(
        cards["left"].locator(".ragtt-wd-del", has_text="PyPy"), cards["left"].locator(".ragtt-chunk-text")
    )
    screenshot(page, diff, screens / "chunk_diff_flask_python.png")
    assert offline.errors == []
