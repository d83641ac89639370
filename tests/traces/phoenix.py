"""A real Phoenix (arize-phoenix, in its own virtualenv: its pins are not ragtt's) on loopback.

``./dev test`` builds ``.venv-phoenix`` once; outside CI a test run builds it when it is
missing. Spans are read back through Phoenix's own client, run in that virtualenv.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

PHOENIX_VERSION = "20.26.1"  # the same pin as ./dev's phoenix_setup
REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 300.0  # a cold start on two busy cores takes about a minute

# Run inside the Phoenix virtualenv: import the client (seconds), read the server's URL and
# the expected span counts from stdin, wait (bounded) until each project holds that many
# spans, then print them as JSON.
_READER = """
import json, sys, time
from phoenix.client import Client

base_url, wanted = json.loads(sys.stdin.readline())
client = Client(base_url=base_url)


def spans(project):
    try:
        return client.spans.get_spans(project_identifier=project, limit=1000)
    except Exception:  # the project appears with its first span
        return []


found = {}
deadline = time.monotonic() + 120
for _ in range(600):
    found = {p: spans(p) for p in wanted}
    if all(len(found[p]) >= n for p, n in wanted.items()) or time.monotonic() > deadline:
        break
    time.sleep(0.2)
print(json.dumps(found, default=str))
"""


def phoenix_venv() -> Path:
    """The Phoenix virtualenv; under CI=true a missing one fails the test, never skips it."""
    venv = Path(os.environ.get("RAGTT_PHOENIX_VENV", REPO / ".venv-phoenix"))
    if (venv / "bin" / "phoenix").exists():
        return venv
    if os.environ.get("CI") == "true":
        pytest.fail(f"no Phoenix virtualenv at {venv}: ./dev test builds it (or set RAGTT_PHOENIX_VENV)")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    subprocess.run(
        [
            str(venv / "bin" / "pip"),
            "install",
            "-q",
            "--disable-pip-version-check",
            f"arize-phoenix=={PHOENIX_VERSION}",
        ],
        check=True,
        timeout=1200,
    )
    return venv


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/healthz", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@contextmanager
def phoenix_server(workdir: Path) -> Iterator[str]:
    """``phoenix serve`` on free loopback ports with its data in ``workdir``; yields its base URL."""
    venv = phoenix_venv()
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_WORKING_DIR": str(workdir),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    url = f"http://127.0.0.1:{port}"
    log = (workdir / "phoenix.log").open("wb")
    proc = subprocess.Popen([str(venv / "bin" / "phoenix"), "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        for _ in range(int(START_TIMEOUT_S * 2)):
            if proc.poll() is not None or _healthy(url) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        if not _healthy(url):
            tail = (workdir / "phoenix.log").read_text(errors="replace")[-2000:]
            pytest.fail(f"Phoenix did not come up on {url} (exit code {proc.poll()}):\n{tail}")
        yield url
    finally:
        proc.terminate()
        try:
            # its data is a throwaway folder: no need to wait out a graceful shutdown that
            # took the full 30 s on CI (uvicorn waits for its open connections)
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
        log.close()


@contextmanager
def span_reader() -> Iterator[Callable[[str, dict[str, int]], dict[str, list[dict[str, Any]]]]]:
    """``read(url, wanted)``: each Phoenix project's spans, read through ``phoenix.client``
    (waits for ``wanted`` counts). The reader starts here, so its import of the client (about
    12 s) runs while Phoenix starts."""
    python = phoenix_venv() / "bin" / "python"
    proc = subprocess.Popen(
        [str(python), "-c", _READER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def read(url: str, wanted: dict[str, int]) -> dict[str, list[dict[str, Any]]]:
        out, err = proc.communicate(json.dumps([url, wanted]) + "\n", timeout=600)
        assert proc.returncode == 0, err[-2000:]
        found: dict[str, list[dict[str, Any]]] = json.loads(out)
        return found

    try:
        yield read
    finally:
        if proc.poll() is None:  # never asked: the test failed before it read
            proc.kill()
            proc.communicate()
