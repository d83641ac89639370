"""Missing or damaged stores are named errors, never silently recreated; only ingest
creates a project; an interrupted creation is made again; an older project is adopted."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ragtt
from tests.history.scenarios import build_base, open_project

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def proj_path(tmp_path: Path) -> Path:
    path = build_base(tmp_path)
    with open_project(path) as proj:
        proj.assertions.init_namespace("facts")
    return path


def _latest_manifest(path: Path) -> Path:
    manifests = sorted((path / "lancedb" / "chunks.lance" / "_versions").glob("*.manifest"))
    return manifests[0]  # V2 names count down from u64::MAX: the newest sorts first


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragtt.cli", *args, "--embedder", "hash"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "damage, named",
    [
        (lambda p: (p / "events.db").unlink(), "events.db"),
        (lambda p: (p / "events.db").write_bytes(b"this is not a database" * 100), "events.db"),
        (lambda p: shutil.rmtree(p / "lancedb"), "chunks.lance"),
        (lambda p: _latest_manifest(p).unlink(), "manifests are missing"),
        (lambda p: _latest_manifest(p).write_bytes(b"garbage" * 10), "chunks.lance"),
        (lambda p: (p / "assertions.db").unlink(), "assertions.db"),
        (lambda p: (p / "ragtt.json").write_text("{not json"), "ragtt.json"),
    ],
    ids=[
        "events.db deleted",
        "events.db garbage",
        "lancedb deleted",
        "latest manifest deleted",
        "latest manifest corrupt",
        "assertions.db deleted",
        "marker corrupt",
    ],
)
def test_a_missing_or_damaged_store_is_a_named_error(proj_path: Path, damage, named: str) -> None:  # type: ignore[no-untyped-def]
    damage(proj_path)
    for create in (True, False):
        with pytest.raises(ragtt.ProjectDamagedError, match=named) as info:
            ragtt.Project.open(proj_path, embedder=ragtt.HashEmbedder(), progress=False, create=create)
        assert "backup" in str(info.value) or "restore" in str(info.value)
    done = _cli("snapshots", "--project", str(proj_path))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and named in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    if (proj_path / "lancedb").exists() and named != "events.db":
        assert not (proj_path / "events.db").exists() or (proj_path / "events.db").stat().st_size > 0


def test_a_damaged_assertion_store_is_named_on_open(proj_path: Path) -> None:
    """The marker promises the store, so the opening's cheap check reads its header."""
    (proj_path / "assertions.db").write_bytes(b"not sqlite at all" * 64)
    with pytest.raises(ragtt.ProjectDamagedError, match=r"assertion store .*assertions\.db is not a SQLite"):
        open_project(proj_path)


def test_only_ingest_creates_a_project(tmp_path: Path) -> None:
    folder = tmp_path / "not-a-project"
    with pytest.raises(ragtt.NotAProjectError, match="not a ragtt project"):
        ragtt.Project.open(folder, embedder=ragtt.HashEmbedder(), create=False)
    assert not folder.exists()
    for verb in (["snapshots"], ["query", "anything"], ["events"], ["verify"], ["trace", "q"], ["snapshot", "x"]):
        done = _cli(*verb, "--project", str(folder))
        assert done.returncode == 2, (verb, done.stderr)
        assert done.stderr.count("\n") == 1 and "not a ragtt project" in done.stderr
        assert f"ragtt ingest DOCS --project {folder}" in done.stderr
    assert not folder.exists(), "a read-only verb must not create anything"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nSome text to index.\n")
    assert _cli("ingest", str(docs), "--project", str(folder)).returncode == 0
    assert (folder / "ragtt.json").exists()
    assert _cli("snapshots", "--project", str(folder)).returncode == 0


def test_percent_ragtt_open_refuses_a_folder_that_is_not_a_project(tmp_path: Path) -> None:
    from IPython import get_ipython
    from IPython.core.error import UsageError
    from IPython.core.interactiveshell import InteractiveShell

    # the one shell of the process, whoever made it (under xdist another file's test may have made a
    # plain InteractiveShell, which a terminal shell from start_ipython() would clash with)
    shell = get_ipython() or InteractiveShell.instance()
    assert shell is not None
    shell.run_line_magic("load_ext", "ragtt_nb")
    with pytest.raises(UsageError, match=r"no ragtt project at .*%ragtt open .* --create"):
        shell.run_line_magic("ragtt", f"open {tmp_path / 'nothing'} --embedder hash")
    proj = shell.run_line_magic("ragtt", f"open {tmp_path / 'nothing'} --embedder hash --create")
    assert isinstance(proj, ragtt.Project)
    proj.close()
    # With a configured folder, a read verb refuses to create it and an ingest creates it.
    magics = shell.magics_manager.registry["RagttMagics"]
    magics._proj = None
    magics.project, magics.embedder = str(tmp_path / "configured"), "hash"
    with pytest.raises(UsageError, match=r"no ragtt project at .*configured"):
        shell.run_line_magic("ragtt", "snapshots")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nText.\n")
    report = shell.run_line_magic("ragtt", f"ingest {docs}")
    assert report.documents_added == ["a.md"] and (tmp_path / "configured" / "ragtt.json").exists()
    magics.project_for(create=False).close()
    magics._proj = None


def test_an_interrupted_creation_is_made_again(tmp_path: Path) -> None:
    path = tmp_path / "proj"
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False):
        pass
    (path / "ragtt.json").unlink()  # as if the process died just before writing the marker
    with pytest.raises(ragtt.NotAProjectError):
        ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), create=False)
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        assert proj.version == 2 and proj.verify().ok
        proj.ingest_texts({"a.md": "text"})


def test_a_project_from_before_the_marker_is_adopted(tmp_path: Path) -> None:
    """A schema-1 log (no hash chain, no marker), as ragtt 0.1 wrote it, opens and verifies."""
    import json

    from ragtt._sqlite import connect
    from ragtt.events.migrations import MIGRATIONS
    from ragtt.events.sql import run_script
    from ragtt.index.table import ChunkTable

    path = tmp_path / "old"
    path.mkdir()
    conn = connect(path / "events.db")
    run_script(conn, str(MIGRATIONS[0]))
    conn.execute("PRAGMA user_version = 1")
    ChunkTable.create(path / "lancedb", "chunks", 256)
    for version in (1, 2):
        conn.execute(
            "INSERT INTO index_versions VALUES ('chunks', ?, '2025-01-01T00:00:00.000000Z', 'create')", (version,)
        )
    conn.execute(
        "INSERT INTO events (event_id, ts, type, query_id, index_version, doc_id, payload) VALUES "
        "('e1', '2025-01-01T00:00:01.000000Z', 'query.received', 'q1', 2, NULL, ?)",
        (json.dumps({"text": "hello"}),),
    )
    conn.close()
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False, create=False) as proj:
        assert (path / "ragtt.json").exists()
        report = proj.verify(deep=True)
        # its one event, and the record of the index files it had, taken on this first open
        assert report.ok and report.events_checked == 2, report.problems
        assert report.files_checked == report.files_adopted > 0 and "adopted, not proven" in report.to_text()
        proj.ingest_texts({"a.md": "new text after the upgrade"})
        after = proj.verify(deep=True)
        assert after.ok and after.files_checked > after.files_adopted


def test_two_processes_adopting_an_old_project_agree_on_its_id(tmp_path: Path) -> None:
    """The adoption re-reads the marker under the creation lock: a process that waited for
    another's adoption takes its marker instead of writing a second project id over it."""
    import fcntl
    import os
    import threading

    from ragtt._sqlite import connect
    from ragtt.events.migrations import MIGRATIONS
    from ragtt.events.sql import run_script
    from ragtt.index.table import ChunkTable
    from ragtt.marker import MARKER, Marker

    path = tmp_path / "old"
    path.mkdir()
    conn = connect(path / "events.db")
    run_script(conn, str(MIGRATIONS[0]))
    conn.execute("PRAGMA user_version = 1")
    for version in (1, 2):
        conn.execute(
            "INSERT INTO index_versions VALUES ('chunks', ?, '2025-01-01T00:00:00.000000Z', 'create')", (version,)
        )
    conn.close()
    ChunkTable.create(path / "lancedb", "chunks", 256)
    held = os.open(path / f".{MARKER}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(held, fcntl.LOCK_EX)  # the other process, mid-adoption
    opened: list[int] = []

    def adopt() -> None:
        with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False, create=False) as proj:
            opened.append(proj.version)

    waiter = threading.Thread(target=adopt)
    waiter.start()
    waiter.join(0.5)
    assert waiter.is_alive() and not (path / MARKER).exists()  # it waits for the lock
    theirs = Marker.new("chunks").with_store("tables", ["chunks"])
    theirs.write(path)
    fcntl.flock(held, fcntl.LOCK_UN)
    os.close(held)
    waiter.join(60)
    assert opened == [2] and Marker.read(path) == theirs  # its marker, not a second id over it


def test_a_lost_marker_never_wipes_a_history(proj_path: Path) -> None:
    (proj_path / "ragtt.json").unlink()
    size = (proj_path / "events.db").stat().st_size
    with pytest.raises(ragtt.ProjectDamagedError, match=r"ragtt\.json is missing but .* holds \d+ events"):
        ragtt.Project.open(proj_path, embedder=ragtt.HashEmbedder(), progress=False)
    assert (proj_path / "events.db").stat().st_size == size and (proj_path / "lancedb").is_dir()


def test_a_project_reembedded_elsewhere_refuses_stale_writes_and_queries(proj_path: Path) -> None:
    with open_project(proj_path) as stale, open_project(proj_path) as other:
        other.reembed(ragtt.HashEmbedder(128))
        with pytest.raises(ragtt.ConfigError, match="re-embedded with ragtt-hash-v1-128"):
            stale.ingest_texts({"late.md": "written with the old embedder"})
        with pytest.raises(ragtt.ConfigError, match="reopen the project"):
            stale.query("refund window", generate=False)
    with open_project(proj_path) as fresh:
        assert fresh.embedder.dim == 128 and fresh.verify().ok
