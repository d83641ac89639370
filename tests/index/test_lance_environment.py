"""No process-wide side effects from using ragtt as a library; the tuning (Lance's logs and read
sizes, the arena cap) is applied by ``ragtt.tune_process()``, which the CLI and servers call.
Each case runs in a fresh process: what Lance reads from the environment it reads once."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NAMES = ("RUST_LOG", "LANCE_DEFAULT_BATCH_SIZE", "LANCE_DEFAULT_IO_BUFFER_SIZE", "TOKENIZERS_PARALLELISM")
TUNED = {
    "RUST_LOG": "error",
    "LANCE_DEFAULT_BATCH_SIZE": "1024",
    "LANCE_DEFAULT_IO_BUFFER_SIZE": str(32 << 20),
    "TOKENIZERS_PARALLELISM": "false",
}

# Watches the C library handle ragtt's allocator tuning goes through (ctypes.CDLL(None)).
WATCH = """
import ctypes, json, os, sys
mallopt_calls = []
_CDLL = ctypes.CDLL
class _Watched:
    def __init__(self, lib): self._lib = lib
    def __getattr__(self, name):
        if name == "mallopt": mallopt_calls.append(name)
        return getattr(self._lib, name)
def _cdll(name, *args, **kwargs):
    lib = _CDLL(name, *args, **kwargs)
    return _Watched(lib) if name is None else lib
ctypes.CDLL = _cdll
"""

LIBRARY = (
    WATCH
    + """
before = dict(os.environ)
import ragtt
with ragtt.Project.open(sys.argv[1], embedder=ragtt.HashEmbedder(), progress=False) as proj:
    texts = {"a.txt": "shock waves on a cone", "b.md": "# Cones\\n\\nBoundary layers on a cone in supersonic flow"}
    proj.ingest_texts(texts)
    proj.snapshot("first")
    ids = [proj.query("cone shock", mode=mode).query_id for mode in ("vector", "bm25", "hybrid")]
    assert all(proj.replay(q).matches_original for q in ids)
    proj.diff(ids[0], ids[2])
after = dict(os.environ)
changed = {k: [before.get(k), after.get(k)] for k in set(before) | set(after) if before.get(k) != after.get(k)}
print(json.dumps({"changed": changed, "mallopt": len(mallopt_calls)}))
"""
)

TUNED_CHILD = (
    WATCH
    + """
import ragtt
applied = ragtt.tune_process()
again = ragtt.tune_process()
with ragtt.Project.open(sys.argv[1], embedder=ragtt.HashEmbedder(), progress=False) as proj:
    proj.ingest_texts({"a.txt": "shock waves on a cone"})
names = ["RUST_LOG", "LANCE_DEFAULT_BATCH_SIZE", "LANCE_DEFAULT_IO_BUFFER_SIZE", "TOKENIZERS_PARALLELISM"]
print(json.dumps({"env": {n: os.environ.get(n) for n in names}, "applied": applied, "again": again,
                  "mallopt": len(mallopt_calls)}))
"""
)

CLI_CHILD = """
import json, os, sys
from ragtt.cli import main
try:
    main(["--help"])
except SystemExit:
    pass
names = ["RUST_LOG", "LANCE_DEFAULT_BATCH_SIZE", "LANCE_DEFAULT_IO_BUFFER_SIZE", "TOKENIZERS_PARALLELISM"]
print(json.dumps({n: os.environ.get(n) for n in names}))
"""


def _child(script: str, args: list[str], env: dict[str, str] | None = None) -> dict[str, object]:
    """Run ``script`` in a fresh interpreter whose environment has none of the tuned names
    (nor the cost-map switch litellm reads), plus ``env``; its last stdout line is JSON."""
    clean = {k: v for k, v in os.environ.items() if k not in (*NAMES, "LITELLM_LOCAL_MODEL_COST_MAP")}
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        env={**clean, "PYTHONPATH": str(REPO), **(env or {})},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_using_ragtt_as_a_library_leaves_the_environment_and_allocator_alone(tmp_path: Path) -> None:
    """Import, open, ingest, snapshot, query (vector, BM25, hybrid), replay, diff: os.environ
    is the same dict afterwards and glibc's mallopt was never reached."""
    out = _child(LIBRARY, [str(tmp_path / "p")])
    assert out == {"changed": {}, "mallopt": 0}


def test_tune_process_applies_ragtts_settings_once(tmp_path: Path) -> None:
    out = _child(TUNED_CHILD, [str(tmp_path / "p")])
    assert out["env"] == TUNED
    assert out["applied"] == TUNED
    assert out["again"] == {}  # idempotent: nothing left to set
    assert out["mallopt"] == 1  # the arena cap


def test_a_deployments_own_values_win_over_tune_process(tmp_path: Path) -> None:
    own = {"RUST_LOG": "warn", "LANCE_DEFAULT_BATCH_SIZE": "4096", "LANCE_DEFAULT_IO_BUFFER_SIZE": str(64 << 20)}
    out = _child(TUNED_CHILD, [str(tmp_path / "p")], own)
    assert out["env"] == {**TUNED, **own}
    assert out["applied"] == {"TOKENIZERS_PARALLELISM": "false"}


def test_the_cli_tunes_its_own_process() -> None:
    assert _child(CLI_CHILD, []) == TUNED


GUARD = """
import importlib.metadata, json, sys
real = importlib.metadata.version
importlib.metadata.version = lambda name: "0.41.0" if name == "lancedb" else real(name)
from ragtt._lazy import import_lancedb
from ragtt.errors import ConfigError
try:
    import_lancedb()
except ConfigError as exc:
    print(json.dumps({"error": str(exc), "imported": "lancedb" in sys.modules}))
else:
    print(json.dumps({"error": None}))
"""


def test_the_lancedb_import_shortcut_refuses_a_series_it_was_not_checked_on() -> None:
    """``import_lancedb`` registers a LanceDB dependency unexecuted (half of its import time);
    on a LanceDB it was not written for it fails by name instead of guessing."""
    out = _child(GUARD, [])
    assert out["imported"] is False
    error = str(out["error"])
    assert "lancedb 0.41.0 is installed" in error and "0.40." in error


SERVER_CHILD = """
import json, os, sys
names = ["RUST_LOG", "LANCE_DEFAULT_BATCH_SIZE", "LANCE_DEFAULT_IO_BUFFER_SIZE", "TOKENIZERS_PARALLELISM"]
seen = {}
def stop(*args, **kwargs):  # the server would run here: note the environment instead
    seen.update({n: os.environ.get(n) for n in names})
if sys.argv[2] == "rest":
    import uvicorn
    uvicorn.run = stop
    from ragtt.serve import create_app, serve
    create_app(sys.argv[1])
    untuned = {n: os.environ.get(n) for n in names}
    serve(sys.argv[1])
else:
    import anyio
    anyio.run = stop
    from ragtt.serve_mcp import create_server, run_stdio
    create_server(sys.argv[1])[1].close()
    untuned = {n: os.environ.get(n) for n in names}
    run_stdio(sys.argv[1])
print(json.dumps({"untuned": untuned, "serving": seen}))
"""


@pytest.mark.parametrize("kind", ["rest", "mcp"])
def test_the_servers_tune_their_process_and_their_factories_do_not(tmp_path: Path, kind: str) -> None:
    """``serve``/``run_stdio`` run a process of ragtt's own; ``create_app``/``create_server``
    may run inside a host application's, and leave it alone."""
    importlib.import_module("uvicorn" if kind == "rest" else "mcp")  # the dev extra installs both: never a skip
    import ragtt

    ragtt.Project.open(tmp_path / "p", embedder=ragtt.HashEmbedder(), progress=False).close()
    out = _child(SERVER_CHILD, [str(tmp_path / "p"), kind])
    assert out["untuned"] == dict.fromkeys(NAMES)
    assert out["serving"] == TUNED


def test_the_shortcuts_lancedb_series_is_the_pinned_one() -> None:
    """LANCEDB_SERIES moves with the pin in pyproject.toml, and the installed LanceDB is in it."""
    import tomllib
    from importlib.metadata import version

    from ragtt._lazy import LANCEDB_SERIES

    deps = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    pin = next(d for d in deps if d.startswith("lancedb"))
    major, minor, _ = LANCEDB_SERIES.split(".")
    assert pin == f"lancedb>={major}.{minor},<{major}.{int(minor) + 1}"
    assert version("lancedb").startswith(LANCEDB_SERIES)
