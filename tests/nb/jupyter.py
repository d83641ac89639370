"""A real Jupyter server (``jupyter-lab`` or ``jupyter-server``) on 127.0.0.1 for a test,
stopped by its PID: the one way the tests start one."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

# Loads ragtt's server extension: the shared editable install has no config file for it.
WITH_RAGTT = "--ServerApp.jpserver_extensions={'ragtt_nb.server': True}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running(
    app: str,
    root: Path,
    state: Path,
    args: list[str],
    env: dict[str, str] | None = None,
    command: list[str] | None = None,
) -> Iterator[str]:
    """``app`` (``jupyter-lab``, ``jupyter-server``) serving ``root`` with ``args``, its config,
    runtime and log under ``state``; yields its URL once ``/api/status`` answers (the token, if
    any, in the query), and terminates it (its kernels shut down on SIGTERM). ``command`` starts
    it some other way than ``app`` beside this Python (another environment's ``python -m ...``)."""
    port = free_port()
    state.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(state / "config"),
        "JUPYTER_RUNTIME_DIR": str(state / "rt"),
        "RAGTT_EMBEDDER": "hash",
        **(env or {}),
    }
    logfile = state / f"{app}.log"
    token = next((a.split("=", 1)[1] for a in args if a.startswith("--IdentityProvider.token=")), "")
    with logfile.open("w") as log:
        proc = subprocess.Popen(
            [
                *(command or [str(Path(sys.executable).parent / app)]),
                "--no-browser",
                "--ip=127.0.0.1",
                f"--port={port}",
                "--allow-root",
                f"--ServerApp.root_dir={root}",
                *args,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 180  # a loaded 2-core CI can take minutes; still bounded
            while True:
                try:
                    urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
                    break
                except OSError:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        pytest.fail(f"{app} did not start:\n{logfile.read_text()[-3000:]}")
                    time.sleep(0.5)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
