"""The federation's own log: crash-consistent (a SIGKILL at each write point leaves all of a
run or none of it, and a dead creation is made again), tamper-evident (``verify()``), and
clear errors for what a user gets wrong."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import ragtt
from tests.federation.flask_members import MEMBERS, ingest_release, releases

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def members(tmp_path: Path) -> Iterator[dict[str, ragtt.Project]]:
    """The two Flask members at one release, open (closed at teardown)."""
    opened = {n: ragtt.Project.open(tmp_path / n, embedder=ragtt.HashEmbedder(), progress=False) for n in MEMBERS}
    try:
        folder, release = releases((12,))[0]
        ingest_release(opened, tmp_path / "work", folder, release)
        yield opened
    finally:
        for proj in opened.values():
            proj.close()


def child(mode: str, root: Path) -> int:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "tests.federation.crash_child", mode, str(root)],
        cwd=ROOT,
        env=env,
        timeout=120,
        capture_output=True,
        text=True,
    )
    assert done.returncode == -9, done.stderr
    return done.returncode


def runs_in(fed: ragtt.Federation) -> list[str]:
    frame = fed.events.frame(types=["query.received"])
    return [str(q) for q in frame["query_id"].to_list()]


def test_a_creation_killed_before_its_marker_is_made_again(members: dict[str, ragtt.Project], tmp_path: Path) -> None:
    child("create", tmp_path)
    assert (tmp_path / "fed" / "events.db").exists() and not (tmp_path / "fed" / "federation.json").exists()
    with pytest.raises(ragtt.NotAProjectError, match="not a ragtt federation"):
        ragtt.Federation.open(tmp_path / "fed")
    with ragtt.Federation.create(tmp_path / "fed", members=members) as fed:
        assert fed.verify().ok
        assert runs_in(fed) == []
    with ragtt.Federation.open(tmp_path / "fed") as fed:
        assert list(fed.members) == list(MEMBERS)


@pytest.mark.parametrize("mode", ["before-commit", "after-commit"])
def test_a_query_killed_in_its_log_write_leaves_all_of_the_run_or_none(
    mode: str, members: dict[str, ragtt.Project], tmp_path: Path
) -> None:
    ragtt.Federation.create(tmp_path / "fed", members=members).close()
    child(mode, tmp_path)
    with ragtt.Federation.open(tmp_path / "fed") as fed:
        report = fed.verify()
        assert report.ok, report.problems
        logged = runs_in(fed)
        assert len(logged) == (1 if mode == "before-commit" else 2)
        for query_id in logged:
            kinds = fed.events.frame(query_id=query_id)["type"].to_list()
            assert kinds[0] == "query.received" and kinds[-1] == "query.completed"  # whole runs only
            assert fed.replay(query_id).matches_original
        fed.query("secret key", generate=False)  # the log takes the next run
        assert fed.verify().ok


def test_verify_finds_a_rewritten_run(members: dict[str, ragtt.Project], tmp_path: Path) -> None:
    with ragtt.Federation.create(tmp_path / "fed", members=members) as fed:
        fed.query("secret key", generate=False)
    db = sqlite3.connect(tmp_path / "fed" / "events.db")
    with pytest.raises(sqlite3.DatabaseError):  # the guards refuse a rewrite
        db.execute("UPDATE events SET payload = '{}' WHERE type = 'retrieval.executed'")
    db.execute("DROP TRIGGER events_no_update")
    db.execute("UPDATE events SET payload = replace(payload, '\"top_k\"', '\"top_K\"') WHERE type = 'query.received'")
    db.commit()
    db.close()
    with ragtt.Federation.open(tmp_path / "fed") as fed:
        report = fed.verify()
    assert not report.ok
    assert any("does not match its hash" in p for p in report.problems)
    assert any("events_no_update" in p for p in report.problems)


def test_errors_say_what_was_wrong(members: dict[str, ragtt.Project], tmp_path: Path) -> None:
    docs = members["docs"]
    with pytest.raises(ragtt.NotAProjectError, match=r"member 'tickets'.*not a ragtt project"):
        ragtt.Federation.create(tmp_path / "f1", members={"docs": docs, "tickets": tmp_path / "nowhere"})
    assert not (tmp_path / "f1" / "federation.json").exists()
    for weights, match in (
        ({"docs": -1}, "weight of member 'docs' must be a finite number above 0"),
        ({"docs": float("nan")}, "finite number above 0"),
        ({"docs": "2"}, "finite number above 0"),
        ({"tickets": 2}, "'tickets', which is not a member"),
        ([1, 2], "weights must be a dict"),
    ):
        with pytest.raises(ragtt.ConfigError, match=match):
            ragtt.Federation.create(tmp_path / "f2", members={"docs": docs}, weights=weights)  # type: ignore[arg-type]
    with pytest.raises(ragtt.ConfigError, match="fusion must be one of rrf"):
        ragtt.Federation.create(tmp_path / "f2", members={"docs": docs}, fusion="linear")
    with pytest.raises(ragtt.ConfigError, match="needs members"):
        ragtt.Federation.create(tmp_path / "f2", members={})
    with pytest.raises(ragtt.ConfigError, match="member name"):
        ragtt.Federation.create(tmp_path / "f2", members={"bad name/": docs})
    with pytest.raises(ragtt.ConfigError, match="are the same project"):
        ragtt.Federation.create(tmp_path / "f2", members={"docs": docs, "again": docs.path})
    with pytest.raises(ragtt.ConfigError, match="is a ragtt project"):
        ragtt.Federation.create(docs.path, members={"docs": docs})
    with ragtt.Federation.create(tmp_path / "fed", members=members) as fed:
        with pytest.raises(ragtt.NotFoundError, match="no federated query or replay with id 'nope'"):
            fed.replay("nope")
        with pytest.raises(ragtt.ConfigError, match="a version number means a different index in each member"):
            fed.replay_text("secret", at=3)  # type: ignore[arg-type]
        with pytest.raises(ragtt.NotFoundError, match=r"member 'docs'.*no snapshot labelled 'v9'"):
            fed.replay_text("secret", at="v9")
    with pytest.raises(ragtt.ConfigError, match="is a federation already"):
        ragtt.Federation.create(tmp_path / "fed", members=members)
    with pytest.raises(ragtt.NotAProjectError, match="not a ragtt federation"):
        ragtt.Federation.open(tmp_path / "f2")


def test_a_member_missing_at_open_is_named(members: dict[str, ragtt.Project], tmp_path: Path) -> None:
    ragtt.Federation.create(tmp_path / "fed", members=members).close()
    members["readme"].close()
    (tmp_path / "readme").rename(tmp_path / "moved")
    with pytest.raises(ragtt.NotAProjectError, match=f"member 'readme': {tmp_path / 'readme'} is not a ragtt project"):
        ragtt.Federation.open(tmp_path / "fed")
    (tmp_path / "moved").rename(tmp_path / "readme")
    with ragtt.Federation.open(tmp_path / "fed") as fed:
        assert fed.verify().ok
