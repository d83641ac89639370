from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest


@pytest.mark.slow
def test_demo_runs_offline_with_the_real_embedder(tmp_path: Path) -> None:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "ragtt.cli", "demo", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"},
    )
    elapsed = time.perf_counter() - started
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "sentence-transformers/all-MiniLM-L6-v2" in out
    assert "retrieval identical to the original" in out
    assert "30 days" in out and "14 days" in out  # then vs now
    assert (tmp_path / "report.html").exists() and (tmp_path / "events.csv").exists()
    assert elapsed < 60
