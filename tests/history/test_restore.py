"""``proj.restore`` / ``ragtt restore``: a backup put back into a new Postgres log and a new
prefix of the S3-compatible server, the way a team whose database or bucket was lost comes back.

One project (two Flask releases, logged queries, a snapshot, an assertion store) on Postgres
with its index on S3 is backed up into a local folder; each case restores that backup into
fresh destinations and checks the result against the original: ``verify(deep=True)`` ok, every
logged query replays identically. A destination that holds anything is refused and left as it
was; a damaged backup file is refused by name; a restore killed on the way is refused on open
until it is run again, which finishes it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ragtt
from tests.backends import BUCKET, backend_for, events_uri, index_args, s3_client, s3_env
from tests.conftest import flask_releases
from tests.history.scenarios import open_project

REPO = Path(__file__).resolve().parents[2]
QUESTIONS = ["How do I set the secret key?", "What are blueprints?", "How do I test the application?"]


@pytest.fixture(scope="module", params=["postgres+s3"])
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    with backend_for(request) as name:
        yield name


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Path:
    """``proj`` (log on Postgres, index on S3) and ``backup``, the local backup of it."""
    root = tmp_path_factory.mktemp("restore")
    with open_project(root / "proj", embedder=ragtt.HashEmbedder()) as proj:
        for release in flask_releases()[:2]:
            proj.ingest(release)
            for question in QUESTIONS:
                proj.query(question, generate=False)
        proj.snapshot("two-releases")
        proj.assertions.init_namespace("facts")
        proj.backup(root / "backup")
    return root


def _local(path: Path) -> ragtt.Project:
    return ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False, create=False)


def _targets(dest: Path) -> dict[str, Any]:
    """A fresh, empty Postgres database and S3 prefix of their own for the folder ``dest``."""
    where = index_args(dest)
    return {
        "to_events_uri": events_uri(dest),
        "to_index_uri": where["index_uri"],
        "storage_options": where["storage_options"],
    }


def _open_restored(dest: Path, targets: dict[str, Any]) -> ragtt.Project:
    return ragtt.Project.open(
        dest,
        embedder=ragtt.HashEmbedder(),
        progress=False,
        create=False,
        events_uri=targets["to_events_uri"],
        index_uri=targets["to_index_uri"],
        storage_options=targets["storage_options"],
    )


def _objects(index_uri: str) -> list[str]:
    prefix = index_uri.removeprefix(f"s3://{BUCKET}/") + "/"
    found = s3_client().list_objects_v2(Bucket=BUCKET, Prefix=prefix)
    return [o["Key"] for o in found.get("Contents", [])]


def _asked(proj: ragtt.Project) -> list[str]:
    return [e.query_id for e in proj.events.query(types="query.received")]


def _whole(dest: Path, targets: dict[str, Any], asked: list[str]) -> None:
    """The restored project proves itself and replays every logged query as it ran."""
    with _open_restored(dest, targets) as proj:
        proven = proj.verify(deep=True)
        assert proven.ok and proven.files_adopted == 0 and proven.files_checked > 0, proven.problems
        assert _asked(proj) == asked
        for query_id in asked:
            assert proj.replay(query_id).matches_original, query_id
        assert [s.label for s in proj.snapshots()] == ["two-releases"]
        assert proj.assertions.namespaces.info("facts").name == "facts"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI with the S3 server's credentials in the environment (no URIs from it)."""
    env = {k: v for k, v in os.environ.items() if k not in ("RAGTT_EVENTS_URI", "RAGTT_INDEX_URI")}
    return subprocess.run(
        [sys.executable, "-m", "ragtt.cli", *args, "--embedder", "hash"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, **s3_env()},
    )


def test_a_backup_restores_into_a_fresh_database_and_bucket(base: Path, tmp_path: Path) -> None:
    dest = tmp_path / "restored"
    targets = _targets(dest)
    with _local(base / "backup") as backup:
        asked, project_id = _asked(backup), backup.project_id
        report = backup.restore(dest, **targets)
    assert not report.resumed and report.files_copied > 0 and report.events_copied >= len(asked)
    assert report.index == targets["to_index_uri"] and "@" in report.events and "verify --deep" in report.to_text()
    _whole(dest, targets, asked)
    with _open_restored(dest, targets) as proj:  # a live project again: it takes new writes
        proj.ingest(flask_releases()[2])
        assert proj.query("What are blueprints?", generate=False).chunks
        assert proj.verify(deep=True).ok
    # another workspace of the team joins the restored database: the log says where the index is
    with ragtt.Project.open(
        tmp_path / "colleague",
        embedder=ragtt.HashEmbedder(),
        progress=False,
        events_uri=targets["to_events_uri"],
        storage_options=targets["storage_options"],
    ) as colleague:
        assert colleague.project_id == project_id and colleague.verify().ok


def test_the_cli_restores_and_the_restored_project_verifies(base: Path, tmp_path: Path) -> None:
    dest = tmp_path / "restored"
    targets = _targets(dest)
    done = _cli(
        "restore",
        "--project",
        str(base / "backup"),
        str(dest),
        "--to-events-uri",
        targets["to_events_uri"],
        "--to-index-uri",
        targets["to_index_uri"],
    )
    assert done.returncode == 0 and "restore:" in done.stdout and "verify --deep" in done.stdout, done.stderr
    proven = _cli("verify", "--deep", "--project", str(dest), "--events-uri", targets["to_events_uri"])
    assert proven.returncode == 0, proven.stdout + proven.stderr
    again = _cli("restore", "--project", str(base / "backup"), str(dest), "--to-events-uri", targets["to_events_uri"])
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "already holds" in again.stderr, again.stderr


def test_a_destination_that_holds_anything_is_refused_and_left_as_it_was(base: Path, tmp_path: Path) -> None:
    original = {"to_events_uri": events_uri(base / "proj"), **_targets(base / "proj")}
    fresh = _targets(tmp_path / "fresh")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    with _local(base / "backup") as backup:
        with pytest.raises(ragtt.ConfigError, match="already holds files"):
            backup.restore(busy, **fresh)
        assert [p.name for p in busy.iterdir()] == ["notes.txt"]
        # the original's database holds a project: never written into
        with pytest.raises(ragtt.ConfigError, match="already holds project"):
            backup.restore(tmp_path / "a", **{**fresh, "to_events_uri": original["to_events_uri"]})
        assert not (tmp_path / "a").exists() and _objects(fresh["to_index_uri"]) == []
        # the original's prefix holds its table: never overwritten
        with pytest.raises(ragtt.ConfigError, match="already holds a table 'chunks'"):
            backup.restore(tmp_path / "b", **{**fresh, "to_index_uri": original["to_index_uri"]})
        assert not (tmp_path / "b").exists()
        # both refusals left the fresh destinations empty: a restore into them goes through
        backup.restore(tmp_path / "c", **fresh)
        asked = _asked(backup)
    with open_project(base / "proj", embedder=ragtt.HashEmbedder()) as proj:
        assert proj.verify(deep=True).ok
    _whole(tmp_path / "c", fresh, asked)


def _overwrite_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(255 - b for b in data[middle : middle + 64])
    path.write_bytes(bytes(data))


def test_a_damaged_backup_file_is_refused_by_name(base: Path, tmp_path: Path) -> None:
    damaged = tmp_path / "backup"
    shutil.copytree(base / "backup", damaged)
    name = sorted((damaged / "lancedb" / "chunks.lance" / "data").iterdir())[-1]
    _overwrite_middle(name)  # the same size: only its hash tells
    dest = tmp_path / "restored"
    targets = _targets(dest)
    with _local(damaged) as backup, pytest.raises(ragtt.ProjectDamagedError, match=name.name) as info:
        backup.restore(dest, **targets)
    assert "SHA-256" in str(info.value) and "not restored" in str(info.value)
    assert not dest.exists() and _objects(targets["to_index_uri"]) == []  # nothing left behind
    done = _cli("restore", "--project", str(damaged), str(dest), "--to-events-uri", targets["to_events_uri"])
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and name.name in done.stderr, done.stderr
    # a backup whose log was edited does not verify: refused before anything is written
    from ragtt._sqlite import connect

    edited = tmp_path / "edited"
    shutil.copytree(base / "backup", edited)
    conn = connect(edited / "events.db")
    for (trigger,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("UPDATE events SET payload = replace(payload, 'blueprints', 'footprints')")
    conn.close()
    with _local(edited) as backup, pytest.raises(ragtt.ProjectDamagedError, match="does not verify") as info:
        backup.restore(dest, **targets)
    assert "does not match its hash" in str(info.value) and not dest.exists()
    with _local(base / "backup") as backup:  # the same destinations, untouched, take the good backup
        backup.restore(dest, **targets)
        asked = _asked(backup)
    _whole(dest, targets, asked)


def _killed(backup: Path, dest: Path, events: str, index: str, point: str) -> None:
    """A child restores ``backup`` and is killed (SIGKILL) at ``point`` (tests/history/restore_child.py)."""
    child = subprocess.run(
        [sys.executable, "-m", "tests.history.restore_child", str(backup), str(dest), events, index, point],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **s3_env()},
    )
    assert child.returncode == -9, child.stderr[-2000:]


@pytest.mark.parametrize("point", ["files:3", "logged"])
def test_a_killed_restore_is_refused_on_open_and_finished_by_running_it_again(
    base: Path, tmp_path: Path, point: str
) -> None:
    dest = tmp_path / "restored"
    targets = _targets(dest)
    _killed(base / "backup", dest, targets["to_events_uri"], targets["to_index_uri"], point)
    with pytest.raises(ragtt.ProjectDamagedError, match="did not finish") as info:
        _open_restored(dest, targets)
    assert "ragtt restore" in str(info.value) and "again" in str(info.value)
    verified = _cli("verify", "--project", str(dest), "--events-uri", targets["to_events_uri"])
    assert verified.returncode == 1 and "did not finish" in verified.stdout, verified.stdout + verified.stderr
    colleague = dict(
        embedder=ragtt.HashEmbedder(),
        progress=False,
        events_uri=targets["to_events_uri"],
        storage_options=targets["storage_options"],
    )
    if point == "logged":  # the log's commit is the restore's: a workspace on the database finds it whole
        with ragtt.Project.open(tmp_path / "colleague", **colleague) as other:
            assert other.verify(deep=True).ok
    else:  # before it, the database is no project yet, and never made a new, empty one
        with pytest.raises(ragtt.ProjectDamagedError, match="did not finish"):
            ragtt.Project.open(tmp_path / "colleague", **colleague)
    with _local(base / "backup") as backup:
        with pytest.raises(ragtt.ConfigError, match="unfinished restore into the index"):
            backup.restore(dest, **{**targets, "to_index_uri": _targets(tmp_path / "elsewhere")["to_index_uri"]})
        report = backup.restore(dest, **targets)
        asked = _asked(backup)
    assert report.resumed
    _whole(dest, targets, asked)


def test_a_killed_restore_into_a_folder_is_never_made_a_new_project(base: Path, tmp_path: Path) -> None:
    """Into ``dest/events.db`` and ``dest/lancedb``: opening the half-restored folder, even with
    create (the default), is refused; it would otherwise look like a dead creation's leftovers."""
    dest = tmp_path / "restored"
    _killed(base / "backup", dest, "-", "-", "files:3")
    for create in (False, True):
        with pytest.raises(ragtt.ProjectDamagedError, match="did not finish"):
            ragtt.Project.open(dest, embedder=ragtt.HashEmbedder(), progress=False, create=create)
    assert (dest / "lancedb").is_dir()
    verified = _cli("verify", "--project", str(dest))
    assert verified.returncode == 1 and "did not finish" in verified.stdout, verified.stdout + verified.stderr
    with _local(base / "backup") as backup:
        report = backup.restore(dest)
        asked = _asked(backup)
    assert report.resumed and report.events == str(dest / "events.db")
    _whole(dest, {"to_events_uri": None, "to_index_uri": None, "storage_options": None}, asked)


def test_the_log_alone_can_go_back_to_postgres(base: Path, tmp_path: Path) -> None:
    """A team that lost only its database: the log into a new one, the index into the folder."""
    dest = tmp_path / "restored"
    targets = {"to_events_uri": events_uri(dest), "to_index_uri": None, "storage_options": None}
    with _local(base / "backup") as backup:
        report = backup.restore(dest, to_events_uri=targets["to_events_uri"])
        asked = _asked(backup)
    assert report.index == str(dest / "lancedb") and (dest / "lancedb" / "chunks.lance").is_dir()
    _whole(dest, targets, asked)
