"""Scheduled snapshots and `ragtt snapshot --if-changed`: a snapshot only when the index
changed, and labels that never collide."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import ragtt

REPO = Path(__file__).resolve().parents[2]


def _wait_for(predicate, seconds: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_a_schedule_snapshots_only_a_changed_index(project: ragtt.Project) -> None:
    project.ingest_texts({"a.md": "first"})
    schedule = project.schedule_snapshots(timedelta(milliseconds=100), label="auto-v{version}")
    try:
        assert _wait_for(lambda: len(schedule.taken) == 1)
        time.sleep(0.5)  # several ticks with nothing new: no new snapshot
        assert len(schedule.taken) == 1 and schedule.taken[0].index_version == project.version
        project.ingest_texts({"b.md": "second"})
        assert _wait_for(lambda: len(schedule.taken) == 2)
    finally:
        schedule.stop()
    assert not schedule.running and not schedule.errors
    labels = [s.label for s in project.snapshots()]
    assert labels == [f"auto-v{v}" for v in (project.version - 1, project.version)]
    assert project.verify().ok


def test_if_changed_labels_never_collide(project: ragtt.Project) -> None:
    project.ingest_texts({"a.md": "first"})
    first = project.snapshot_if_changed("nightly")
    assert first is not None and first.label == "nightly"
    assert project.snapshot_if_changed("nightly") is None
    project.ingest_texts({"b.md": "second"})
    second = project.snapshot_if_changed("nightly")
    assert second is not None and second.label == "nightly-2"


def test_cli_snapshot_if_changed(tmp_path: Path) -> None:
    path = tmp_path / "proj"
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest_texts({"a.md": "first"})

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "ragtt.cli",
                "snapshot",
                "--if-changed",
                "ci-{ts}",
                "--project",
                str(path),
                "--embedder",
                "hash",
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )

    done = run()
    assert done.returncode == 0 and "ci-20" in done.stdout, done.stderr
    again = run()
    assert again.returncode == 0 and "unchanged since snapshot" in again.stdout
