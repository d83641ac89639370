from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient

import ragtt
from ragtt.cli import main
from ragtt.errors import ConfigError
from ragtt.serve import check_host, create_app
from tests.serve.conftest import SCRIPT, TEXTS


def test_query_then_replay_matches_and_as_of_sees_the_past(client: TestClient) -> None:
    first = client.post("/query", json={"text": "refund days", "top_k": 2, "generate": False}).json()
    assert first["chunks"][0]["source"] == "refund-policy.md" and len(first["chunks"]) == 2
    assert client.post("/snapshot", json={"label": "r1"}).json()["label"] == "r1"
    updated = client.post("/ingest", json={"texts": {"refund-policy.md": "Refunds within 14 days only."}})
    assert updated.json()["documents_updated"] == ["refund-policy.md"]
    replay = client.post("/replay", json={"query_id": first["query_id"]}).json()
    assert replay["matches_original"] is True and replay["index_version"] == first["index_version"]
    as_of = client.post("/replay/as-of", json={"text": "refund days", "at": "r1", "top_k": 2}).json()
    assert as_of["index_version"] == first["index_version"]
    assert [c["chunk_id"] for c in as_of["chunks"]] == [c["chunk_id"] for c in first["chunks"]]
    trace = client.get(f"/query/{first['query_id']}").json()
    assert {row["query_id"] for row in trace} == {first["query_id"]} and len(trace) >= 2
    now = client.post("/query", json={"text": "refund days", "generate": False}).json()
    assert now["index_version"] > first["index_version"]  # no worker thread reads a stale index
    assert any("14 days" in c["text"] for c in now["chunks"])
    diff = client.post("/diff", json={"left": first["query_id"], "right": now["query_id"]}).json()
    assert diff == client.post("/diff", json={"left": first["query_id"], "right": now["query_id"]}).json()
    assert "rbo" in str(diff).lower()
    lineage = client.get(f"/lineage/{first['query_id']}/{now['query_id']}")
    assert lineage.status_code == 200, lineage.text
    changed = client.get(f"/snapshots/r1/{now['index_version']}/diff").json()
    assert "refund-policy.md" in str(changed)
    drift = client.get(f"/drift/r1/{now['index_version']}", params={"threshold": 0.5})
    assert drift.status_code == 200, drift.text
    assert [s["label"] for s in client.get("/snapshots").json()] == ["r1"]
    assert client.get("/verify").json()["ok"] is True


def test_bad_bodies_are_422_naming_the_field(client: TestClient) -> None:
    def fields(response: object) -> list[str]:
        assert response.status_code == 422, response.text  # type: ignore[attr-defined]
        return [err["loc"][-1] for err in response.json()["detail"]]  # type: ignore[attr-defined]

    assert fields(client.post("/query", json={})) == ["text"]
    assert fields(client.post("/query", json={"text": "x", "top_k": 0})) == ["top_k"]
    assert fields(client.post("/query", json={"text": "x", "mode": "fuzzy"})) == ["mode"]
    assert fields(client.post("/query", json={"text": "x", "topk": 3})) == ["topk"]
    assert fields(client.post("/replay", json={"queryid": "x"})) == ["query_id", "queryid"]
    assert fields(client.get("/drift/1/1", params={"threshold": 2})) == ["threshold"]


def test_missing_ids_are_404_with_the_cli_message(
    client: TestClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    response = client.post("/replay", json={"query_id": "nope"})
    assert response.status_code == 404
    assert main(["replay", "--query-id", "nope", "--project", str(tmp_path / "proj"), "--embedder", "hash"]) == 2
    assert capsys.readouterr().err.strip() == f"ragtt replay: {response.json()['detail']}"
    assert client.get("/query/nope").status_code == 404
    assert client.get("/snapshots/nolabel/1/diff").status_code == 404
    assert client.post("/snapshot", json={"label": "has space"}).status_code == 400


def test_events_as_json_arrow_and_parquet(client: TestClient) -> None:
    rows = client.get("/events", params={"type": "ingest.completed"}).json()
    assert rows and {r["type"] for r in rows} == {"ingest.completed"}
    every = client.get("/events").json()
    middle = every[len(every) // 2]["ts"]
    later = client.get("/events", params={"since": middle}).json()
    assert 0 < len(later) < len(every) and all(r["ts"] >= middle for r in later)
    assert client.get("/events", params={"until": "2000-01-01T00:00:00"}).json() == []
    assert client.get("/events", params={"since": "yesterday"}).status_code == 422
    arrow = client.get("/events", headers={"Accept": "application/vnd.apache.arrow.stream"})
    assert arrow.headers["content-type"] == "application/vnd.apache.arrow.stream"
    assert pa.ipc.open_stream(arrow.content).read_all().num_rows == len(every)
    parquet = client.get("/events", headers={"Accept": "application/vnd.apache.parquet"})
    assert pq.read_table(io.BytesIO(parquet.content)).num_rows == len(every)


def test_regression_capture_then_run(client: TestClient, tmp_path: Path) -> None:
    out = tmp_path / "proj" / "golden.json"  # a server writes files only inside the project's folder
    suite = client.post(
        "/regression/capture", json={"queries": ["refund days", "shipping"], "name": SCRIPT, "out": "golden.json"}
    ).json()
    assert suite["name"] == SCRIPT and out.exists()
    report = client.post("/regression/run", json={"suite": str(out)}).json()
    assert report["exit_code"] == 0 and report["suite"] == SCRIPT
    by_chunks = client.post("/regression/run", json={"suite": str(out), "match": "chunks"}).json()
    assert by_chunks["exit_code"] == 0 and by_chunks["match"] == "chunks"
    before = client.post("/snapshot", json={"label": "before"}).json()["index_version"]
    client.post("/ingest", json={"texts": {"shipping.md": "Nothing ships any more."}})
    past = client.post("/regression/capture", json={"queries": ["shipping"], "name": "old", "at": "before"}).json()
    assert past["index_version"] == before < client.post("/query", json={"text": "x"}).json()["index_version"]


def test_script_payloads_stay_data(client: TestClient) -> None:
    left = client.post("/query", json={"text": SCRIPT + " refunds", "generate": False})
    assert left.headers["content-type"] == "application/json" and left.headers["x-content-type-options"] == "nosniff"
    assert left.json()["text"] == SCRIPT + " refunds"
    assert any(SCRIPT in c["text"] and SCRIPT in c["source"] for c in left.json()["chunks"])
    right = client.post("/query", json={"text": "refunds", "generate": False}).json()
    html = client.get(f"/diff/{left.json()['query_id']}/{right['query_id']}/html")
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert "script-src" not in html.headers["content-security-policy"]  # default-src 'none' blocks script
    assert "<script>alert" not in html.text and "&lt;script&gt;" in html.text


def test_token_guards_every_verb_but_health(tmp_path: Path) -> None:
    with TestClient(create_app(tmp_path / "p", token="s3cret", embedder=ragtt.HashEmbedder())) as c:
        assert c.get("/health").status_code == 200
        assert c.post("/ingest", json={"texts": TEXTS}).status_code == 401
        assert c.get("/snapshots", headers={"Authorization": "Bearer wrong"}).status_code == 401
        ok = c.post("/ingest", json={"texts": TEXTS}, headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200 and ok.json()["documents_added"]


def test_non_loopback_needs_a_token(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    check_host("127.0.0.1", None)
    check_host("::1", None)
    check_host("localhost", None)
    check_host("0.0.0.0", "t")
    for host in ("0.0.0.0", "192.168.1.5", "example.com"):
        with pytest.raises(ConfigError, match="--token"):
            check_host(host, None)
    assert main(["serve", "--project", str(tmp_path / "p"), "--host", "0.0.0.0"]) == 2
    assert "--token" in capsys.readouterr().err


def test_the_worker_pool_is_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import anyio.to_thread

    from ragtt.serve.app import default_threads

    def bound(c: TestClient) -> int:  # the limiter FastAPI runs sync endpoints under, in the app's loop
        return int(c.portal.call(anyio.to_thread.current_default_thread_limiter).total_tokens)  # type: ignore[union-attr]

    with TestClient(create_app(tmp_path / "p", embedder=ragtt.HashEmbedder(), threads=3)) as c:
        assert bound(c) == 3
        assert c.post("/ingest", json={"texts": TEXTS}).status_code == 200
    with TestClient(create_app(tmp_path / "p", embedder=ragtt.HashEmbedder())) as c:
        assert bound(c) == default_threads() and 4 <= default_threads() <= 32
        assert c.get("/snapshots").status_code == 200
    with pytest.raises(ConfigError, match="at least one worker thread"):
        create_app(tmp_path / "p", threads=0)
    assert main(["serve", "--project", str(tmp_path / "p"), "--threads", "0"]) == 2
    assert "at least one worker thread" in capsys.readouterr().err


def test_a_reembed_elsewhere_is_picked_up_by_the_server(tmp_path: Path) -> None:
    path = tmp_path / "p"
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest_texts(TEXTS)
    with TestClient(create_app(path)) as c:  # the project's own embedder, loaded by the server
        before = c.post("/query", json={"text": "refund window", "generate": False})
        assert before.status_code == 200
        with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as other:
            other.reembed(ragtt.HashEmbedder(128))  # a CI job, say, while the server runs
        after = c.post("/query", json={"text": "refund window", "generate": False})
        assert after.status_code == 200, after.text
        events = c.get("/events", params={"query_id": after.json()["query_id"]}).json()
        plans = [json.loads(e["payload"])["plan"] for e in events if e["type"] == "retrieval.executed"]
        assert [p["embedder_dim"] for p in plans] == [128]
    with TestClient(create_app(path, embedder=ragtt.HashEmbedder())) as c:  # told to use the old one
        refused = c.post("/query", json={"text": "refund window", "generate": False})
        assert refused.status_code == 400 and "128" in refused.json()["detail"]


def test_a_missing_project_is_404_and_not_created(tmp_path: Path) -> None:
    with TestClient(create_app(tmp_path / "none", embedder=ragtt.HashEmbedder())) as c:
        assert c.get("/snapshots").status_code == 404
    assert not (tmp_path / "none").exists()


def test_rest_and_mcp_take_the_same_argument_names(client: TestClient) -> None:
    from ragtt.verbs import VERBS
    from ragtt.verbs.schema import body_model

    spec = client.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    for verb in VERBS.values():
        assert verb.route is not None
        method, path = verb.route
        operation = spec["paths"][path][method.lower()]
        if method == "POST":
            ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            rest = set(schemas[ref.rsplit("/", 1)[1]]["properties"])
        else:
            rest = {p["name"] for p in operation.get("parameters", []) if p["in"] in ("path", "query")}
        assert rest == set(body_model(verb, "mcp").model_fields), verb.name


def test_compare_configs_is_a_route(client: TestClient) -> None:
    body = {
        "texts": TEXTS,
        "config_a": {"retrieval_mode": "vector"},
        "config_b": {"retrieval_mode": "bm25"},
        "queries": ["refund days", "express shipping"],
    }
    response = client.post("/compare-configs", json=body)
    assert response.status_code == 200, response.text
    found = response.json()
    assert [q["text"] for q in found["queries"]] == body["queries"]
    assert found["config_a"]["retrieval_mode"] == "vector" and found["config_b"]["retrieval_mode"] == "bm25"
    assert all(0.0 <= q["overlap_at_k"] <= 1.0 for q in found["queries"])
    unknown = client.post("/compare-configs", json={**body, "config_b": {"retrieval_mod": "bm25"}})
    assert unknown.status_code == 400 and "retrieval_mod" in unknown.json()["detail"]
    one = client.post("/compare-configs", json={**body, "queries": "refund"})  # one query: a list of one
    assert one.status_code == 200 and [q["text"] for q in one.json()["queries"]] == ["refund"], one.text
    assert client.post("/compare-configs", json={**body, "queries": {"text": "refund"}}).status_code == 422
    both = client.post("/compare-configs", json={**body, "corpus": ["docs/"]})
    assert both.status_code == 400 and "not both" in both.json()["detail"]


def test_prune_over_rest_keeps_what_it_is_told_and_says_what_went(client: TestClient) -> None:
    old = client.post("/query", json={"text": "refund days", "generate": False}).json()
    kept = client.post("/query", json={"text": "shipping", "generate": False}).json()
    client.post("/snapshot", json={"label": "r1"})
    client.post("/ingest", json={"texts": {"refund-policy.md": "Refunds within 14 days only."}})
    client.post("/snapshot", json={"label": "r2"})
    assert client.post("/prune", json={"max_snapshots": 1, "max_age": "thirty"}).status_code == 400
    report = client.post("/prune", json={"max_snapshots": 1, "keep": [kept["query_id"]]})
    assert report.status_code == 200, report.text
    assert report.json()["snapshots_dropped"] == ["r1"] and report.json()["queries_pruned"] == 1
    gone = client.post("/replay", json={"query_id": old["query_id"]})
    assert gone.status_code == 404 and "was pruned on" in gone.text
    assert client.post("/replay", json={"query_id": kept["query_id"]}).json()["matches_original"] is True
    assert client.get("/verify").json()["ok"] is True
