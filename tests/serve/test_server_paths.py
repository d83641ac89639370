"""A path a remote caller names stays inside one folder of the server.

Over REST and MCP a backup's folder, a suite file to write or read, and files to ingest are
paths on the server: they must be inside the project's folder or the ``files_root`` the
server was started with. ``..``, an absolute path elsewhere and a symbolic link that leads
out are refused with one line before anything is written (``ragtt/server_paths.py``).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import ragtt
from ragtt.errors import ConfigError
from ragtt.serve import create_app
from ragtt.serve_mcp import create_server
from ragtt.server_paths import FILES_ROOT_ENV, confine_path, files_root
from tests.serve.conftest import TEXTS, run_in_own_loop


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """A project, a folder the server may write backups into, and one outside it with a link to it."""
    root = tmp_path / "backups"
    outside = tmp_path / "elsewhere"
    root.mkdir()
    outside.mkdir()
    (root / "out").symlink_to(outside, target_is_directory=True)
    with ragtt.Project.open(tmp_path / "proj", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest_texts(TEXTS)
    return {"project": tmp_path / "proj", "root": root, "outside": outside}


def _refused(layout: dict[str, Path]) -> list[str]:
    return [
        str(layout["outside"] / "b1"),  # absolute, elsewhere
        "../elsewhere/b2",  # climbs out
        "out/b3",  # a symbolic link out of the root
        "/etc/ragtt-backup",
    ]


def test_confine_path_resolves_inside_the_root_and_refuses_the_rest(layout: dict[str, Path]) -> None:
    root = files_root(layout["project"], layout["root"])
    assert confine_path("nightly", root, "dest") == str(root / "nightly")
    assert confine_path(str(root / "a" / ".." / "b"), root, "dest") == str(root / "b")
    for bad in _refused(layout):
        with pytest.raises(ConfigError, match="must be inside"):
            confine_path(bad, root, "dest")


def test_rest_backups_stay_in_the_files_root(layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FILES_ROOT_ENV, raising=False)
    app = create_app(layout["project"], embedder=ragtt.HashEmbedder(), files_root=layout["root"])
    with TestClient(app) as client:
        for bad in _refused(layout):
            response = client.post("/backup", json={"dest": bad})
            assert response.status_code == 400 and "must be inside" in response.json()["detail"], response.text
        ok = client.post("/backup", json={"dest": "nightly"})
        assert ok.status_code == 200, ok.text
        assert ok.json()["dest"] == str(layout["root"].resolve() / "nightly")
        for bad in _refused(layout):  # a restore's folder is a server path as a backup's is
            response = client.post("/restore", json={"dest": bad})
            assert response.status_code == 400 and "must be inside" in response.json()["detail"], response.text
        restored = client.post("/restore", json={"dest": "restored"})
        assert restored.status_code == 200 and restored.json()["dest"] == str(layout["root"].resolve() / "restored")
        # files to ingest are server paths too
        ingest = client.post("/ingest", json={"paths": ["/etc/hostname"]})
        assert ingest.status_code == 400 and "must be inside" in ingest.json()["detail"]
        federation = client.post(
            "/federation/create", json={"federation": "fed", "members": {"proj": str(layout["project"])}}
        )  # a member folder outside the root, named by its absolute path
        assert federation.status_code == 400 and "members 'proj'" in federation.json()["detail"], federation.text
        assert not (layout["root"] / "fed").exists()
    assert list(layout["outside"].iterdir()) == []
    with ragtt.Project.open(layout["root"] / "nightly", embedder=ragtt.HashEmbedder(), progress=False) as copy:
        assert copy.verify(deep=True).ok
    # without files_root (and no RAGTT_FILES_ROOT) the project's own folder is the root: a backup,
    # which must be outside the project, cannot be written by a remote caller at all
    with TestClient(create_app(layout["project"], embedder=ragtt.HashEmbedder())) as client:
        response = client.post("/backup", json={"dest": str(layout["root"] / "second")})
        assert response.status_code == 400 and not (layout["root"] / "second").exists()


def test_mcp_backups_stay_in_the_files_root(layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp import Client

    monkeypatch.setenv(FILES_ROOT_ENV, str(layout["root"]))  # the environment names the root here
    server, worker = create_server(layout["project"], embedder=ragtt.HashEmbedder())
    got: dict[str, Any] = {}

    async def session() -> None:
        async with asyncio.timeout(120), Client(server) as client:
            got["refused"] = [await client.call_tool("backup", {"dest": bad}) for bad in _refused(layout)]
            got["ok"] = await client.call_tool("backup", {"dest": "from-mcp"})

    try:
        run_in_own_loop(session, 180, "the MCP session")
    finally:
        worker.close()
    for result in got["refused"]:
        assert result.is_error and "must be inside" in result.content[0].text
    assert not got["ok"].is_error, got["ok"].content[0].text
    assert (layout["root"] / "from-mcp" / "ragtt.json").exists()
    assert os.listdir(layout["outside"]) == []
