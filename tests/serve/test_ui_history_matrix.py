"""The history matrix in ``/ui``, in headless Chromium against a real uvicorn: the evaluation
form posts ``/evaluate``, the heatmap renders from the REST API alone, a changed cell opens its
ChunkDiff and a question its Timeline; the message route answers what a state left out; and
the route imports no notebook stack."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import expect

import ragtt
from ragtt.serve import create_app
from ragtt.views import history_matrix as hm
from tests.nb.conftest import Offline
from tests.nb.test_history_matrix import DATASET, build_flask
from tests.serve.conftest import live, notebook_modules_after


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("ui-hm")
    project = build_flask(root / "proj")
    questions = project / "questions.jsonl"  # in the project folder: where a server reads a client's paths
    questions.write_text("".join(json.dumps(row) + "\n" for row in DATASET), encoding="utf-8")
    return {"path": project, "questions": questions}


@pytest.fixture(scope="module")
def base_url(evaluated: dict[str, Any]) -> Iterator[str]:
    with live(create_app(evaluated["path"], embedder=ragtt.HashEmbedder())) as url:
        yield url


def test_the_matrix_in_the_dashboard(browser: Any, base_url: str, evaluated: dict[str, Any]) -> None:
    o = Offline(browser, allowed=(f"{base_url}/", "blob:", "data:"))
    try:
        page = o.page
        page.goto(f"{base_url}/ui")
        page.wait_for_selector(".ragtt-ui[data-ready]", timeout=60_000)
        host = page.locator(".ragtt-ui-host[data-widget=history_matrix]")
        assert "Evaluate a question set" in host.inner_text()
        page.fill("input[name=dataset]", str(evaluated["questions"]))
        page.get_by_role("button", name="Evaluate", exact=True).click()
        page.wait_for_function(
            "() => document.querySelector('.ragtt-ui-host[data-widget=history_matrix]').dataset.state === 'ready'",
            timeout=60_000,
        )
        widget = host.locator(".ragtt-history-matrix[data-painted]")
        assert widget.count() == 1
        assert page.locator(".ragtt-ui-status").inner_text() == "Evaluated 3 questions at 4 versions."
        with ragtt.Project.open(evaluated["path"], embedder=ragtt.HashEmbedder(), progress=False) as proj:
            wire = proj.evaluate(evaluated["questions"]).to_dict()  # read back: the dashboard's runs
            states = np.frombuffer(hm.build(proj, wire)["cell"]["view"], dtype="u1").reshape(3, 4)
        q, c = (int(x) for x in np.argwhere(states == hm.CHANGED)[0])
        widget.scroll_into_view_if_needed()
        canvas = widget.locator(".ragtt-hm-canvas")
        box = canvas.bounding_box()
        geo = {k: float(canvas.get_attribute(f"data-{k}")) for k in ("left", "top", "cell-w", "cell-h")}
        y = box["y"] + geo["top"] + (q + 0.5) * geo["cell-h"]
        page.mouse.click(box["x"] + geo["left"] + (c + 0.5) * geo["cell-w"], y)
        assert widget.get_attribute("data-panel") == "diff"
        assert widget.locator(".ragtt-chunk-diff .ragtt-cd-id").all_inner_texts() == [
            wire["query_ids"][q][c - 1],
            wire["query_ids"][q][c],
        ]
        page.mouse.click(box["x"] + 20, y)  # the question: its timeline comes from the server
        page.wait_for_function(
            "() => document.querySelector('.ragtt-history-matrix').dataset.panel === 'timeline'", timeout=30_000
        )
        assert widget.locator(".ragtt-timeline .ragtt-chunk").count() > 0
        # the readout and the focus ring on the cell whose run the Timeline shows (its last)
        assert (
            widget.locator(".ragtt-hm-readout")
            .inner_text()
            .startswith(f"{wire['questions'][q]['question']} · {wire['columns'][-1]['label']} (v")
        )
        # the got-worse list, from the server: none of these questions fell below 0.5
        expect(widget).to_have_attribute("data-worse", "none", timeout=30_000)
        assert "no question's context_recall fell below 0.5" in widget.locator(".ragtt-hm-worse-head").inner_text()
        assert '"selected"' in (host.get_attribute("data-saved") or "")  # save_changes reached the page
        assert o.aborted == [] and o.dialogs == [] and o.errors == []
    finally:
        o.context.close()


def test_the_message_route_answers_what_a_state_left_out(evaluated: dict[str, Any]) -> None:
    with ragtt.Project.open(evaluated["path"], embedder=ragtt.HashEmbedder(), progress=False) as proj:
        ids = proj.evaluate(evaluated["questions"]).query_ids
    app = create_app(evaluated["path"], embedder=ragtt.HashEmbedder())
    with TestClient(app) as client:
        content = {"type": "diff", "key": "k", "left": ids[0][0], "right": ids[0][3]}
        replies = client.post(
            "/ui/api/model/history_matrix/msg", json={"args": {"dataset": "x"}, "content": content}
        ).json()
        (reply,) = replies
        assert reply["content"]["key"] == "k" and reply["content"]["right"] == ids[0][3]
        assert reply["buffers"] and all(set(b) == {"$buffer"} for b in reply["buffers"])
        assert reply["content"]["data"]["chunks"]["rank_left"]["view"] == {"$ref": 0}
        # a metric's got-worse list, from the matrix the arguments name (read back, never run)
        worse = {"type": "worse", "key": "w", "metric": "context_recall"}
        args = {"dataset": str(evaluated["questions"]), "at": "snapshots"}
        (reply,) = client.post("/ui/api/model/history_matrix/msg", json={"args": args, "content": worse}).json()
        assert reply["content"] == {"type": "worse", "key": "w", "metric": "context_recall", "rows": []}
        (reply,) = client.post(
            "/ui/api/model/history_matrix/msg", json={"args": {"dataset": "/etc/passwd"}, "content": worse}
        ).json()
        assert reply["content"]["error"].startswith("ConfigError: history_matrix: dataset must be inside")  # says why
        bad = client.get("/ui/api/model/history_matrix?dataset=/no/such/file.jsonl")
        assert bad.status_code == 400 and "no/such/file.jsonl" in bad.json()["detail"]
        assert client.get("/ui/api/model/history_matrix").status_code == 422


def test_the_route_imports_no_notebook_stack(evaluated: dict[str, Any]) -> None:
    gets = [f"/ui/api/model/history_matrix?dataset={evaluated['questions']}"]
    assert notebook_modules_after(evaluated["path"], gets) == []


def test_the_page_links_the_bundle(evaluated: dict[str, Any]) -> None:
    with TestClient(create_app(evaluated["path"], embedder=ragtt.HashEmbedder())) as client:
        page = client.get("/ui").text
        assert '<link rel="stylesheet" href="/ui/static/history_matrix.css">' in page
        js = client.get("/ui/static/history_matrix.js")
        assert js.status_code == 200 and js.text.startswith("// Generated from js/src/history_matrix.js")
