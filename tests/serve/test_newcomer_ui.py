"""Issue 30, item 9: the /ui dashboard as a newcomer used it on Flask's releases. ``ragtt
serve`` says where the dashboard is; the Ask box shows the answer; the diff fits the window;
logged runs show their time, id and kind (live, replay, golden), grouped by question; search
matches words in any order; the diff opens on two runs of ONE question."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ragtt
from ragtt.serve import create_app
from tests.nb import conftest as nb_conftest
from tests.nb.conftest import Offline, screenshot
from tests.nb.newcomer import QUESTION, releases
from tests.serve.conftest import live

OTHER = "How do I install Flask?"
screens = nb_conftest.screens  # the fixture of the screenshots' folder ($RAGTT_SCREENSHOTS), shared with tests/nb


@pytest.fixture(scope="module")
def flask_ui(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Three releases, the question asked after the first and the last (and replayed, and in a
    golden suite), then another question asked last: the newest run is of another question."""
    path = tmp_path_factory.mktemp("flaskui") / "flaskproj"
    found: dict[str, Any] = {"path": path}
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False, create=True) as proj:
        chosen = releases()[::2]
        for n, (tag, release) in enumerate(chosen):
            proj.ingest(release)
            proj.snapshot(f"flask-{tag}")
            if n == 0:
                found["then"] = proj.query(QUESTION).query_id
        found["now"] = proj.query(QUESTION).query_id
        found["replay"] = proj.replay(found["then"]).query_id
        suite = proj.regression.capture([QUESTION], "golden")
        proj.regression.run(suite)
        found["other"] = proj.query(OTHER).query_id
    return found


@pytest.fixture
def page(browser: Any, flask_ui: dict[str, Any]) -> Iterator[Any]:
    with live(create_app(flask_ui["path"], embedder=ragtt.HashEmbedder())) as url:
        o = Offline(browser, allowed=(f"{url}/", "blob:", "data:"))
        o.page.set_viewport_size({"width": 1400, "height": 900})
        o.page.goto(f"{url}/ui")
        o.page.wait_for_selector(".ragtt-ui[data-ready]", timeout=60_000)
        yield o.page
        assert o.aborted == [] and o.dialogs == []
        o.context.close()


def test_the_default_diff_is_two_runs_of_one_question(page: Any, flask_ui: dict[str, Any], screens: Path) -> None:
    """It compared the oldest query with the newest, two different questions, silently."""
    import json

    host = page.locator(".ragtt-ui-host[data-widget=chunk_diff]")
    args = json.loads(host.get_attribute("data-args"))
    assert args == {"left": flask_ui["then"], "right": flask_ui["now"]}
    texts = {
        page.locator(".ragtt-cd-left .ragtt-cd-query").inner_text(),
        page.locator(".ragtt-cd-right .ragtt-cd-query").inner_text(),
    }
    assert texts == {QUESTION}
    # the diff fits the window: no sideways scrolling, no taller than the window
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    box = host.bounding_box()
    assert box["x"] + box["width"] <= 1400 and box["height"] <= 900
    assert page.locator(".ragtt-cd-warning").count() == 0
    # both answers, then vs now (the then run's generated for the diff when it had none)
    assert page.locator(".ragtt-cd-left .ragtt-cd-answer").inner_text().strip()
    assert page.locator(".ragtt-cd-right .ragtt-cd-answer").inner_text().strip()
    screenshot(page, host, screens / "newcomer_ui_diff.png")
    # two different questions, picked by hand: the diff says so
    page.select_option("select[name=left]", flask_ui["other"])
    page.get_by_role("button", name="diff the two queries").click()
    page.locator(".ragtt-cd-warning").wait_for(timeout=30_000)
    assert "different questions" in page.locator(".ragtt-cd-warning").inner_text()


def test_logged_runs_show_time_id_kind_grouped(page: Any, flask_ui: dict[str, Any], screens: Path) -> None:
    groups = page.locator(".ragtt-ui-query")
    assert groups.count() == 2  # two questions, not six rows
    asked = groups.filter(has_text=QUESTION)
    runs = asked.locator(".ragtt-ui-run").count()
    assert runs >= 4 and f"×{runs}" in asked.locator(".ragtt-ui-query-head").inner_text()  # then, now, replay, golden
    kinds = asked.locator(".ragtt-ui-run").evaluate_all("els => els.map(e => e.dataset.kind)")
    assert set(kinds) == {"live", "replay", "golden"}
    run = asked.locator(f".ragtt-ui-run[data-query-id='{flask_ui['then']}']")
    assert run.locator(".ragtt-ui-id").inner_text() == flask_ui["then"][:10]
    assert run.locator(".ragtt-ui-when").inner_text()[:4].isdigit()  # 2026-...
    # search: the words in any order
    page.fill("input[type=search]", "default SEND_FILE_MAX_AGE_DEFAULT what")
    page.wait_for_function("() => document.querySelectorAll('.ragtt-ui-query').length === 1", timeout=30_000)
    assert page.locator(".ragtt-ui-query-text").inner_text() == QUESTION
    screenshot(page, page.locator(".ragtt-ui-side"), screens / "newcomer_ui_queries.png")


def test_the_ask_box_shows_the_answer(page: Any, screens: Path) -> None:
    page.fill(".ragtt-ui-ask input", "What is the default for SECRET_KEY?")
    page.get_by_role("button", name="Query", exact=True).click()
    answer = page.locator(".ragtt-ui-answer-text")
    answer.wait_for(timeout=30_000)
    assert len(answer.inner_text().strip()) > 20 and answer.inner_text() != "(no answer was generated)"
    screenshot(page, page.locator(".ragtt-ui-side"), screens / "newcomer_ui_answer.png")


def test_ragtt_serve_prints_its_url(flask_ui: dict[str, Any]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cli = str(Path(sys.executable).parent / "ragtt")
    proc = subprocess.Popen(
        [cli, "serve", "--port", str(port), "--project", str(flask_ui["path"]), "--embedder", "hash"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ},
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert f"http://127.0.0.1:{port}/ui" in line and "/docs" in line, line
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/ui", timeout=5) as reply:
                    assert reply.status == 200
                    break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(scope="module")
def renamed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Flask 3.0.0 then 3.0.3, where docs/security.rst became docs/web-security.rst unchanged."""
    from tests.conftest import flask_releases

    path = tmp_path_factory.mktemp("renamed") / "flaskproj"
    found = {p.name.split("_flask-")[1]: p for p in flask_releases()}
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False, create=True) as proj:
        for tag in ("3.0.0", "3.0.3"):
            proj.ingest(found[tag])
            proj.snapshot(f"flask-{tag}")
        report = proj.drift("flask-3.0.0", "flask-3.0.3")
    return {"path": path, "report": report}


def test_the_drift_table_names_a_rename(renamed: dict[str, Any]) -> None:
    from ragtt_nb.drift_scatter import DriftScatter

    with ragtt.Project.open(renamed["path"], embedder=ragtt.HashEmbedder(), progress=False) as proj:
        table = DriftScatter(proj, "flask-3.0.0", "flask-3.0.3")._data["source_table"]
    rows = {r["source"]: r for r in table}
    assert rows["docs/web-security.rst"]["status"] == "renamed"
    assert rows["docs/web-security.rst"]["renamed_from"] == "docs/security.rst"
    assert "docs/security.rst" not in rows  # one row, not "removed" plus "added"
    cli = {s.source: s for s in renamed["report"].sources}
    assert rows["docs/config.rst"]["summary"] == cli["docs/config.rst"].summary()


def test_browser_drift_arrows_are_labelled_and_the_table_sits_beside_the_plot(
    browser: Any, renamed: dict[str, Any], screens: Path
) -> None:
    import json

    with live(create_app(renamed["path"], embedder=ragtt.HashEmbedder())) as url:
        o = Offline(browser, allowed=(f"{url}/", "blob:", "data:"))
        try:
            page = o.page
            page.set_viewport_size({"width": 1400, "height": 900})
            page.goto(f"{url}/ui")
            page.wait_for_selector(".ragtt-ui[data-ready]", timeout=60_000)
            scatter = page.locator(".ragtt-drift-scatter[data-painted]")
            scatter.wait_for(timeout=30_000)
            labels = json.loads(scatter.get_attribute("data-arrow-labels"))
            texts = [b["text"] for b in labels]
            assert "docs/security.rst → docs/web-security.rst (renamed)" in texts
            cli = {s.source: s for s in renamed["report"].sources}
            config = cli["docs/config.rst"]
            assert any(t.startswith(f"docs/config.rst · cos {config.centroid_cosine:.3f}") for t in texts), texts
            for a in labels:  # no two labels over each other
                assert all(
                    a is b or a["x1"] < b["x0"] or a["x0"] > b["x1"] or a["y1"] < b["y0"] or a["y0"] > b["y1"]
                    for b in labels
                ), labels
            table = scatter.locator(".ragtt-ds-table")
            row = table.locator("tr[data-source='docs/web-security.rst']")
            assert "renamed from docs/security.rst" in row.inner_text()
            assert table.locator("tr[data-source='docs/security.rst']").count() == 0
            config_row = table.locator("tr[data-source='docs/config.rst']").inner_text()
            assert f"{config.centroid_cosine:.4f}" in config_row
            assert ("DRIFTED" in config_row) == bool(config.drifted)
            plot, side = scatter.locator(".ragtt-ds-plot").bounding_box(), table.bounding_box()
            assert side["x"] >= plot["x"] + plot["width"] - 1 and abs(side["y"] - plot["y"]) < 40  # beside, not below
            screenshot(page, scatter, screens / "newcomer_drift.png")
            scatter.locator(".ragtt-ds-color").select_option("source")
            legend = scatter.locator(".ragtt-ds-legend").inner_text()
            assert "hollow" in legend and "filled" in legend
            screenshot(page, scatter, screens / "newcomer_drift_by_source.png")
            assert o.aborted == [] and o.dialogs == []
        finally:
            o.context.close()
