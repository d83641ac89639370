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
from tests.nb.conftest import Offline, screenshot
from tests.nb.newcomer import QUESTION, releases
from tests.serve.conftest import live

OTHER = "How do I install Flask?"


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
    screenshot(page, host, screens / "newcomer_ui_diff.png")


def test_logged_runs_show_time_id_kind_grouped(page: Any, flask_ui: dict[str, Any], screens: Path) -> None:
    groups = page.locator(".ragtt-ui-query")
    assert groups.count() == 2  # two questions, not six rows
    asked = groups.filter(has_text=QUESTION)
    assert "×4" in asked.locator(".ragtt-ui-query-head").inner_text()  # then, now, its replay, the golden run
    kinds = asked.locator(".ragtt-ui-run").evaluate_all("els => els.map(e => e.dataset.kind)")
    assert set(kinds) == {"live", "replay", "golden"}
    run = asked.locator(f".ragtt-ui-run[data-query-id='{flask_ui['then']}']")
    assert run.locator(".ragtt-ui-id").inner_text() == flask_ui["then"][:10]
    assert run.locator(".ragtt-ui-when").inner_text()[:4].isdigit()  # 2026-...
    # search: the words in any order
    page.fill("input[type=search]", "default SEND_FILE_MAX_AGE_DEFAULT what")
    page.wait_for_function("() => document.querySelectorAll('.ragtt-ui-query').length === 1", timeout=10_000)
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
