"""A CLI verb loads only what it uses: reading verbs never import torch, litellm or the model,
nor LanceDB on a vector project (reads go through pylance; LanceDB is the writer, and BM25)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ragtt.demo import QUESTION

MODEL_STACK = ("torch", "sentence_transformers", "transformers", "litellm")
THE_MODEL = ("onnxruntime", "tokenizers", "onnx")
# lancedb's REST namespace client: its __init__ (every API module, urllib3) is deferred
REST_CLIENT = ("lance_namespace_urllib3_client.api", "lance_namespace_urllib3_client.api_client", "urllib3")
CLUSTER = ("ray",)  # only ingest(engine="ray") imports it
LANCEDB = ("lancedb", "lance_namespace")  # writes and full-text search only
WATCHED = MODEL_STACK + THE_MODEL + REST_CLIENT + CLUSTER + LANCEDB

# runs one CLI verb in this process, then reports which watched modules it imported
PROBE = (
    "import json, sys; from ragtt.cli import main; rc = main(sys.argv[1:]); "
    f"print(json.dumps([m for m in {WATCHED!r} if m in sys.modules]), file=sys.stderr); sys.exit(rc)"
)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], list[str]]:
    """The demo project, built by `ragtt demo` with the default (ONNX) embedder. Its exported
    model is the user cache's, as in the rest of the suite: a cache of its own exported the
    model again (13 of the fixture's 18 s)."""
    root = tmp_path_factory.mktemp("cold")
    env = dict(os.environ)
    subprocess.run(
        [sys.executable, "-m", "ragtt.cli", "demo", "--out", str(root / "demo")],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    project = root / "demo" / "project"
    with sqlite3.connect(project / "events.db") as conn:
        ids = [r[0] for r in conn.execute("SELECT query_id FROM events WHERE type = 'query.completed' ORDER BY seq")]
    return project, env, ids


def imported_by(verb: list[str], project: Path, env: dict[str, str]) -> tuple[set[str], str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *verb, "--project", str(project)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stderr.strip().splitlines()[-1])), done.stdout


@pytest.mark.slow
def test_reading_verbs_import_neither_torch_nor_litellm_nor_the_model_nor_lancedb(
    demo: tuple[Path, dict[str, str], list[str]],
) -> None:
    project, env, ids = demo
    then, now = ids[0], ids[-1]
    verbs = {
        "query": ["query", QUESTION],  # its vector is in the embedding cache since the demo
        "replay": ["replay", "--query-id", then],
        "trace": ["trace", then],
        "events": ["events"],
        "snapshots": ["snapshots"],
        "diff": ["diff", "--left", then, "--right", now],
    }
    for name, verb in verbs.items():
        loaded, out = imported_by(verb, project, env)
        assert not loaded, f"ragtt {name} imported {sorted(loaded)}"
        assert out.strip(), f"ragtt {name} printed nothing"
    _, out = imported_by(["replay", "--query-id", then], project, env)
    assert "matches original" in out


@pytest.mark.slow
def test_a_new_query_text_embeds_with_onnx_runtime_only(demo: tuple[Path, dict[str, str], list[str]]) -> None:
    project, env, _ = demo
    loaded, out = imported_by(["query", "Which plans have an SLA?", "--no-generate"], project, env)
    assert "onnxruntime" in loaded  # it did embed
    assert not loaded & set(MODEL_STACK), sorted(loaded)
    assert "#1" in out


def test_lancedb_loads_without_its_rest_client_until_someone_uses_it() -> None:
    code = (
        "import sys; from ragtt._lazy import import_lancedb; db = import_lancedb(); "
        "before = [m for m in sys.modules if m.startswith('lance_namespace_urllib3_client.api')]; "
        "import lance_namespace_urllib3_client as client; name = client.ApiClient.__name__; "
        "print(before, name, 'lance_namespace_urllib3_client.api' in sys.modules, hasattr(db, 'connect'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[]", "ApiClient", "True", "True"]
