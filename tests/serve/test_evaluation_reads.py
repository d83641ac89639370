"""The history matrix over servers: a GET of the dashboard's model only reads a matrix back
(evaluating is ``POST /evaluate``), and the question set a client names must lie in the
folders the server reads (the project folder, or ``$RAGTT_FILES_ROOT``), over REST, the
dashboard and MCP alike; the CLI reads the user's own paths."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from fastapi.testclient import TestClient
from mcp import Client

import ragtt
from ragtt.serve import create_app
from ragtt.serve_mcp import create_server
from ragtt.server_paths import FILES_ROOT_ENV
from tests.serve.conftest import TEXTS, run_in_own_loop

ROWS = [{"id": "refund", "question": "refund days", "reference_contexts": ["Refunds are accepted within 30 days"]}]


def _questions(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "questions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def _runs(client: TestClient) -> int:
    proj = client.app.state.projects.get()  # type: ignore[attr-defined]
    return int(proj.events.frame(types=["replay.query.received"]).height)


def test_a_get_of_the_matrix_model_evaluates_nothing(client: TestClient) -> None:
    proj_path = client.app.state.projects.get().path  # type: ignore[attr-defined]
    questions = _questions(proj_path)
    params = {"dataset": str(questions), "at": "latest"}
    before = client.get("/ui/api/model/history_matrix", params=params)
    assert before.status_code == 404 and "has not been evaluated" in before.json()["detail"]
    assert _runs(client) == 0  # the GET searched and logged nothing
    assert client.post("/evaluate", json={"dataset": str(questions), "at": ["latest"]}).status_code == 200
    assert _runs(client) == 1
    # one value where a list goes is that list of one (a client sends the "latest" it means)
    alone = client.post("/evaluate", json={"dataset": str(questions), "at": "latest"})
    assert alone.status_code == 200, alone.text
    assert alone.json()["reused_versions"] == 1 and _runs(client) == 1  # the same matrix, read back
    after = client.get("/ui/api/model/history_matrix", params=params)
    assert after.status_code == 200, after.text
    assert _runs(client) == 1  # read back, not evaluated again
    relative = client.get("/ui/api/model/history_matrix", params={**params, "dataset": "questions.jsonl"})
    assert relative.status_code == 200  # relative to the project folder


def test_a_dataset_outside_the_served_folders_is_refused(client: TestClient, tmp_path: Path) -> None:
    outside = _questions(tmp_path / "elsewhere")
    proj_path = client.app.state.projects.get().path  # type: ignore[attr-defined]
    (proj_path / "link.jsonl").symlink_to(outside)
    for dataset in (str(outside), str(proj_path / "link.jsonl"), "../elsewhere/questions.jsonl", "/etc/passwd"):
        posted = client.post("/evaluate", json={"dataset": dataset, "at": ["latest"]})
        assert posted.status_code == 400 and "must be inside" in posted.json()["detail"]
        got = client.get("/ui/api/model/history_matrix", params={"dataset": dataset})
        assert got.status_code == 400 and FILES_ROOT_ENV in got.json()["detail"]
    assert _runs(client) == 0
    with TestClient(create_app(proj_path, embedder=ragtt.HashEmbedder(), files_root=tmp_path)) as wider:
        assert wider.post("/evaluate", json={"dataset": str(outside), "at": ["latest"]}).status_code == 200
        got = wider.get("/ui/api/model/history_matrix", params={"dataset": str(outside), "at": "latest"})
        assert got.status_code == 200, got.text  # the GET reads where the server's POST may


def test_the_mcp_tool_confines_the_dataset(tmp_path: Path) -> None:
    path = tmp_path / "p"
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest_texts(TEXTS)
    inside, outside = _questions(path / "eval"), _questions(tmp_path / "elsewhere")
    server, worker = create_server(path, embedder=ragtt.HashEmbedder())
    got = []

    async def session() -> None:
        async with asyncio.timeout(60), Client(server) as client:
            for dataset in (str(outside), str(inside)):
                got.append(await client.call_tool("evaluate", {"dataset": dataset, "at": ["latest"]}))

    try:
        run_in_own_loop(session, 120, "the MCP session")
    finally:
        worker.close()
    refused, evaluated = got
    assert refused.is_error and "must be inside" in refused.content[0].text  # type: ignore[union-attr]
    assert not evaluated.is_error, evaluated.content
