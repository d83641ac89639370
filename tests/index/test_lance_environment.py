"""ragtt's defaults for Lance's environment (``ragtt._lazy.lance_environment``): set before Lance
first reads it, on every path that loads Lance, and never over a deployment's own value."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NAMES = ("RUST_LOG", "LANCE_DEFAULT_BATCH_SIZE", "LANCE_DEFAULT_IO_BUFFER_SIZE")
CHILD = """
import json, os, sys
import ragtt
with ragtt.Project.open(sys.argv[1], embedder=ragtt.HashEmbedder(), progress=False) as proj:
    proj.ingest_texts({"a.txt": "shock waves on a cone"})
print(json.dumps({name: os.environ.get(name) for name in sys.argv[2:]}))
"""


def _child(tmp_path: Path, env: dict[str, str]) -> dict[str, str | None]:
    clean = {k: v for k, v in os.environ.items() if k not in NAMES}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "p"), *NAMES],
        env={**clean, "PYTHONPATH": str(REPO), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_project_runs_lance_with_ragtts_defaults(tmp_path: Path) -> None:
    assert _child(tmp_path, {}) == {
        "RUST_LOG": "error",
        "LANCE_DEFAULT_BATCH_SIZE": "1024",
        "LANCE_DEFAULT_IO_BUFFER_SIZE": str(32 << 20),
    }


def test_a_deployments_own_values_win(tmp_path: Path) -> None:
    own = {"RUST_LOG": "warn", "LANCE_DEFAULT_BATCH_SIZE": "4096", "LANCE_DEFAULT_IO_BUFFER_SIZE": str(64 << 20)}
    assert _child(tmp_path, own) == own
