"""The two demo notebooks, executed with the hash embedder and exported, open offline with
every widget and chart rendered and no console errors."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.nb.conftest import REPO, Offline, export


@pytest.fixture(scope="module", params=["pdf_provenance", "temporal_assertions"])
def demo_report(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    os.environ["RAGTT_EMBEDDER"] = "hash"  # the kernel inherits both
    os.environ["RAGTT_REPORT"] = "1"
    try:
        return export(
            REPO / "notebooks" / f"{request.param}.ipynb",
            tmp_path_factory.mktemp("demo") / f"{request.param}.html",
            execute=True,
            timeout=300,
        )
    finally:
        os.environ.pop("RAGTT_EMBEDDER", None)
        os.environ.pop("RAGTT_REPORT", None)


def test_demo_report_renders_offline(demo_report: Path, offline: Offline) -> None:
    page = offline.open(demo_report)
    assert demo_report.stat().st_size < 12_000_000
    if demo_report.stem == "pdf_provenance":
        page.wait_for_selector(".ragtt-pdf-overlay[data-page]", timeout=30_000)
        page.wait_for_selector(".ragtt-drift-scatter[data-painted]", timeout=30_000)
        badges = page.eval_on_selector_all(".ragtt-pdf-overlay .ragtt-po-engine", "els => els.map(e => e.textContent)")
        first = page.locator(".ragtt-pdf-overlay").first
        assert first.locator(".ragtt-region.ragtt-retrieved").count() >= 1 and badges
        # turn to the scanned page: its route says OCR. The page number under the buttons follows
        # each click at once; data-page only once the image is decoded, so click by the former
        # (bounded) and wait for the latter
        where = first.locator(".ragtt-po-where")
        for _ in range(3):
            if where.inner_text().startswith("page 3 "):
                break
            first.locator("button[aria-label='next page']").click()
        expect(where).to_have_text(re.compile(r"^page 3 of "))
        expect(first).to_have_attribute("data-page", "3")
        assert first.locator(".ragtt-po-engine").inner_text() == "ocr"
        assert first.locator(".ragtt-po-notice").is_hidden()
        # the scatter between two named snapshots, with the "14 days" chunks selected from Python
        scatter = page.locator(".ragtt-drift-scatter")
        assert scatter.locator(".ragtt-ds-title").inner_text().startswith("Drift policy-v1 (v")
        assert int(scatter.locator(".ragtt-ds-status").inner_text().split()[0]) >= 1
        assert "14 days" in scatter.locator(".ragtt-ds-list").inner_text()
        charts = 2
    else:
        page.wait_for_selector(".ragtt-timeline .ragtt-claim", timeout=30_000)
        assert "Refunds within 14 days" in page.content()
        # it opens on the newest claims, none of them stale; the versions are named by release
        # (the releases are evenly spread, half a second apart: auto may draw them in time)
        timeline = page.locator(".ragtt-timeline")
        claims = timeline.locator(".ragtt-tl-claims").inner_text()
        assert "superseded later" not in claims and "99.9% uptime" in claims and "$29 a month" in claims
        assert timeline.locator(".ragtt-tl-where").inner_text().startswith("release-3 (v")
        charts = 1
    page.wait_for_function(
        f"() => document.querySelectorAll('.vega-embed svg, .vega-embed canvas').length >= {charts}", timeout=30_000
    )
    assert offline.errors == [] and offline.aborted == []
