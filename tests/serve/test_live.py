"""A real uvicorn on 127.0.0.1, driven by httpx from many threads."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import uvicorn

import ragtt
from ragtt.serve import create_app
from tests.serve.conftest import TEXTS


@pytest.fixture
def base_url(tmp_path: Path) -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(tmp_path / "proj", embedder=ragtt.HashEmbedder()),
                                           host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        assert not thread.is_alive()


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
            return int(c.post("/ingest", json={"texts": {f"w{i}.md": f"writer {i} text"}}).json()
                       ["index_version_after"])

    with ThreadPoolExecutor(8) as pool:  # 16 readers and 4 writers at once, bounded
        reads = [pool.submit(reader, i) for i in range(16)]
        writes = [pool.submit(writer, i) for i in range(4)]
        assert all(f.result(timeout=120) == (200, True) for f in reads)
        versions = [f.result(timeout=120) for f in writes]
    assert len(set(versions)) == 4  # one writer at a time: each ingest got its own version
    with httpx.Client(base_url=base_url, timeout=30) as c:
        assert c.get("/verify").json()["ok"] is True
