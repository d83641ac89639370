from __future__ import annotations

import ast
import asyncio
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

import ragtt
from ragtt.serve import create_app

SCRIPT = "<script>alert('x')</script>"
TEXTS = {
    "refund-policy.md": "# Refunds\n\nRefunds are accepted within 30 days of purchase with a receipt.\n",
    "shipping.md": "# Shipping\n\nOrders ship within two business days. Express shipping costs extra.\n",
    f"evil{SCRIPT}.md": f"# Evil\n\n{SCRIPT} refunds are never accepted here.\n",
}


def call_every_verb(call: Callable[..., Any], home: Path) -> None:
    """Every verb once or more, on a small history (two versions, snapshots, runs), through
    ``call(verb, **values)``, a front end's way of calling it (files written under ``home``)."""
    call("ingest", texts=TEXTS)
    call("snapshot", label="first")
    call("snapshot", label="again-{version}", if_changed=True)  # unchanged: null
    call("ingest", texts={"refund-policy.md": "# Refunds\n\nRefunds are accepted within 60 days.\n"})
    call("snapshot", label="second")
    now = call("query", text="refunds", generate=True)["query_id"]
    call("replay", query_id=now)
    then = call("replay_as_of", text="refunds", at="first")["query_id"]
    call("diff", left=then, right=now)
    call("lineage", left=then, right=now)
    call("snapshot_diff", a="first", b="second")
    call("drift", a="first", b="second")
    call("bisect", query=now, predicate="source:refund-policy.md")
    call("compare_configs", texts=TEXTS, config_a={"retrieval_mode": "vector"}, config_b={}, queries=["refunds"])
    call("trace", query_id=now)
    call("events", type=["query.received"])
    call("snapshots")
    call("export_traces", query_id=now)
    call_federation_verbs(call, home)
    suite = home / "suite.json"
    call("regression_capture", queries=["refunds", "shipping"], name="golden", out=str(suite))
    call("regression_run", suite=str(suite))
    call("evaluate", dataset=str(suite), at=["first", "second"])
    call("evaluate", dataset=str(suite), at=["latest"], baseline="first", threshold=0.1)  # with its gate
    call("sync", texts={"faq.md": "# FAQ\n\nAsk us anything.\n"}, remove=["shipping.md"])
    call("verify")
    call("verify", deep=True)
    call("backup", dest=str(home / "backup"))
    call("restore", dest=str(home / "restored"))  # the project (as a backup would be) into a new folder
    call("prune", max_snapshots=1)


def call_federation_verbs(call: Callable[..., Any], home: Path) -> None:
    """The federation verbs over two member projects made here (a federation never writes to them)."""
    members = {}
    for name, texts in (("docs", TEXTS), ("tickets", {"ticket-1.md": f"# Ticket {SCRIPT}\n\nRefund refused.\n"})):
        with ragtt.Project.open(home / name, embedder=ragtt.HashEmbedder(), progress=False) as member:
            member.ingest_texts(texts)
            member.snapshot("first")
            members[name] = str(home / name)
    fed = str(home / "fed")
    call("federation_create", federation=fed, members=members, weights={"tickets": 2.0})
    first = call("federation_query", federation=fed, text="refunds", generate=True)["query_id"]
    again = call("federation_replay", federation=fed, query_id=first)
    assert again["matches_original"] is True
    call("federation_replay_as_of", federation=fed, text="refunds", at="first")
    call("federation_diff", federation=fed, left=first, right=again["query_id"])


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(tmp_path / "proj", embedder=ragtt.HashEmbedder())) as c:
        response = c.post("/ingest", json={"texts": TEXTS})
        assert response.status_code == 200, response.text
        yield c


@contextmanager
def live(app: FastAPI) -> Iterator[str]:
    """``app`` on a real uvicorn on 127.0.0.1 (a free port) in a thread; yields its base URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
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


def run_in_own_loop(session: Callable[[], Coroutine[Any, Any, None]], timeout: float, what: str) -> None:
    """``asyncio.run(session())`` on a thread of its own, bounded by ``timeout`` seconds; its
    exception is raised here. Its own loop: a notebook test earlier in the run may leave one
    running on this thread."""
    failures: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(session())
        except BaseException as exc:
            failures.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(timeout=timeout)
    assert not worker.is_alive(), f"{what} did not finish in {timeout:.0f} s"
    if failures:
        raise failures[0]


def notebook_modules_after(project: Path, gets: list[str]) -> list[str]:
    """The IPython / ipywidgets / anywidget / ragtt_nb modules a fresh process holds after ``create_app``
    on ``project`` answered each of ``gets`` (paths with their query, each asserted 200)."""
    code = (
        "import sys, ragtt\n"
        "from fastapi.testclient import TestClient\n"
        "from ragtt.serve import create_app\n"
        f"with TestClient(create_app({str(project)!r}, embedder=ragtt.HashEmbedder())) as c:\n"
        f"    for path in {gets!r}:\n"
        "        r = c.get(path)\n"
        "        assert r.status_code == 200, (path, r.text)\n"
        "stack = ('IPython', 'ipywidgets', 'anywidget', 'ragtt_nb')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in stack))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return list(ast.literal_eval(done.stdout.strip()))
