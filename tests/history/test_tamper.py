"""The history refuses rewrites, and what it cannot refuse, verify() finds: on both event-log
backends (SQLite: a sqlite3 connection to the file; Postgres: a raw psycopg connection)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ragtt
from ragtt.events.store import Event
from tests.backends import drop_guards, events_uri, raw_log
from tests.history.scenarios import QUESTIONS, build_base, open_project

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def root(tmp_path: Path, backend: str) -> Path:
    build_base(tmp_path)
    return tmp_path


def _raw(root: Path) -> Any:
    """A connection of anyone who can write the log: not ragtt's."""
    return raw_log(root / "proj")


def _verify_cli(root: Path) -> subprocess.CompletedProcess[str]:
    uri = events_uri(root / "proj")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "ragtt.cli",
            "verify",
            "--project",
            str(root / "proj"),
            "--embedder",
            "hash",
            *(["--events-uri", uri] if uri else []),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _history(conn: Any) -> list[Any]:
    return [tuple(r) for r in conn.execute("SELECT seq, payload, hash FROM events ORDER BY seq").fetchall()]


SQLITE_REWRITES = [
    "UPDATE events SET payload = '{}' WHERE seq = 3",
    "DELETE FROM events WHERE seq = 3",
    "INSERT OR REPLACE INTO events (seq, event_id, ts, type, query_id, index_version, doc_id, payload, hash) "
    "SELECT seq, event_id, ts, type, query_id, index_version, doc_id, '{}', hash FROM events WHERE seq = 3",
    "REPLACE INTO events (seq, event_id, ts, type, query_id, index_version, doc_id, payload, hash) "
    "SELECT seq, event_id, ts, type, query_id, index_version, doc_id, '{}', hash FROM events WHERE seq = 3",
    "INSERT OR REPLACE INTO events (event_id, ts, type, query_id, index_version, doc_id, payload, hash) "
    "SELECT 'x' || event_id, ts, type, query_id, index_version, doc_id, '{}', '' FROM events "
    "WHERE type = 'retrieval.executed' LIMIT 1",
    "UPDATE documents SET text = 'rewritten'",
    "DELETE FROM documents",
    "INSERT OR REPLACE INTO documents SELECT doc_key, doc_id, source, content_hash, 'rewritten', routes, created_at, "
    "parts FROM documents",
    "REPLACE INTO documents SELECT doc_key, doc_id, source, content_hash, 'rewritten', routes, created_at, parts "
    "FROM documents",
    "UPDATE index_versions SET committed_at = '2001-01-01T00:00:00.000000Z'",
    "DELETE FROM index_versions",
    "INSERT OR REPLACE INTO index_versions SELECT table_name, version, '2001-01-01T00:00:00.000000Z', operation "
    "FROM index_versions",
    "REPLACE INTO index_versions SELECT table_name, version, committed_at, 'ingest' FROM index_versions",
]
# Postgres has no REPLACE; its rewrites are ON CONFLICT DO UPDATE, a colliding insert, TRUNCATE.
POSTGRES_REWRITES = [
    "UPDATE events SET payload = '{}' WHERE seq = 3",
    "DELETE FROM events WHERE seq = 3",
    "TRUNCATE events",
    "INSERT INTO events SELECT * FROM events WHERE seq = 3",
    "INSERT INTO events SELECT seq, event_id, ts, type, query_id, index_version, doc_id, '{}', hash FROM events "
    "WHERE seq = 3 ON CONFLICT (seq) DO UPDATE SET payload = excluded.payload",
    "INSERT INTO events SELECT seq + 1000, 'x' || event_id, ts, type, query_id, index_version, doc_id, '{}', '' "
    "FROM events WHERE type = 'retrieval.executed' LIMIT 1",
    "UPDATE documents SET text = 'rewritten'",
    "DELETE FROM documents",
    "TRUNCATE documents CASCADE",
    "INSERT INTO documents SELECT doc_key, doc_id, source, content_hash, 'rewritten', routes, created_at "
    "FROM documents ON CONFLICT (doc_key) DO UPDATE SET text = excluded.text",
    "UPDATE index_versions SET committed_at = '2001-01-01T00:00:00.000000Z'",
    "DELETE FROM index_versions",
    "TRUNCATE index_versions",
    "INSERT INTO index_versions SELECT table_name, version, '2001-01-01T00:00:00.000000Z', operation "
    "FROM index_versions ON CONFLICT (table_name, version) DO UPDATE SET committed_at = excluded.committed_at",
    "UPDATE events_head SET seq = 1",
    "DELETE FROM events_head",
]
REWRITES = {"sqlite": SQLITE_REWRITES, "postgres": POSTGRES_REWRITES}


def test_history_refuses_every_rewrite(root: Path, backend: str) -> None:
    conn = _raw(root)
    before = _history(conn), conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
    for statement in REWRITES[backend]:
        with pytest.raises(Exception, match="immutable"):
            conn.execute(statement)
            pytest.fail(f"allowed: {statement}")
        assert (_history(conn), conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]) == before, statement
    conn.close()
    with open_project(root / "proj") as proj:
        assert proj.verify().ok


def test_a_run_cannot_be_appended_twice(root: Path) -> None:
    with open_project(root / "proj") as proj:
        original = proj.events.last("query.received")
        assert original is not None
        with pytest.raises(ragtt.HistoryError, match=r"already has a retrieval\.executed"):
            proj.events.append(
                Event("retrieval.executed", {"query": "a different question"}, query_id=original.query_id)
            )
        assert proj.replay(original.query_id).matches_original
        assert proj.run(original.query_id).query == original.payload["text"]


@pytest.mark.parametrize(
    "tamper, expected",
    [
        (
            "UPDATE events SET payload = replace(payload, '\"text\"', '\"txt\"') WHERE type = 'query.received'",
            "does not match its hash",
        ),
        ("DELETE FROM events WHERE seq = 4", "missing"),
        ("DELETE FROM events WHERE seq = (SELECT MAX(seq) FROM events)", "missing"),
        ("UPDATE documents SET text = 'rewritten'", "does not match the hash"),
        ("DELETE FROM documents", "text is missing"),
    ],
)
def test_verify_finds_what_the_guards_could_not_stop(root: Path, tamper: str, expected: str) -> None:
    conn = _raw(root)
    drop_guards(conn)
    conn.execute(tamper)
    conn.close()
    with open_project(root / "proj") as proj:
        report = proj.verify()
    assert not report.ok
    assert any(expected in p for p in report.problems), report.problems
    assert any("guards removed" in p for p in report.problems)
    done = _verify_cli(root)
    assert done.returncode == 1 and done.stdout.count("\n") == len(report.problems), done.stdout


def test_a_version_the_table_does_not_have_is_damage_found_on_open(root: Path) -> None:
    conn = _raw(root)
    drop_guards(conn)
    conn.execute("INSERT INTO index_versions VALUES ('chunks', 99, '2030-01-01T00:00:00.000000Z', 'ingest')")
    conn.close()
    with pytest.raises(ragtt.ProjectDamagedError, match="records version 99"):
        open_project(root / "proj")
    done = _verify_cli(root)
    assert done.returncode == 1 and "records version 99" in done.stdout and done.stdout.count("\n") == 1


def test_verify_finds_a_guard_disabled_in_place(root: Path, backend: str) -> None:
    conn = _raw(root)
    if backend == "postgres":
        conn.execute("ALTER TABLE events DISABLE TRIGGER events_no_update")
    else:
        conn.execute("DROP TRIGGER events_no_update")
    conn.close()
    with open_project(root / "proj") as proj:
        problems = proj.verify().problems
    assert problems == ["event log: history guards removed: events_no_update"], problems


def test_verify_finds_tags_and_snapshot_events_that_lost_each_other(root: Path) -> None:
    import lancedb

    table = lancedb.connect(str(root / "proj" / "lancedb")).open_table("chunks")
    table.tags.delete("base")
    table.tags.create("stranger", 3)
    with open_project(root / "proj") as proj:
        problems = proj.verify().problems
    assert any("'base'" in p and "no tag" in p for p in problems), problems
    assert any("'stranger'" in p and "no index.snapshot_taken" in p for p in problems), problems


def test_verify_is_ok_and_the_cli_exits_0_on_an_intact_project(root: Path) -> None:
    with open_project(root / "proj") as proj:
        report = proj.verify()
        assert report.ok and report.problems == []
        assert report.events_checked == len(proj.events.query()) and report.events_checked > len(QUESTIONS)
        assert "ok" in report._repr_html_().lower()
    done = _verify_cli(root)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr
