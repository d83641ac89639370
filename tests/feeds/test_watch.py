"""``proj.watch`` and ``ragtt watch`` on Flask's docs, release after release: one version per
settled batch, the final index equal to a fresh ingest, replays identical, and a SIGKILL in
the middle of a batch that the next start converges from."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ragtt
from ragtt.ingest.loaders import supported_suffixes
from tests.conftest import flask_releases

DEBOUNCE = "0.4s"
WAIT_S = 60.0  # the longest any wait below may take (a loaded machine is slow)


def files_of(folder: Path) -> dict[str, str]:
    """The files ingest would index (a supported suffix, not hidden), by source: their hash."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.rglob("*")
        if p.is_file()
        and p.suffix in supported_suffixes()
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    }


def indexed(proj: ragtt.Project) -> dict[str, str]:
    version = proj.version  # one version throughout: the watcher may write meanwhile
    sources = proj.chunks(at=version)["source"].unique().to_list()
    return {s: proj.document(s, at=version).content_hash for s in sources}


def wait_until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    for _ in range(int(WAIT_S / 0.1)):
        if check():
            return
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)
    raise AssertionError(f"timed out after {WAIT_S:.0f} s waiting for {what}")


def mirror_into(release: Path, folder: Path) -> None:
    """Make ``folder`` hold ``release``'s files: copy what differs, delete what it lacks."""
    wanted = files_of(release)
    for name in set(files_of(folder)) - set(wanted):
        (folder / name).unlink()
    for name, digest in wanted.items():
        target = folder / name
        if not target.exists() or hashlib.sha256(target.read_bytes()).hexdigest() != digest:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(release / name, target)


def release_steps(docs: Path) -> list[Callable[[], None]]:
    """Five Flask releases across the history copied in one after another, each followed by a
    rename and a deletion, then the last release: adds, edits, renames and deletions."""
    steps: list[Callable[[], None]] = []
    for release in flask_releases()[::5]:
        steps.append(lambda release=release: mirror_into(release, docs))
        steps.append(lambda: (docs / "docs" / "config.rst").rename(docs / "docs" / "configuration.rst"))
        steps.append(lambda: (docs / "docs" / "installation.rst").unlink())
    steps.append(lambda: mirror_into(flask_releases()[-1], docs))
    return steps


def ignored_leftovers(docs: Path) -> None:
    (docs / "notes.md~").write_text("an editor's backup: ignored")
    (docs / ".git").mkdir()
    (docs / ".git" / "HEAD.md").write_text("ignored")


def check_batches(proj: ragtt.Project, batches: list[dict[str, Any]], steps: int) -> None:
    """Each batch that changed the index made exactly ONE ingest version; every step made one."""
    versions = proj.versions()
    for batch in batches:
        made = versions.filter(
            (versions["version"] > batch["index_version_before"])
            & (versions["version"] <= batch["index_version_after"])
            & (versions["operation"] == "ingest")
        )
        changed = batch["index_version_after"] != batch["index_version_before"]
        assert len(made) == (1 if changed else 0), batch
    assert sum(b["index_version_after"] != b["index_version_before"] for b in batches) >= steps
    assert any(b["removed"] and b["added"] for b in batches)  # a rename: one version, out and in
    assert not any(b["error"] for b in batches)


def same_as_fresh_ingest(tmp_path: Path, final: Any) -> None:
    with ragtt.Project.open(tmp_path / "fresh", embedder=ragtt.HashEmbedder(), progress=False) as fresh:
        fresh.ingest(flask_releases()[-1])
        assert fresh.chunks().select("chunk_id", "source", "text").sort("chunk_id").equals(final)


def test_watch_follows_flask_releases(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    with ragtt.Project.open(tmp_path / "proj", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        handle = proj.watch(docs, debounce=DEBOUNCE)
        query_ids = []
        steps = release_steps(docs)
        try:
            wait_until(lambda: len(handle.batches) >= 1, "the catch-up")
            ignored_leftovers(docs)
            for step in steps:
                step()
                wait_until(lambda: indexed(proj) == files_of(docs), "the index to mirror the folder")
                query_ids.append(proj.query("how do I configure the secret key?", generate=False).query_id)
        finally:
            handle.stop()
        assert handle.errors == [] and not handle.running
        check_batches(proj, [b.to_dict() for b in handle.batches], len(steps))
        for query_id in query_ids:
            assert proj.replay(query_id).matches_original
        final = proj.chunks().select("chunk_id", "source", "text").sort("chunk_id")
        assert proj.verify().ok
    same_as_fresh_ingest(tmp_path, final)


def test_ragtt_watch_cli_follows_flask_releases(tmp_path: Path) -> None:
    """The acceptance run through the command line: ``ragtt watch`` in its own process, this
    test copying releases in and querying meanwhile; its JSON lines are the batches."""
    docs = tmp_path / "docs"
    docs.mkdir()
    project = tmp_path / "proj"
    watcher = subprocess.Popen(
        _command(project, docs, "--json"),
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    assert watcher.stdout is not None
    reader = threading.Thread(target=lambda: lines.extend(iter(watcher.stdout.readline, "")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    steps = release_steps(docs)
    query_ids = []
    try:
        wait_until(lambda: len(lines) >= 1, "the catch-up's line")
        with ragtt.Project.open(project, create=False, embedder=ragtt.HashEmbedder(), progress=False) as proj:
            ignored_leftovers(docs)
            for step in steps:
                step()
                wait_until(lambda: indexed(proj) == files_of(docs), "the index to mirror the folder")
                query_ids.append(proj.query("how do I configure the secret key?", generate=False).query_id)
        watcher.send_signal(signal.SIGINT)
        assert watcher.wait(timeout=WAIT_S) == 0
    finally:
        if watcher.poll() is None:
            watcher.kill()
    reader.join(WAIT_S)
    batches = [json.loads(line) for line in lines]
    assert batches[0]["catch_up"] and not any(b["catch_up"] for b in batches[1:])
    with ragtt.Project.open(project, create=False, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        check_batches(proj, batches, len(steps))
        for query_id in query_ids:
            assert proj.replay(query_id).matches_original
        assert proj.verify().ok
        final = proj.chunks().select("chunk_id", "source", "text").sort("chunk_id")
    same_as_fresh_ingest(tmp_path, final)


def test_ragttignore_and_files_still_being_written(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "keep.md").write_text("kept")
    (docs / "drafts").mkdir()
    (docs / "drafts" / "wip.md").write_text("a draft")
    (docs / ".ragttignore").write_text("drafts/\n")
    with ragtt.Project.open(tmp_path / "proj", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        handle = proj.watch(docs, debounce="0.2s", snapshot_every=1)
        try:
            wait_until(lambda: len(handle.batches) >= 1, "the catch-up")
            assert sorted(indexed(proj)) == ["keep.md"]
            assert handle.batches[0].snapshot is not None
            with (docs / "growing.md").open("w") as fh:  # written slowly, past several batches
                for i in range(25):
                    fh.write(f"line {i} of a file still being written\n")
                    fh.flush()
                    time.sleep(0.1)
            wait_until(lambda: "growing.md" in indexed(proj), "the finished file")
            assert proj.document("growing.md").text.count("line ") == 25
            assert any("growing.md" in b.waiting for b in handle.batches)
            (docs / ".ragttignore").write_text("")
            wait_until(lambda: "drafts/wip.md" in indexed(proj), "the un-ignored draft")
        finally:
            handle.stop()
        assert handle.errors == []
        assert len(proj.snapshots()) >= 3


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}


def _command(project: Path, docs: Path, *options: str) -> list[str]:
    command = [sys.executable, "-m", "ragtt.cli", "--project", str(project), "--embedder", "hash", *options]
    return [*command, "watch", str(docs), "--debounce", "0.3s"]


def _cli(project: Path, docs: Path) -> Callable[[], subprocess.Popen[str]]:
    command = _command(project, docs)
    return lambda: subprocess.Popen(command, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _start_big_batch(project: Path, docs: Path, release: Path) -> None:
    """Write a batch big enough to be interrupted inside (many pages, each embedded and
    written) and return when its first table data file appears (its intent is staged, its
    version not yet committed)."""

    def data_files() -> set[Path]:
        return {f for f in (project / "lancedb").rglob("*") if f.parent.name == "data"}

    before = data_files()
    body = (release / "docs" / "config.rst").read_text()
    for i in range(200):
        (docs / f"copy-{i}.rst").write_text(f"Copy {i}\n\n{body}")
    wait_until(lambda: bool(data_files() - before), "the batch's table write")


def test_cli_watch_killed_mid_batch_converges_on_restart(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    project = tmp_path / "proj"
    release = flask_releases()[-1]
    mirror_into(release, docs)
    start = _cli(project, docs)
    first = start()
    try:
        assert first.stdout is not None
        line = first.stdout.readline()  # the catch-up's line (blocks until it is written)
        assert "catch-up v" in line, line + first.stderr.read() if first.stderr else line
        _start_big_batch(project, docs, release)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=WAIT_S)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.stdout is not None
    assert "batch v" not in first.stdout.read()  # killed before the batch finished
    second = start()
    try:
        assert second.stdout is not None
        line = second.stdout.readline()
        assert "catch-up v" in line
        second.send_signal(signal.SIGINT)  # Ctrl-C: ends between batches
        assert second.wait(timeout=WAIT_S) == 0
    finally:
        if second.poll() is None:
            second.kill()
    with ragtt.Project.open(project, create=False, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        assert proj.verify().ok
        assert indexed(proj) == files_of(docs)


def test_cli_ctrl_c_mid_batch_finishes_the_batch(tmp_path: Path) -> None:
    """Ctrl-C while a batch is written: the batch finishes and prints its line, then the
    watch ends (on Python 3.11 a Ctrl-C during ``Thread.join`` marks the thread stopped, and
    the CLI used to exit with the batch half-written)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    project = tmp_path / "proj"
    release = flask_releases()[-1]
    watcher = _cli(project, docs)()
    try:
        assert watcher.stdout is not None
        assert "catch-up" in watcher.stdout.readline()
        _start_big_batch(project, docs, release)
        watcher.send_signal(signal.SIGINT)
        out, err = watcher.communicate(timeout=WAIT_S)
    finally:
        if watcher.poll() is None:
            watcher.kill()
    assert watcher.returncode == 0, err
    assert "batch v" in out and "+copy-" in out, out + err  # the batch in progress was finished, and said so
    assert "stopping after the batch in progress" in err
    with ragtt.Project.open(project, create=False, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        assert proj.verify().ok
        # what the finished batch wrote is in the index, exactly as on disk (changes that came
        # after the Ctrl-C wait for the next start's catch-up)
        now = indexed(proj)
        assert now and now.items() <= files_of(docs).items()
