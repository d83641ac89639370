"""The Jupyter server extension (``ragtt_nb.server``) on a real ``jupyter-server`` with a real
token and ``allow_unauthenticated_access=False``: every route refuses a request without
credentials (403) and answers one with them; every verb answers as through ``ragtt serve``
(the same JSON for the same call); paths out of the root are refused; read-only holds."""

from __future__ import annotations

import http.client
import json
import secrets
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

import ragtt
from ragtt.serve import create_app
from ragtt.verbs import VERBS
from ragtt.verbs.model import MODES
from tests.conftest import flask_releases
from tests.serve.conftest import call_every_verb

from .jupyter import WITH_RAGTT, running

TOKEN = secrets.token_hex(16)
PROJECT = "team/flask"


def build_flask(path: Path, releases: int = 3) -> dict[str, str]:
    """A project holding ``releases`` Flask releases, a snapshot each, a query after the first
    and after the last; returns the two query ids."""
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False, create=True) as proj:
        ids = {}
        for number, release in enumerate(flask_releases()[:releases]):
            proj.ingest(release)
            proj.snapshot(release.name.split("_", 1)[1])
            if number in (0, releases - 1):
                ids["then" if number == 0 else "now"] = proj.query("how do I register a blueprint").query_id
        return ids


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("served")
    root = home / "root"
    ids = build_flask(root / PROJECT)
    with ragtt.Project.open(root / "other", embedder=ragtt.HashEmbedder(), progress=False, create=True) as other:
        other.ingest_texts({"a.md": "# Other\n\nAnother project.\n"})
    with ragtt.Project.open(home / "outside", embedder=ragtt.HashEmbedder(), progress=False, create=True) as out:
        out.ingest_texts({"secret.md": "# Secret\n\nOutside the root.\n"})
    (root / "escape").symlink_to(home / "outside", target_is_directory=True)
    with ragtt.Project.open(root / "a/b/c/d/e/deep", embedder=ragtt.HashEmbedder(), progress=False, create=True) as d:
        d.ingest_texts({"d.md": "# Deep\n\nFar down.\n"})
    args = [
        f"--IdentityProvider.token={TOKEN}",
        "--ServerApp.allow_unauthenticated_access=False",
        WITH_RAGTT,
        "--RagttExtension.projects=a/b/c/d/e/deep",  # deeper than the search goes
        "--RagttExtension.projects=gone",
        f"--RagttExtension.files_root={home}",  # the verbs' path arguments (backups, federations) live here
    ]
    with running("jupyter-server", root, home / "state", args) as url:
        yield {"url": url, "root": root, "home": home, **ids}


def api(served: dict[str, Any], path: str) -> str:
    return f"{served['url']}/ragtt/api/{path}"


AUTH = {"Authorization": f"token {TOKEN}"}


def every_route(served: dict[str, Any]) -> list[tuple[str, str]]:
    """(method, URL) of every route the extension serves, on the Flask project."""
    values = {"query_id": served["now"], "left": served["then"], "right": served["now"], "a": "1", "b": "2"}
    one = api(served, f"projects/{PROJECT}")
    found = [("GET", api(served, "projects"))]
    found += [("GET", f"{one}/ui/{what}") for what in ("queries", "versions", "sources")]
    found += [("GET", f"{one}/ui/model/timeline?query_id={served['now']}"), ("POST", f"{one}/ui/model/timeline/msg")]
    for verb in VERBS.values():
        for method, route in ([verb.route] if verb.route else []) + (
            [("GET", verb.html_route)] if verb.html_route else []
        ):
            found.append((method, one + route.format(**values)))
    return found


def test_every_route_refuses_a_request_without_credentials(served: dict[str, Any]) -> None:
    routes = every_route(served)
    assert len(routes) >= len(VERBS) + 6
    with httpx.Client(timeout=60) as client:
        for method, url in routes:
            for headers in ({}, {"Authorization": "token wrong"}):
                response = client.request(method, url, headers=headers, json={} if method == "POST" else None)
                assert response.status_code == 403, (method, url, headers, response.text[:200])
            assert TOKEN not in response.text


def test_every_verb_answers_with_credentials(served: dict[str, Any]) -> None:
    found: dict[str, int] = {}
    with httpx.Client(timeout=120, headers=AUTH) as client:

        def call(verb: str, **values: Any) -> Any:
            method, path = VERBS[verb].route or ("", "")
            path = path.format(**{k: values.pop(k) for k in list(values) if "{" + k + "}" in path})
            url = api(served, f"projects/scratch{path}")
            response = client.post(url, json=values) if method == "POST" else client.get(url, params=values)
            assert response.status_code == 200, (verb, response.text)
            found[verb] = found.get(verb, 0) + 1
            return response.json()

        call_every_verb(call, served["home"])
        assert set(found) == set(VERBS)
        for method, url in every_route(served):  # the Flask project's routes, as the 403 test asks them
            body = {"args": {}, "content": {}} if url.endswith("/msg") else None
            if method == "GET":
                assert client.get(url).status_code == 200, url
            elif body is not None:
                assert client.post(url, json=body).status_code == 200, url


def test_a_verb_answers_as_through_ragtt_serve(served: dict[str, Any]) -> None:
    then, now = served["then"], served["now"]
    calls = [
        ("GET", "/snapshots", None),
        ("GET", f"/query/{now}", None),
        ("GET", f"/lineage/{then}/{now}", None),
        ("GET", "/snapshots/flask-0.10/flask-0.12/diff", None),
        ("GET", "/events", {"type": ["query.received", "ingest.completed"]}),
        ("POST", "/diff", {"left": then, "right": now}),
        ("GET", f"/query/{'0' * 32}", None),  # an error answers the same too (404)
        ("POST", "/diff", {"left": then, "rigth": now}),  # and a misspelt field (422)
    ]
    with (
        TestClient(create_app(served["root"] / PROJECT, embedder=ragtt.HashEmbedder())) as rest,
        httpx.Client(timeout=60, headers=AUTH) as jupyter,
    ):
        for method, path, values in calls:
            ours = jupyter.request(
                method,
                api(served, f"projects/{PROJECT}{path}"),
                params=values if method == "GET" else None,
                json=values if method == "POST" else None,
            )
            theirs = rest.request(
                method, path, params=values if method == "GET" else None, json=values if method == "POST" else None
            )
            assert ours.status_code == theirs.status_code, (path, ours.text, theirs.text)
            if ours.status_code == 422:  # pydantic's complaint, naming the field, in both
                assert "rigth" in ours.text and "rigth" in theirs.text
            else:
                assert ours.json() == theirs.json(), path


def raw_get(served: dict[str, Any], path: str) -> tuple[int, str]:
    """A GET whose path is sent as written (no client folds '../' away)."""
    host = urllib.parse.urlsplit(served["url"]).netloc
    conn = http.client.HTTPConnection(host, timeout=30)
    try:
        conn.request("GET", f"/ragtt/api/{path}", headers=AUTH)
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def test_paths_out_of_the_root_are_refused(served: dict[str, Any]) -> None:
    for path in (
        "projects/../outside/snapshots",
        "projects/team/../../outside/snapshots",
        "projects/team%2F..%2F..%2Foutside/snapshots",
        "projects/%2Fetc/snapshots",
        "projects/escape/snapshots",  # a symlink to a project outside the root
        "projects/escape/ui/queries",
    ):
        status, text = raw_get(served, path)
        assert status in (403, 404) and "Secret" not in text, (path, status, text)
        if "escape" in path or "%2F" in path:
            assert status == 403 and json.loads(text)["error"] == "OutsideRootError", (path, text)
    status, text = raw_get(served, "projects/nowhere/snapshots")
    assert status == 404 and json.loads(text)["error"] == "NotAProjectError"


def test_the_project_list(served: dict[str, Any]) -> None:
    with httpx.Client(timeout=60, headers=AUTH) as client:
        listing = client.get(api(served, "projects")).json()
        # found under the root (the deep one only because settings name it); never the symlink
        assert listing["projects"].index("other") < listing["projects"].index(PROJECT)  # breadth first
        assert "a/b/c/d/e/deep" in listing["projects"] and "escape" not in listing["projects"]
        assert "gone" not in listing["projects"] and listing["read_only"] is False
        kernel_dir = str(served["root"] / PROJECT)
        assert client.get(api(served, "projects"), params={"locate": kernel_dir}).json()["located"] == PROJECT
        assert client.get(api(served, "projects"), params={"locate": "/etc"}).json()["located"] is None


def test_paged_queries_carry_mode_and_answer(served: dict[str, Any]) -> None:
    with httpx.Client(timeout=60, headers=AUTH) as client:
        url = api(served, f"projects/{PROJECT}/ui/queries")
        page = client.get(url, params={"limit": 1, "offset": 1}).json()
        assert page["total"] == 2 and [q["query_id"] for q in page["queries"]] == [served["then"]]
        newest = client.get(url, params={"limit": 1}).json()["queries"][0]
        assert newest["query_id"] == served["now"] and newest["mode"] in MODES
        # the preview is what the answer says; an extractive one is marked, not labelled in the text
        assert newest["extractive"] is True and newest["answer"], newest
        assert not newest["answer"].startswith("[extractive answer")
        too_many = client.get(url, params={"limit": 501})
        assert too_many.status_code == 400 and "from 1 to 500" in too_many.json()["detail"]
        versions = client.get(api(served, f"projects/{PROJECT}/ui/versions")).json()
        labelled = [v for v in versions if v["label"]]
        assert [v["label"] for v in labelled] == ["flask-0.10", "flask-0.11", "flask-0.12"]
        assert all(v["changed"]["documents"] for v in versions if v["operation"] == "ingest")


def test_read_only_refuses_every_verb_that_declares_it_writes(served: dict[str, Any]) -> None:
    """Every verb of the table, both ways of asking for read-only: refused exactly when its
    declaration (``Verb.writes``, checked against real calls in tests/core) says it writes."""
    values = {"query_id": served["now"], "left": served["then"], "right": served["now"], "a": "1", "b": "2"}
    one = api(served, f"projects/{PROJECT}")
    before = httpx.get(f"{one}/events", headers=AUTH, timeout=60).json()
    refused: dict[str, bool] = {}
    with httpx.Client(timeout=120, headers={**AUTH, "X-Ragtt-Read-Only": "1"}) as client:
        for verb in VERBS.values():
            assert verb.route is not None, verb.name
            method, route = verb.route
            response = client.request(method, one + route.format(**values), json={} if method == "POST" else None)
            refused[verb.name] = response.status_code == 403 and response.json().get("error") == "ReadOnly"
        for widget, query in (("chunk_diff", f"left={served['then']}&right={served['now']}"),):
            assert client.get(f"{one}/ui/model/{widget}?{query}").status_code == 200
    assert refused == {name: verb.writes for name, verb in VERBS.items()}
    assert {"evaluate", "backup", "regression_capture", "query", "ingest"} <= {n for n, r in refused.items() if r}
    assert httpx.get(f"{one}/events", headers=AUTH, timeout=60).json() == before  # nothing was logged


def test_read_only(served: dict[str, Any], tmp_path: Path) -> None:
    with httpx.Client(timeout=60, headers={**AUTH, "X-Ragtt-Read-Only": "1"}) as client:
        refused = client.post(api(served, f"projects/{PROJECT}/snapshot"), json={"label": "nope"})
        assert refused.status_code == 403 and "readOnly" in refused.json()["detail"]
        assert client.get(api(served, f"projects/{PROJECT}/snapshots")).status_code == 200
    args = [f"--IdentityProvider.token={TOKEN}", WITH_RAGTT, "--RagttExtension.read_only=True"]
    with (
        running("jupyter-server", served["root"], tmp_path / "state", args) as url,
        httpx.Client(timeout=60, headers=AUTH) as client,
    ):
        one = f"{url}/ragtt/api/projects/{PROJECT}"
        refused = client.post(f"{one}/ingest", json={"texts": {"x.md": "# X\n\nx.\n"}})
        assert refused.status_code == 403 and refused.json()["error"] == "ReadOnly"
        assert client.post(f"{one}/prune", json={"max_snapshots": 1}).status_code == 403
        assert client.get(f"{one}/snapshots").status_code == 200
        assert client.get(f"{url}/ragtt/api/projects").json()["read_only"] is True
