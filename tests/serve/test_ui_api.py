"""``/ui/api``: the widgets' state over REST is the notebook widgets' own state; bad requests
are named; the dashboard serves only its own files; the page's CSP allows only the server."""

from __future__ import annotations

import base64
from typing import Any

from fastapi.testclient import TestClient

from ragtt.serve.ui import UI_CSP, wire
from ragtt_nb import ChunkDiff, Timeline
from tests.serve.conftest import SCRIPT


def _asked(client: TestClient, text: str) -> str:
    response = client.post("/query", json={"text": text, "generate": False})
    assert response.status_code == 200, response.text
    return str(response.json()["query_id"])


def test_state_over_rest_is_the_widgets_state(client: TestClient) -> None:
    then = _asked(client, f"refund days {SCRIPT}")
    client.post("/ingest", json={"texts": {"refund-policy.md": "# Refunds\n\nRefunds within 14 days only.\n"}})
    now = _asked(client, f"refund days {SCRIPT}")
    proj = client.app.state.projects.get()  # type: ignore[attr-defined]
    got = client.get("/ui/api/model/chunk_diff", params={"left": then, "right": now}).json()
    assert got["_data"] == wire(ChunkDiff(proj, then, now).get_state("_data")["_data"])
    assert got["_data"]["left"]["query"] == f"refund days {SCRIPT}"  # JSON text, escaped by the DOM, not here
    timeline = client.get("/ui/api/model/timeline", params={"query_id": now}).json()
    widget = Timeline(proj, query_id=now)
    assert timeline["version"] == widget.version and timeline["axis"] == "auto"
    buffer = timeline["_data"]["versions"]["version"]
    assert buffer["dtype"] == "int32" and len(base64.b64decode(buffer["view"]["$buffer"])) == 4 * len(widget.versions)


def test_lists_feed_the_pickers(client: TestClient) -> None:
    first = _asked(client, "refund days")
    _asked(client, "shipping costs")
    client.post("/snapshot", json={"label": "v-one"})
    found = client.get("/ui/api/queries", params={"search": "REFUND"}).json()
    assert [q["query_id"] for q in found] == [first]
    assert [q["text"] for q in client.get("/ui/api/queries").json()] == ["shipping costs", "refund days"]
    versions = client.get("/ui/api/versions").json()
    assert versions[-1]["label"] == "v-one" and all(v["label"] is None for v in versions[:-1])
    sources = client.get("/ui/api/sources").json()
    assert {s["source"] for s in sources} >= {"refund-policy.md", "shipping.md"} and not any(s["pdf"] for s in sources)


def test_bad_requests_say_what_is_wrong(client: TestClient) -> None:
    assert client.get("/ui/api/model/chunk_diff", params={"left": "x"}).json()["detail"] == (
        "chunk_diff needs the query parameter 'right'"
    )
    assert client.get("/ui/api/model/sankey").status_code == 404
    missing = client.get("/ui/api/model/timeline", params={"query_id": "0" * 32})
    assert missing.status_code == 404
    no_pdf = client.get("/ui/api/model/pdf_overlay", params={"source": "shipping.md"})
    assert no_pdf.status_code == 400 and "no file path" in no_pdf.json()["detail"]
    assert client.post("/ui/api/model/pdf_overlay/msg", json={"args": {}, "content": {}, "extra": 1}).status_code == 422
    assert client.post("/ui/api/model/timeline/msg", json={"args": {}, "content": {"type": "x"}}).json() == []


def test_only_the_dashboards_own_files_are_served(client: TestClient) -> None:
    page = client.get("/ui")
    assert page.headers["content-security-policy"] == UI_CSP
    assert "'unsafe-inline'" not in UI_CSP and "script-src 'self';" in UI_CSP
    for name in ("timeline.js", "pdf_overlay.css", "dashboard.js"):
        assert client.get(f"/ui/static/{name}").status_code == 200, name
    for name in ("build.mjs", "..%2Fpyproject.toml", "src%2Fdom.js"):
        assert client.get(f"/ui/static/{name}").status_code == 404, name


def test_the_ui_api_is_guarded_by_the_token(tmp_path: Any) -> None:
    import ragtt
    from ragtt.serve import create_app

    with TestClient(create_app(tmp_path / "p", embedder=ragtt.HashEmbedder(), token="t0k")) as c:
        assert c.get("/ui").status_code == 200 and c.get("/ui/static/dashboard.js").status_code == 200
        assert c.get("/ui/api/queries").status_code == 401
        bearer = {"Authorization": "Bearer t0k"}
        assert c.post("/ingest", json={"texts": {"a.md": "Refunds."}}, headers=bearer).status_code == 200
        assert c.get("/ui/api/queries", headers=bearer).json() == []


def test_evaluation_cells_do_not_flood_the_list(client: TestClient) -> None:
    """An evaluation's cells are replays logged with purpose "evaluation": the list of logged
    queries is of the questions people asked."""
    asked = _asked(client, "refund days")
    proj = client.app.state.projects.get()  # type: ignore[attr-defined]
    proj.evaluate(
        [{"id": "refund", "question": "refund days", "reference_contexts": ["Refunds within 30 days."]}], at="latest"
    )
    assert [q["query_id"] for q in client.get("/ui/api/queries").json()] == [asked]


def test_a_replay_is_listed_under_the_run_it_replays(client: TestClient) -> None:
    """A replay (of a run, or its question asked of the past, as "Diff with now" does) is not a
    question of its own: it is listed in the replays of the run it belongs to, newest first. A
    question asked of the past that nobody asked live is a row, of kind replay."""
    first = _asked(client, "refund days")
    again = client.post("/replay", json={"query_id": first, "generate": False}).json()["query_id"]
    now = client.post("/replay/as-of", json={"text": "Refund  days", "at": 2, "generate": False}).json()
    assert "query_id" in now, now
    later = _asked(client, "shipping costs")
    past = client.post("/replay/as-of", json={"text": "gift cards", "at": 1, "generate": False}).json()["query_id"]
    listed = client.get("/ui/api/queries").json()
    assert [(q["query_id"], q["kind"]) for q in listed] == [(past, "replay"), (later, "live"), (first, "live")]
    assert [(r["query_id"], r["kind"]) for r in listed[2]["replays"]] == [
        (now["query_id"], "replay"),
        (again, "replay"),
    ]
    assert listed[2]["replays"][1]["original_query_id"] == first and listed[1]["replays"] == []
    assert [q["query_id"] for q in client.get("/ui/api/queries", params={"search": "refund"}).json()] == [first]
