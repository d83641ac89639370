"""A real uvicorn on 127.0.0.1, driven by httpx from many threads."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

import ragtt
from ragtt.serve import create_app
from tests.serve.conftest import TEXTS, live


@pytest.fixture
def base_url(tmp_path: Path) -> Iterator[str]:
    with live(create_app(tmp_path / "proj", embedder=ragtt.HashEmbedder())) as url:
        yield url


def test_live_server_query_replay_and_concurrent_clients(base_url: str) -> None:
    with httpx.Client(base_url=base_url, timeout=30) as c:
        assert c.get("/health").json()["status"] == "ok"
        assert c.post("/ingest", json={"texts": TEXTS}).status_code == 200
        first = c.post("/query", json={"text": "refund days", "generate": False}).json()
        assert c.post("/replay", json={"query_id": first["query_id"]}).json()["matches_original"] is True
        assert "/query" in c.get("/openapi.json").json()["paths"] and c.get("/docs").status_code == 200

    def reader(i: int) -> tuple[int, bool]:
        with httpx.Client(base_url=base_url, timeout=30) as c:
            q = c.post("/query", json={"text": f"shipping {i}", "generate": False})
            r = c.post("/replay", json={"query_id": q.json()["query_id"]})
            return q.status_code, r.json()["matches_original"]

    def writer(i: int) -> int:
        with httpx.Client(base_url=base_url, timeout=30) as c:
            return int(
                c.post("/ingest", json={"texts": {f"w{i}.md": f"writer {i} text"}}).json()["index_version_after"]
            )

    with ThreadPoolExecutor(8) as pool:  # 16 readers and 4 writers at once, bounded
        reads = [pool.submit(reader, i) for i in range(16)]
        writes = [pool.submit(writer, i) for i in range(4)]
        assert all(f.result(timeout=120) == (200, True) for f in reads)
        versions = [f.result(timeout=120) for f in writes]
    assert len(set(versions)) == 4  # one writer at a time: each ingest got its own version
    with httpx.Client(base_url=base_url, timeout=30) as c:
        assert c.get("/verify").json()["ok"] is True


def test_ragtt_serve_from_the_command_line(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ragtt.cli",
            "serve",
            "--project",
            str(tmp_path / "p"),
            "--embedder",
            "hash",
            "--port",
            str(port),
            "--token",
            "s3cret",
        ],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        stderr=log,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None and time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        auth = {"Authorization": "Bearer s3cret"}
        assert httpx.post(f"{url}/ingest", json={"texts": TEXTS}, timeout=30).status_code == 401
        assert httpx.post(f"{url}/ingest", json={"texts": TEXTS}, headers=auth, timeout=30).status_code == 200
        q = httpx.post(f"{url}/query", json={"text": "refund", "generate": False}, headers=auth, timeout=30).json()
        r = httpx.post(f"{url}/replay", json={"query_id": q["query_id"]}, headers=auth, timeout=30).json()
        assert r["matches_original"] is True
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
