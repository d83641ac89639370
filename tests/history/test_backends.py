"""Choosing the event log's backend: the URI decides, the marker remembers which, and the
log remembers whose it is, so a folder and another project's database are never mixed."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ragtt
from tests.backends import use_backend

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def uri(postgres: str):  # type: ignore[no-untyped-def]
    """A fresh database's URI (through the same helper the parametrized modules use)."""
    from tests.backends import events_uri

    with use_backend("postgres", postgres):

        def make(name: str) -> str:
            found = events_uri(Path("/backend-tests") / name / os.urandom(6).hex())
            assert found is not None
            return found

        yield make


def _open(path: Path, **kwargs):  # type: ignore[no-untyped-def]
    return ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False, **kwargs)


def test_a_postgres_project_keeps_no_log_in_its_folder_and_says_so(tmp_path: Path, uri) -> None:  # type: ignore[no-untyped-def]
    db = uri("a")
    with _open(tmp_path / "p", events_uri=db) as proj:
        proj.ingest_texts({"a.md": "# A\n\nThe refund window is 30 days.\n"})
        asked = proj.query("refund window", generate=False)
    assert not (tmp_path / "p" / "events.db").exists()
    assert (
        "postgresql" in (tmp_path / "p" / "ragtt.json").read_text()
        and "@" not in (tmp_path / "p" / "ragtt.json").read_text()
    )
    with pytest.raises(ragtt.ConfigError, match="events_uri='postgresql://"):
        _open(tmp_path / "p")
    with _open(tmp_path / "local") as local:
        local.ingest_texts({"b.md": "text"})
    with pytest.raises(ragtt.ConfigError, match="not in Postgres"):
        _open(tmp_path / "local", events_uri=db)
    with pytest.raises(ragtt.ConfigError, match="postgresql://"):
        _open(tmp_path / "other", events_uri="mysql://x@y/z")
    with _open(tmp_path / "p", events_uri=db) as again:
        assert again.replay(asked.query_id).matches_original and again.verify().ok


def test_a_query_id_prefix_resolves_in_a_postgres_log(tmp_path: Path, uri) -> None:  # type: ignore[no-untyped-def]
    with _open(tmp_path / "p", events_uri=uri("prefix")) as proj:
        proj.ingest_texts({"a.md": "# A\n\nThe refund window is 30 days.\n"})
        asked = proj.query("refund window", generate=False)
        replayed = proj.replay(asked.query_id[:-6])  # a prefix the SQL resolves, not Python
        assert replayed.original_query_id == asked.query_id and replayed.matches_original
        assert proj.run(replayed.query_id[:-4]).query_id == replayed.query_id


def test_the_environment_variable_names_the_log(tmp_path: Path, uri, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    db = uri("env")
    monkeypatch.setenv("RAGTT_EVENTS_URI", db)
    with _open(tmp_path / "p") as proj:
        proj.ingest_texts({"a.md": "text"})
        version = proj.version
    monkeypatch.delenv("RAGTT_EVENTS_URI")
    with _open(tmp_path / "p", events_uri=db) as proj:
        assert proj.version == version and len(proj.events.query(types="document.ingested")) == 1


def test_a_folder_pointed_at_another_projects_database_is_refused(tmp_path: Path, uri) -> None:  # type: ignore[no-untyped-def]
    first, second = uri("one"), uri("two")
    for name, db in (("one", first), ("two", second)):
        with _open(tmp_path / name, events_uri=db) as proj:
            proj.ingest_texts({f"{name}.md": f"document {name}"})
    with pytest.raises(ragtt.ProjectDamagedError, match="another project's database"):
        _open(tmp_path / "one", events_uri=second)


def test_an_empty_database_is_not_a_project_unless_created(tmp_path: Path, uri) -> None:  # type: ignore[no-untyped-def]
    import psycopg

    empty = uri("empty")
    with pytest.raises(ragtt.NotAProjectError):
        _open(tmp_path / "p", events_uri=empty, create=False)
    with psycopg.connect(empty) as conn:  # refusing it wrote nothing: no schema was migrated in
        tables = conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone()
    assert tables == (0,)


def test_a_password_never_reaches_a_message(tmp_path: Path, postgres: str) -> None:
    port = postgres.rsplit(":", 1)[1].split("/")[0]
    wrong = f"postgresql://ragtt:s3cret-pass@127.0.0.1:{int(port) + 1}/nowhere"
    with pytest.raises(ragtt.StoreError) as caught:
        _open(tmp_path / "p", events_uri=wrong)
    assert "s3cret-pass" not in str(caught.value) and "***" in str(caught.value)
    assert not (tmp_path / "p" / "ragtt.json").exists()


def test_the_cli_takes_events_uri(tmp_path: Path, uri) -> None:  # type: ignore[no-untyped-def]
    db = uri("cli")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nBackups are kept for 35 days.\n")
    env = {k: v for k, v in os.environ.items() if k != "RAGTT_EVENTS_URI"}
    common = ["--project", str(tmp_path / "p"), "--embedder", "hash", "--events-uri", db]
    for argv in (["ingest", str(docs)], ["query", "backups", "--no-generate"], ["verify"]):
        done = subprocess.run(
            [sys.executable, "-m", "ragtt.cli", *argv, *common],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, (argv, done.stderr)
    done = subprocess.run(
        [sys.executable, "-m", "ragtt.cli", "verify", "--project", str(tmp_path / "p"), "--embedder", "hash"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0 and "--events-uri" in done.stderr + done.stdout


@pytest.mark.parametrize("scheme", ["s3", "az"])
def test_an_index_on_object_storage_keeps_its_history_there(
    tmp_path: Path, scheme: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On S3 (moto) and on Azure Blob storage (Azurite), each a real server on loopback."""
    s3 = request.getfixturevalue({"s3": "s3", "az": "azure"}[scheme])  # the store's storage_options
    index = f"{scheme}://ragtt-test/objects-" + os.urandom(4).hex()
    with _open(tmp_path / "p", index_uri=index, storage_options=s3) as proj:
        proj.ingest_texts({"a.md": "# A\n\nThe refund window is 30 days.\n", "b.md": "# B\n\nBackups: Dublin.\n"})
        asked = proj.query("refund window", generate=False)
        proj.snapshot("before")
        proj.ingest_texts({"a.md": "# A\n\nThe refund window is 14 days.\n"})
        assert proj.optimize()
        assert proj.replay(asked.query_id).matches_original
        assert "30 days" in proj.replay_text("refund window", at="before").chunks[0].text
        assert proj.verify().ok
    assert not (tmp_path / "p" / "lancedb").exists()
    with _open(tmp_path / "p", storage_options=s3) as again:  # the project remembers where its index is
        assert again.replay(asked.query_id).matches_original and "before" in [s.label for s in again.snapshots()]
    with pytest.raises(ragtt.ConfigError, match=f"keeps its index in {scheme}://"):
        _open(tmp_path / "p", index_uri=index + "-other", storage_options=s3)
    with pytest.raises(ragtt.ProjectDamagedError, match="already holds a table"):
        _open(tmp_path / "stranger", index_uri=index, storage_options=s3)
    with _open(tmp_path / "p", storage_options=s3) as again:  # refusing it deleted nothing
        assert again.verify().ok
    monkeypatch.setenv("RAGTT_INDEX_URI", index + "-env")
    with _open(tmp_path / "env", storage_options=s3) as from_env:
        from_env.ingest_texts({"c.md": "text"})
    assert "-env" in (tmp_path / "env" / "ragtt.json").read_text()
    with pytest.raises(ragtt.ConfigError, match="object-store URI"):
        _open(tmp_path / "q", index_uri=str(tmp_path / "folder"))


def test_a_new_folder_joins_a_postgres_project_only_through_object_storage(
    tmp_path: Path,
    uri,  # type: ignore[no-untyped-def]
    s3: dict[str, str],
) -> None:
    local = uri("local-index")
    with _open(tmp_path / "a", events_uri=local) as proj:
        proj.ingest_texts({"a.md": "text"})
    with pytest.raises(ragtt.ConfigError, match="index on object storage"):
        _open(tmp_path / "b", events_uri=local)
    assert not (tmp_path / "b" / "ragtt.json").exists()
    shared = uri("shared-index")
    index = "s3://ragtt-test/joined-" + os.urandom(4).hex()
    with _open(tmp_path / "c", events_uri=shared, index_uri=index, storage_options=s3) as proj:
        proj.ingest_texts({"c.md": "# C\n\nThe refund window is 30 days.\n"})
        asked = proj.query("refund window", generate=False)
    with _open(tmp_path / "d", events_uri=shared, storage_options=s3) as joined:  # only the URI and credentials
        assert joined.replay(asked.query_id).matches_original
        joined.ingest_texts({"d.md": "written from the second workspace"})
    with _open(tmp_path / "c", events_uri=shared, storage_options=s3) as proj:
        assert set(proj.chunks()["source"]) == {"c.md", "d.md"} and proj.verify().ok


def test_the_write_lock_ends_with_its_holders_session(tmp_path: Path, uri, postgres: str) -> None:  # type: ignore[no-untyped-def]
    """What makes the lock safe across machines: the server, not the holder, releases it."""
    import psycopg

    from ragtt.opening import open_log

    db = uri("session")
    with _open(tmp_path / "p", events_uri=db):
        pass
    holder = open_log(tmp_path / "p", db, "chunks", create=False)
    waiter = open_log(tmp_path / "p", db, "chunks", create=False)
    with pytest.raises(ragtt.StoreError, match="lost the connection to the event log"), holder.write_lock():
        with waiter.try_write_lock() as got:
            assert not got
        with psycopg.connect(postgres, autocommit=True) as admin:  # the holder's machine drops off the network
            admin.execute("SELECT pg_terminate_backend(%s)", (holder._pg.info.backend_pid,))
        for _ in range(100):  # the server ends the session a moment after it is told to
            with waiter.try_write_lock() as got:
                if got:
                    break
            time.sleep(0.05)
        else:
            pytest.fail("the lock outlived its holder's session")
        holder.get_meta("config")  # the holder finds out at its next statement, and that error is what it sees
    holder.close()
    waiter.close()


def test_a_session_the_server_ended_is_a_store_error_that_says_so(tmp_path: Path, uri, postgres: str) -> None:  # type: ignore[no-untyped-def]
    import psycopg

    db = uri("terminated")
    with _open(tmp_path / "p", events_uri=db) as proj:
        proj.ingest_texts({"a.md": "# A\n\nThe refund window is 30 days.\n"})
        asked = proj.query("refund window", generate=False)
        sessions = "FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()"
        with psycopg.connect(postgres, autocommit=True) as admin:  # a restart, an admin, a network drop
            admin.execute(f"SELECT pg_terminate_backend(pid) {sessions}", (db.rsplit("/", 1)[1],))
            for _ in range(100):  # the server ends them a moment after it is told to
                if not admin.execute(f"SELECT 1 {sessions}", (db.rsplit("/", 1)[1],)).fetchone():
                    break
                time.sleep(0.05)
        for call in (lambda: proj.query("refund window", generate=False), proj.events.query, proj.verify):
            with pytest.raises(ragtt.StoreError, match=r"lost the connection to the (event log|embedding cache)"):
                call()
    with _open(tmp_path / "p", events_uri=db) as again:  # reopening is the cure, and nothing was lost
        assert again.replay(asked.query_id).matches_original and again.verify().ok
