"""``/ui`` in headless Chromium against a real uvicorn: the four widgets render from the REST
API, every request goes to the server itself, scrubbing, a diff card click, a lasso and a PDF
page turn work, and payloads in documents, source names and queries never run."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

import ragtt
from ragtt.serve import create_app
from ragtt.views import static_file
from tests.conftest import corpus
from tests.nb.conftest import Offline, build_sample
from tests.nb.layer2.conftest import PAYLOADS, REAL_PDF, evil_pdf
from tests.serve.conftest import live, notebook_modules_after

ALERT = "<img src=x onerror=alert('doc')>"
EVIL_QUERY = "<script>alert('query')</script> table of contents <img src=x onerror=alert('q2')>"
EVIL_SOURCE = "evil<img src=x onerror=alert('source')>.md"


@pytest.fixture(scope="module")
def ui_project(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The sample's three releases (two runs of its question), then a real PDF, a PDF and a
    Markdown file full of payloads (one in its file name), and a query whose text is one."""
    root = tmp_path_factory.mktemp("ui")
    sample = build_sample(root / "proj")
    docs = root / "docs"
    docs.mkdir()
    shutil.copy(corpus("pdfs", REAL_PDF), docs / REAL_PDF)
    evil_pdf(docs / "evil.pdf")
    (docs / EVIL_SOURCE).write_text("# Payloads\n\n" + "\n\n".join((*PAYLOADS, ALERT)) + "\n", encoding="utf-8")
    with ragtt.Project.open(sample["path"], embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest(docs)
        proj.snapshot("with-pdfs")
        sample["evil"] = proj.query(EVIL_QUERY, generate=False).query_id
    return sample


@pytest.fixture(scope="module")
def base_url(ui_project: dict[str, Any]) -> Iterator[str]:
    with live(create_app(ui_project["path"], embedder=ragtt.HashEmbedder())) as url:
        yield url


@pytest.fixture
def ui(browser: Any, base_url: str) -> Iterator[Offline]:
    o = Offline(browser, allowed=(f"{base_url}/", "blob:", "data:"))
    o.page.add_init_script("window.__ran = [];")
    o.page.goto(f"{base_url}/ui")
    o.page.wait_for_selector(".ragtt-ui[data-ready]", timeout=60_000)
    yield o
    o.context.close()


def _clean(o: Offline) -> None:
    assert o.aborted == [] and o.dialogs == [] and o.errors == []
    assert o.page.evaluate("window.__ran") == []


def _ids(scope: Any, selector: str) -> list[str]:
    return scope.locator(selector).evaluate_all("els => els.map(e => e.dataset.chunkId)")


def test_the_four_widgets_render_from_the_server_alone(ui: Offline, base_url: str, ui_project: dict[str, Any]) -> None:
    page = ui.page
    for widget in ("timeline", "chunk_diff", "drift_scatter", "pdf_overlay"):
        assert page.locator(f".ragtt-ui-host[data-widget={widget}]").get_attribute("data-state") == "ready", widget
    assert page.locator(".ragtt-timeline").count() == 1 and page.locator(".ragtt-chunk-diff").count() == 1
    assert page.locator(".ragtt-drift-scatter[data-painted]").count() == 1
    assert page.locator(".ragtt-pdf-overlay img.ragtt-po-image").evaluate("i => i.complete && i.naturalWidth > 0")
    # the logged queries, newest first, the payload one as plain text, the sample question's
    # two runs grouped under it; the snapshots listed
    texts = page.locator(".ragtt-ui-query-text").all_inner_texts()
    assert texts[0] == EVIL_QUERY and len(texts) == 2
    assert page.locator(".ragtt-ui-run").count() == 3
    assert page.locator(".ragtt-ui-snapshots li").last.inner_text().startswith("with-pdfs (v")
    assert "release-1" in page.locator(".ragtt-ui-snapshots").inner_text()
    # no payload became an element: no <img src=x>, no inline script
    assert page.locator("img[src='x']").count() == 0 and page.locator("script:not([src])").count() == 0
    _clean(ui)


def test_scrub_diff_card_lasso_and_page_turn(ui: Offline, ui_project: dict[str, Any]) -> None:
    page = ui.page
    # scrub: the timeline of the newest query, dragged to its first version and back by keys
    timeline = page.locator(".ragtt-timeline")
    cursor = timeline.locator(".ragtt-timeline-cursor")
    timeline.focus()
    page.keyboard.press("Home")
    assert cursor.get_attribute("aria-valuenow") == cursor.get_attribute("aria-valuemin")
    assert timeline.locator(".ragtt-chunk").count() == 0  # nothing was indexed at the first version
    page.keyboard.press("End")
    assert int(cursor.get_attribute("aria-valuenow")) == int(cursor.get_attribute("aria-valuemax"))
    assert timeline.locator(".ragtt-chunk").count() > 0
    host = page.locator(".ragtt-ui-host[data-widget=timeline]")
    assert '"version"' in (host.get_attribute("data-saved") or "")  # save_changes reached the page
    # the diff picker: then = the sample's first run, now = its last; a changed card click
    page.select_option("select[name=left]", ui_project["then"])
    page.select_option("select[name=right]", ui_project["now"])
    page.get_by_role("button", name="diff the two queries").click()
    # the page's own first mount may show the same pair: wait for the click's mount (the newest
    # wins; it sets "loading" as it starts), or a card clicked now is replaced when it answers
    page.wait_for_function(
        "id => { const h = document.querySelector('.ragtt-ui-host[data-widget=chunk_diff]');"
        " return h.dataset.state === 'ready' && (h.dataset.args || '').includes(id); }",
        arg=ui_project["now"],
        timeout=30_000,
    )
    diff = page.locator(".ragtt-chunk-diff")
    # the widget renders and answers clicks asynchronously: wait for its text, don't read it once
    expect(diff.locator(".ragtt-cd-status")).to_have_text("0 selected")
    diff.locator(".ragtt-cd-right .ragtt-chunk.ragtt-changed", has_text="refund-policy.md").click()
    expect(diff.locator(".ragtt-cd-status")).to_have_text("1 selected")
    assert "30" in " ".join(diff.locator(".ragtt-cd-detail del").all_inner_texts())
    # lasso: a box over the whole plot selects every point of both versions
    scatter = page.locator(".ragtt-drift-scatter")
    scatter.scroll_into_view_if_needed()
    box = scatter.locator(".ragtt-ds-overlay").bounding_box()
    page.mouse.move(box["x"] + 1, box["y"] + 1)
    page.mouse.down()
    for x, y in [(box["width"] - 1, 1), (box["width"] - 1, box["height"] - 1), (1, box["height"] - 1), (1, 1)]:
        page.mouse.move(box["x"] + x, box["y"] + y, steps=8)
    page.mouse.up()
    assert int(scatter.locator(".ragtt-ds-status").inner_text().split()[0]) > 0
    # page turn: the overlay opened lazily (one page in its state); the next page comes from the server
    overlay = page.locator(".ragtt-pdf-overlay")
    overlay.scroll_into_view_if_needed()
    start = int(overlay.get_attribute("data-page"))
    step = 1 if start < 4 else -1
    overlay.locator("button[aria-label='next page' i]" if step == 1 else "button[aria-label='previous page' i]").click()
    page.wait_for_function(
        "p => { const o = document.querySelector('.ragtt-pdf-overlay');"
        " const i = o.querySelector('img.ragtt-po-image');"
        " return o.dataset.page === String(p) && i.complete && i.naturalWidth > 0 && i.src.startsWith('blob:'); }",
        arg=start + step,
        timeout=30_000,
    )
    assert overlay.locator(".ragtt-po-where").inner_text() == f"page {start + step} of 4"
    assert overlay.locator(".ragtt-po-notice").is_hidden()
    _clean(ui)


def test_query_box_search_and_payloads_stay_text(ui: Offline, ui_project: dict[str, Any]) -> None:
    page = ui.page
    asked = f"refund window {ALERT}"
    page.fill(".ragtt-ui-ask input", asked)
    page.get_by_role("button", name="Query", exact=True).click()
    page.wait_for_function(
        "t => [...document.querySelectorAll('.ragtt-ui-query-text')].some(e => e.textContent === t)",
        arg=asked,
        timeout=30_000,
    )
    page.wait_for_function(
        "t => (document.querySelector('.ragtt-timeline .ragtt-tl-query') || {}).textContent?.includes(t)",
        arg="refund window",
        timeout=30_000,
    )
    page.fill("input[type=search]", "TABLE OF")
    page.wait_for_function("() => document.querySelectorAll('.ragtt-ui-query').length === 1", timeout=10_000)
    assert page.locator(".ragtt-ui-query-text").inner_text() == EVIL_QUERY
    page.fill("input[type=search]", "no such question")
    page.wait_for_selector("text=No logged query has all those words.", timeout=10_000)
    # the payload query's timeline, and the payload PDF: everything shown as text
    page.fill("input[type=search]", "")
    page.wait_for_function("() => document.querySelectorAll('.ragtt-ui-run').length === 4", timeout=10_000)
    page.locator(f".ragtt-ui-query[data-query-id='{ui_project['evil']}'] button", has_text="timeline").click()
    page.wait_for_function(
        "t => (document.querySelector('.ragtt-timeline .ragtt-tl-query') || {}).textContent?.includes(t)",
        arg="<script>",
        timeout=30_000,
    )
    page.select_option("select[name=source]", "evil.pdf")
    page.get_by_role("button", name="open the PDF").click()
    page.wait_for_function(
        "() => (document.querySelector('.ragtt-pdf-overlay .ragtt-po-title') || {}).textContent?.includes('evil.pdf')",
        timeout=30_000,
    )
    page.locator(".ragtt-pdf-overlay .ragtt-region").first.click()
    assert "<script>" in page.locator(".ragtt-pdf-overlay .ragtt-po-list .ragtt-chunk-text").inner_text()
    assert page.locator("img[src='x']").count() == 0
    _clean(ui)


def test_ui_api_needs_the_token_and_the_page_passes_it(browser: Any, ui_project: dict[str, Any]) -> None:
    with live(create_app(ui_project["path"], embedder=ragtt.HashEmbedder(), token="s3cret")) as url:
        o = Offline(browser, allowed=(f"{url}/", "blob:", "data:"))
        try:
            assert o.page.goto(f"{url}/ui").status == 200  # the page holds no data: no token needed
            assert o.page.request.get(f"{url}/ui/api/queries").status == 401
            o.page.goto(f"{url}/ui#token=s3cret")
            o.page.reload()
            o.page.wait_for_selector(".ragtt-ui[data-ready]", timeout=60_000)
            assert len(o.page.locator(".ragtt-ui-run").all()) >= 3
            assert o.aborted == [] and o.dialogs == []
        finally:
            o.context.close()


def test_the_dashboard_bundle_is_self_contained_and_names_no_other_host() -> None:
    built = static_file("dashboard.js").read_text()
    assert built.startswith("// Generated from js/src/dashboard.js")
    assert not re.search(r"^\s*import ", built, re.M) and "http://" not in built and "https://" not in built
    assert "innerHTML" not in built and "insertAdjacentHTML" not in built


def test_the_dashboard_imports_no_notebook_stack(ui_project: dict[str, Any]) -> None:
    gets = [
        f"/ui/api/model/timeline?query_id={ui_project['now']}",
        "/ui/api/model/drift_scatter?a=1&b=release-3",
        f"/ui/api/model/chunk_diff?left={ui_project['then']}&right={ui_project['now']}",
        f"/ui/api/model/pdf_overlay?source={REAL_PDF}",
    ]
    assert notebook_modules_after(ui_project["path"], gets) == []
