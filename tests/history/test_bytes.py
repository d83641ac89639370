"""verify() proves the bytes, not only the log; damage below the log is always a named error.

Each case damages a copy of one project (three Flask releases, logged queries, a snapshot):
verify() reports it (``ok`` False, the file named) and ``ragtt verify`` exits 1; a read that
cannot go on raises ProjectDamagedError naming what broke, one line and exit 2 in the CLI,
never a traceback. The index cases run on the SQLite log with a local index and on the
Postgres log with the index on an S3-compatible server.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ragtt
from tests.backends import (
    BUCKET,
    backend_for,
    child_env,
    copy_project,
    events_uri,
    index_args,
    s3_client,
    s3_env,
)
from tests.conftest import flask_releases
from tests.history.scenarios import open_project

REPO = Path(__file__).resolve().parents[2]
QUESTIONS = ["How do I set the secret key?", "What are blueprints?", "How do I test the application?"]


BACKENDS = ["sqlite", "postgres+s3"]
# A case that concerns one backend only is generated for it alone (never skipped on the other):
# a SQLite file of the project folder (the Postgres log has none), or the index cache (which
# mirrors an index on object storage).
SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
OBJECT_STORAGE_ONLY = pytest.mark.parametrize("backend", ["postgres+s3"], indirect=True)


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    with backend_for(request) as name:
        yield name


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Path:
    """A folder holding ``proj``: three Flask releases ingested, each queried, a snapshot."""
    root = tmp_path_factory.mktemp(f"bytes-{backend}")
    with open_project(root / "proj", embedder=ragtt.HashEmbedder()) as proj:
        for release in flask_releases()[:3]:
            proj.ingest(release)
            for question in QUESTIONS:
                proj.query(question, generate=False)
        proj.snapshot("three-releases")
        assert proj.verify(deep=True).ok
    return root


@pytest.fixture
def path(base: Path, tmp_path: Path) -> Path:
    """A copy of the base project (on Postgres its database cloned, on S3 its objects copied)."""
    return copy_project(base, tmp_path / "copy") / "proj"


def _open(path: Path, **kwargs: Any) -> ragtt.Project:
    return open_project(path, embedder=ragtt.HashEmbedder(), **kwargs)


def _cli(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    uri = events_uri(path)
    return subprocess.run(
        [sys.executable, "-m", "ragtt.cli", *args, "--project", str(path), "--embedder", "hash"]
        + (["--events-uri", uri] if uri else []),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **child_env(path), **s3_env()},
    )


def _one_line_exit_2(done: subprocess.CompletedProcess[str], named: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1 and named in done.stderr, done.stderr


# -- the index's files, local or on S3 ----------------------------------------------------------


def _on_s3() -> bool:
    return os.environ.get("RAGTT_TEST_S3") is not None


def _latest_data_file(path: Path) -> str:
    """A data file the latest version reads, as a path in the table."""
    from ragtt.index.table import ChunkTable

    where = index_args(path)
    table = ChunkTable(where.get("index_uri", path / "lancedb"), "chunks", storage_options=where.get("storage_options"))
    used, latest = table.tracked_files(), table.latest_version()
    return sorted(n for n, versions in used.items() if n.startswith("data/") and latest in versions)[0]


def _key(path: Path, name: str) -> str:
    prefix = index_args(path)["index_uri"].removeprefix(f"s3://{BUCKET}/")
    return f"{prefix}/chunks.lance/{name}"


def _delete(path: Path, name: str) -> None:
    if _on_s3():
        s3_client().delete_object(Bucket=BUCKET, Key=_key(path, name))
    else:
        (path / "lancedb" / "chunks.lance" / name).unlink()


def _overwrite(path: Path, name: str) -> None:
    """256 bytes in the middle of the file replaced: same size, different bytes."""
    if _on_s3():
        s3 = s3_client()
        data = bytearray(s3.get_object(Bucket=BUCKET, Key=_key(path, name))["Body"].read())
    else:
        data = bytearray((path / "lancedb" / "chunks.lance" / name).read_bytes())
    middle = len(data) // 2
    data[middle : middle + 256] = bytes(255 - b for b in data[middle : middle + 256])
    if _on_s3():
        s3.put_object(Bucket=BUCKET, Key=_key(path, name), Body=bytes(data))
    else:
        (path / "lancedb" / "chunks.lance" / name).write_bytes(bytes(data))


def test_a_deleted_data_file_is_named_by_verify_and_by_every_read(path: Path) -> None:
    name = _latest_data_file(path)
    _delete(path, name)
    with _open(path) as proj:
        report = proj.verify()
        asked = [e.query_id for e in proj.events.query(types="query.received")]
        assert not report.ok
        line = next(p for p in report.problems if name in p)
        assert "is missing" in line and "read it" in line
        assert any(q in line for q in asked), line  # the logged queries that searched those versions
        with pytest.raises(ragtt.ProjectDamagedError, match=name.split("/")[-1]) as info:
            proj.query("blueprints", generate=False)
        assert "backup" in str(info.value) and "ragtt verify" in str(info.value)
        with pytest.raises(ragtt.ProjectDamagedError, match=name.split("/")[-1]):
            proj.replay(asked[-1])
    done = _cli(path, "verify")
    assert done.returncode == 1 and name in done.stdout, done.stderr[-2000:]
    assert "Traceback" not in done.stdout + done.stderr
    _one_line_exit_2(_cli(path, "query", "blueprints", "--no-generate"), name.split("/")[-1])


def test_overwritten_bytes_are_found_by_a_deep_verify(path: Path) -> None:
    name = _latest_data_file(path)
    _overwrite(path, name)
    with _open(path) as proj:
        assert proj.verify().ok  # the sizes still match: only hashing sees it
        report = proj.verify(deep=True)
    assert not report.ok and report.deep
    line = next(p for p in report.problems if name in p)
    assert "SHA-256" in line and "Restore" in line
    done = _cli(path, "verify", "--deep")
    assert done.returncode == 1 and name in done.stdout and "Traceback" not in done.stderr


@OBJECT_STORAGE_ONLY
def test_a_deep_verify_reads_the_bucket_not_the_index_cache(path: Path, backend: str, tmp_path: Path) -> None:
    """The index cache's checksum proves its own copy; an object changed in the bucket after it
    was cached is what a fresh reader gets, so a deep verify must read the bucket."""
    name = _latest_data_file(path)
    cache = tmp_path / "index-cache"
    with _open(path, index_cache=cache) as proj:
        for event in proj.events.query(types="query.received"):
            assert proj.replay(event.query_id).matches_original  # the replays fill the cache
        assert list(cache.rglob(name.split("/")[-1])), "the cache should hold the file before it is changed"
        assert proj.verify(deep=True).ok
        _overwrite(path, name)
        report = proj.verify(deep=True)
    assert not report.ok
    line = next(p for p in report.problems if name in p)
    assert "SHA-256" in line


# -- SQLite's own checks, and the open-time check ------------------------------------------------


def _damage_page(db: Path, page: int) -> None:
    """Garbage over one page of ``db`` (its WAL folded in first, as a crash would leave it)."""
    from ragtt._sqlite import connect

    conn = connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(db.read_bytes())
    size = int.from_bytes(data[16:18], "big") or 65536
    assert len(data) > size * (page + 1), "the database is smaller than the test expects"
    data[size * page : size * (page + 1)] = os.urandom(size)
    db.write_bytes(bytes(data))


@SQLITE_ONLY
def test_a_corrupt_page_of_the_event_log_is_reported_and_named(path: Path, backend: str) -> None:
    _damage_page(path / "events.db", 3)
    done = _cli(path, "verify")
    assert done.returncode == 1 and "events.db" in done.stdout and "Traceback" not in done.stderr, done
    query = _cli(path, "replay", "--query-id", "nope")
    assert "Traceback" not in query.stderr and query.returncode in (1, 2)


@SQLITE_ONLY
def test_a_corrupt_page_of_the_assertion_store_is_reported(path: Path, backend: str) -> None:
    with _open(path) as proj:
        proj.assertions.init_namespace("facts")
    _damage_page(path / "assertions.db", 3)
    with _open(path) as proj:
        report = proj.verify(deep=True)
    assert not report.ok and any("assertions.db" in p and "integrity_check" in p for p in report.problems)
    done = _cli(path, "verify")
    assert done.returncode == 1 and "assertions.db" in done.stdout and "Traceback" not in done.stderr


@SQLITE_ONLY
def test_a_dropped_events_table_is_named_on_open(path: Path, backend: str) -> None:
    from ragtt._sqlite import connect

    conn = connect(path / "events.db")
    conn.execute("DROP TABLE events")
    conn.close()
    with pytest.raises(ragtt.ProjectDamagedError, match=r"events\.db has lost its table events"):
        _open(path)
    for verb in (["query", "blueprints", "--no-generate"], ["replay", "--query-id", "x"]):
        _one_line_exit_2(_cli(path, *verb), "events.db")
    done = _cli(path, "verify")
    assert done.returncode == 1 and "table events" in done.stdout and "Traceback" not in done.stderr


@SQLITE_ONLY
def test_a_garbage_header_is_named_on_open(path: Path, backend: str) -> None:
    db = path / "events.db"
    data = bytearray(db.read_bytes())
    data[:16] = b"not a database!!"
    db.write_bytes(bytes(data))
    with pytest.raises(ragtt.ProjectDamagedError, match=r"events\.db"):
        _open(path)


@SQLITE_ONLY
def test_a_damaged_embedding_cache_is_moved_aside_and_rebuilt(path: Path, backend: str) -> None:
    cache = path / "embeddings.db"
    _damage_page(cache, 2)
    with _open(path) as proj:
        assert not proj.verify().ok and any("embeddings.db" in p for p in proj.verify().problems)
        with pytest.warns(RuntimeWarning, match="moved aside"):
            found = proj.query("What are blueprints?", generate=False)
        assert found.chunks
    assert (path / "embeddings.db.damaged").exists()
    with _open(path) as proj:
        assert proj.verify(deep=True).ok


# -- bad values: the one-line error --------------------------------------------------------------


@SQLITE_ONLY
def test_bad_values_get_the_one_line_error(path: Path, backend: str, tmp_path: Path) -> None:
    bad = "blue\ud800prints"
    with _open(path) as proj:
        for call in (
            lambda: proj.query(bad, generate=False),
            lambda: proj.replay_text(bad, at=3),
            lambda: proj.snapshot(bad),
            lambda: proj.document(bad),
            lambda: proj.remove(bad),
        ):
            with pytest.raises(ragtt.ConfigError, match=r"lone surrogate \(\\ud800\)"):
                call()
        report = proj.ingest_texts({bad: "text", "ok.md": "fine"})
        assert [name for name, _ in report.failed] == ["blue\\ud800prints"] and report.documents_added == ["ok.md"]
        with pytest.raises(ragtt.ConfigError, match="top_k must be at least 1; got 0"):
            proj.query("blueprints", top_k=0, generate=False)
        with pytest.raises(ragtt.ConfigError, match="at most 200"):
            proj.snapshot("a" * 5000)
        store = proj.assertions
        store.init_namespace("facts")
        from ragtt.temporal import RetrievalQuery

        with pytest.raises(ragtt.ValidationError, match="lone surrogate"):
            store.retrieve(RetrievalQuery("facts", 1.0, query_text=bad, strategy="fts"))
    _one_line_exit_2(_cli(path, "query", "blueprints", "--top-k", "-3"), "must be at least 1")
    _one_line_exit_2(_cli(path, "query", "blueprints", "--top-k", "0"), "must be at least 1")
    _one_line_exit_2(_cli(path, "snapshot", "a" * 5000), "at most 200")
    # a file whose name is not UTF-8: reported by its escaped name, the others ingested
    docs = tmp_path / "odd"
    docs.mkdir()
    (docs / "fine.md").write_text("# Fine\n\nA file with a good name.\n")
    with open(os.path.join(os.fsencode(docs), b"caf\xe9.md"), "w") as fh:
        fh.write("# Cafe\n\nLatin-1 bytes in its name.\n")
    with _open(path) as proj:
        report = proj.ingest(docs)
    assert report.documents_added == ["fine.md"]
    assert [name for name, _ in report.failed] == ["caf\\xe9.md"] and "rename" in report.failed[0][1]


# -- front ends: damage is never a traceback ----------------------------------------------------


@SQLITE_ONLY
def test_every_front_end_names_the_damage(path: Path, backend: str) -> None:
    from fastapi.testclient import TestClient
    from IPython import get_ipython
    from IPython.core.error import UsageError
    from IPython.core.interactiveshell import InteractiveShell
    from mcp import Client

    from ragtt.serve import create_app
    from ragtt.serve_mcp import create_server
    from ragtt_nb.magics import RagttMagics
    from tests.serve.conftest import run_in_own_loop

    name = _latest_data_file(path)
    file = name.split("/")[-1]
    with TestClient(create_app(path, embedder=ragtt.HashEmbedder())) as client:
        _delete(path, name)
        response = client.post("/query", json={"text": "blueprints", "generate": False})
        assert response.status_code == 409 and file in response.text, response.text
    # the one shell of the process, whoever made it (under xdist another file's test may have made a
    # plain InteractiveShell, which a terminal shell from start_ipython() would clash with)
    shell = get_ipython() or InteractiveShell.instance()
    shell.extension_manager.load_extension("ragtt_nb")
    magics = RagttMagics(shell=shell)  # its own instance: no project another test left open
    shell.register_magics(magics)
    shell.run_line_magic("ragtt", f"open {path} --embedder hash")
    try:
        with pytest.raises(UsageError, match=file):
            shell.run_line_magic("ragtt", "query blueprints --no-generate")
    finally:
        magics.project_for(create=False).close()
    server, worker = create_server(path, embedder=ragtt.HashEmbedder())
    got: list[Any] = []

    async def session() -> None:
        async with asyncio.timeout(60), Client(server) as client:
            got.append(await client.call_tool("query", {"text": "blueprints", "generate": False}))

    try:
        run_in_own_loop(session, 120, "the MCP session")
    finally:
        worker.close()
    assert got[0].is_error and file in got[0].content[0].text


# -- backups -------------------------------------------------------------------------------------


def _open_backup(path: Path) -> ragtt.Project:
    """A backup is a local project whatever the original's backends: no URI, no credentials."""
    return ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False)


def _cli_local(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragtt.cli", *args, "--project", str(path), "--embedder", "hash"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
        env={k: v for k, v in os.environ.items() if k not in ("RAGTT_EVENTS_URI", "RAGTT_INDEX_URI")},
    )


def test_a_backup_taken_while_another_process_ingests_is_whole(path: Path, backend: str, tmp_path: Path) -> None:
    worker = subprocess.Popen(
        [sys.executable, "-m", "tests.history.ingest_worker", str(path), "w", "6"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **child_env(path), **s3_env()},
    )
    try:
        assert worker.stdout is not None
        worker.stdout.readline()  # it has written once: the backup runs beside its next writes
        with _open(path) as proj:
            report = proj.backup(tmp_path / "backup")
            asked = [e.query_id for e in proj.events.query(types="query.received")]
    finally:
        _, err = worker.communicate(timeout=120)
    assert worker.returncode == 0, err
    assert report.files_copied > 0 and report.databases[0] == "events.db"
    if backend != "sqlite":  # the log came from Postgres, the index from the bucket: now all local
        assert report.databases == ["events.db", "embeddings.db"]
        assert not list((tmp_path / "backup").glob("*.partial-*"))
    with _open_backup(tmp_path / "backup") as copy:
        proven = copy.verify(deep=True)
        assert proven.ok and proven.files_adopted == 0, proven.problems
        assert copy.version == report.index_version
        replayed = [e.query_id for e in copy.events.query(types="query.received")]
        assert replayed == asked  # every logged query, the same ids
        for query_id in replayed:
            assert copy.replay(query_id).matches_original
    done = _cli_local(tmp_path / "backup", "verify", "--deep")
    assert done.returncode == 0, done.stdout
    with _open(path) as proj, pytest.raises(ragtt.ConfigError, match="not empty"):
        proj.backup(tmp_path / "backup")
    backed = _cli(path, "backup", str(tmp_path / "second"))
    assert backed.returncode == 0 and "verify --deep" in backed.stdout, backed.stderr
    assert _cli_local(tmp_path / "second", "verify", "--deep").returncode == 0


def test_a_backup_refuses_a_damaged_source(path: Path, tmp_path: Path) -> None:
    name = _latest_data_file(path)
    _overwrite(path, name)
    with _open(path) as proj, pytest.raises(ragtt.ProjectDamagedError, match=name.split("/")[-1]):
        proj.backup(tmp_path / "backup")
    assert not (tmp_path / "backup").exists() and not list(tmp_path.glob(".backup.partial-*"))
