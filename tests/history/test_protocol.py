"""The crash protocol's other promises: readers never see half a write, a write that
raises after its table commit is still logged, maintenance never fails a committed write,
and a writer that holds the lock too long is a clear error. With the log in SQLite and in
Postgres, and with the index in an S3 bucket."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import ragtt
from ragtt.index.table import ChunkTable
from tests.backends import backend_for, events_uri
from tests.history.scenarios import build_base, open_project

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", params=["sqlite", "postgres", "postgres+s3"])
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    with backend_for(request) as name:
        yield name


@pytest.fixture
def project(tmp_path: Path, backend: str) -> Iterator[ragtt.Project]:
    with open_project(tmp_path / "proj", embedder=ragtt.HashEmbedder()) as proj:
        yield proj


def test_a_reader_sees_a_write_only_once_it_is_logged(tmp_path: Path, backend: str) -> None:
    build_base(tmp_path)
    with open_project(tmp_path / "proj") as reader:
        before = reader.version
        answer = reader.query("refund window", generate=False)
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.history.crash_child", "ingest_folder_update_and_prune", str(tmp_path), "pause:3"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(1200):
            if (tmp_path / "paused").exists() or child.poll() is not None:
                break
            time.sleep(0.05)
        assert (tmp_path / "paused").read_text() == "LanceMergeInsertBuilder.execute"  # the table has it; the log not
        with open_project(tmp_path / "proj") as reader:
            assert reader.version == before  # the writer holds the lock: no recovery, and nothing half-done shown
            during = reader.query("refund window", generate=False)
            assert during.index_version == before and during.chunk_ids == answer.chunk_ids
    finally:
        (tmp_path / "go").write_text("")
        _, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    with open_project(tmp_path / "proj") as reader:
        assert reader.version > before and reader.replay(during.query_id).matches_original
        assert reader.verify().ok


def test_a_write_that_raises_after_its_table_commit_is_still_logged(
    project: ragtt.Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragtt.events.base import EventLog

    project.ingest_texts({"a.md": "first text"})
    original = EventLog.append_many
    calls = {"n": 0}

    def failing(self, events, conn=None):  # type: ignore[no-untyped-def]
        if any(e.type == "ingest.completed" for e in events) and calls["n"] == 0:
            calls["n"] += 1
            raise OSError("disk full while logging")
        return original(self, events, conn)

    monkeypatch.setattr(EventLog, "append_many", failing)
    with pytest.raises(OSError, match="disk full"):
        project.ingest_texts({"b.md": "second text"})
    # Settled on the spot: the table commit happened, so the write was rolled forward.
    assert set(project.chunks()["source"]) == {"a.md", "b.md"}
    assert project.verify().ok and project.document("b.md").text == "second text"


def test_maintenance_that_fails_never_fails_the_ingest(project: ragtt.Project, monkeypatch: pytest.MonkeyPatch) -> None:
    from ragtt.index.maintenance import MAINTAIN_ROWS

    big = {f"d{i}.md": f"document {i} text" for i in range(MAINTAIN_ROWS + 5)}

    def conflict(self):  # type: ignore[no-untyped-def]
        raise RuntimeError("lance error: Commit conflict for version 9: another writer committed first")

    monkeypatch.setattr(ChunkTable, "optimize", conflict)
    report = project.ingest_texts(big)
    assert report.ok and report.chunks_added == len(big)
    assert any("maintenance skipped" in w and "Commit conflict" in w for _, w in report.warnings), report.warnings
    assert "maintenance" not in project.versions()["operation"].to_list()
    monkeypatch.undo()
    later = project.ingest_texts({"late.md": "a later document"})  # the next write retries it
    assert "maintenance" in project.versions()["operation"].to_list() and not later.warnings
    assert project.verify().ok


def test_a_writer_holding_the_lock_too_long_is_a_clear_error(tmp_path: Path, backend: str) -> None:
    from ragtt.errors import ProjectBusyError
    from ragtt.opening import open_log

    path = tmp_path / "p"
    with open_project(path, embedder=ragtt.HashEmbedder()):
        pass
    uri = events_uri(path)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time; from pathlib import Path; from ragtt.opening import open_log; "
                "s = open_log(Path(sys.argv[1]), sys.argv[2] or None, 'chunks', create=False); "
                "ctx = s.write_lock(); ctx.__enter__(); print('held', flush=True); time.sleep(30)"
            ),
            str(path),
            uri or "",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        store = open_log(path, uri, "chunks", create=False)
        started = time.monotonic()
        with pytest.raises(ProjectBusyError, match="another process"), store.write_lock(timeout_s=0.3):
            pass
        assert time.monotonic() - started < 5
        store.close()
    finally:
        holder.kill()
        holder.wait()
    store = open_log(path, uri, "chunks", create=False)
    with store.write_lock(timeout_s=5), store.write_lock():  # free again once its holder died; re-entrant
        pass
    store.close()
