"""Inputs that cannot be listed or read, symlinks, query ids that are not ids, CLI
arguments that are not what they seem, and a full disk under the embedding cache."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import ragtt

REPO = Path(__file__).resolve().parents[2]


def _docs(folder: Path, names: list[str]) -> Path:
    for name in names:
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"# {name}\n\nThe text of {name}.\n")
    return folder


def _collect_as_nobody(docs: Path) -> list[tuple[str, str]]:
    """collect_paths in a forked child that dropped to an unprivileged user (as root,
    permissions stop nothing); returns what it reported as failed."""
    import json

    from ragtt.ingest.pipeline import collect_paths

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no exec, no LanceDB, only the folder walk
        try:
            os.setgid(65534)
            os.setuid(65534)
            os.write(write, json.dumps(collect_paths(docs).failed).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as fh:
        out = fh.read()
    os.waitpid(pid, 0)
    return [tuple(f) for f in json.loads(out)]  # type: ignore[misc]


def test_an_unlistable_subfolder_fails_and_prunes_nothing(
    project: ragtt.Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = Path(tempfile.mkdtemp(prefix="ragtt-perm-"))
    os.chmod(work, 0o755)
    docs = _docs(work / "docs", ["top.md", "secret/inner.md"])
    for folder in (docs, docs / "secret"):
        os.chmod(folder, 0o755)
    assert project.ingest(docs).documents_added == ["secret/inner.md", "top.md"]
    os.chmod(docs / "secret", 0o000)
    try:
        if os.geteuid() == 0:
            failed = _collect_as_nobody(docs)
            # What the kernel told nobody, told to this root process too, for the ingest below.
            real_scandir = os.scandir

            def scandir(path):  # type: ignore[no-untyped-def]
                if Path(path) == docs / "secret":
                    raise PermissionError(13, "Permission denied", str(path))
                return real_scandir(path)

            monkeypatch.setattr(os, "scandir", scandir)
        report = project.ingest(docs)
        if os.geteuid() != 0:
            failed = report.failed
    finally:
        os.chmod(docs / "secret", 0o755)
    assert [name for name, _ in failed] == ["secret/"] and "cannot list folder" in failed[0][1], failed
    assert [name for name, _ in report.failed] == ["secret/"]
    assert report.documents_removed == [] and any("nothing was pruned" in w for _, w in report.warnings)
    assert set(project.chunks()["source"]) == {"secret/inner.md", "top.md"}


def test_symlinks_outside_are_skipped_dangling_and_loops_reported(tmp_path: Path, project: ragtt.Project) -> None:
    docs = _docs(tmp_path / "docs", ["a.md"])
    outside = _docs(tmp_path / "outside", ["b.md"])
    (docs / "b-link.md").symlink_to(outside / "b.md")
    (docs / "dir-link").symlink_to(outside)
    (docs / "dangling.md").symlink_to(tmp_path / "gone.md")
    (docs / "loop").mkdir()
    (docs / "loop" / "back").symlink_to(docs / "loop")
    (docs / "inner-link.md").symlink_to(docs / "a.md")
    report = project.ingest(docs)
    skipped = dict(report.skipped)
    assert set(skipped) == {"b-link.md", "dir-link"}
    assert "outside" in skipped["b-link.md"] and "follow_symlinks" in skipped["b-link.md"]
    failed = dict(report.failed)
    assert set(failed) == {"dangling.md", "loop/back"}
    assert "dangling symlink" in failed["dangling.md"] and "loop" in failed["loop/back"]
    assert set(project.chunks()["source"]) == {"a.md", "inner-link.md"}
    assert "SKIPPED b-link.md" in repr(report)
    followed = project.ingest(docs, follow_symlinks=True)
    assert {"b-link.md", "dir-link/b.md"} <= set(project.chunks()["source"])
    assert "loop/back" in dict(followed.failed)  # a link back into its own folders is never followed
    (docs / "cycle").mkdir()
    (docs / "cycle" / "up").symlink_to(outside)
    (outside / "down").symlink_to(outside)
    looped = project.ingest(docs, follow_symlinks=True)
    assert any("loop" in reason for _, reason in looped.failed), looped.failed


@pytest.mark.parametrize("bad", [None, 42, b"id"])
def test_a_query_id_that_is_not_a_str_is_a_type_error(project: ragtt.Project, bad: object) -> None:
    project.ingest_texts({"a.md": "refund window"})
    project.query("refund window", generate=False)
    calls = [
        lambda: project.replay(bad),
        lambda: project.trace(bad),
        lambda: project.diff(bad, bad),
        lambda: project.plan_of(bad),
        lambda: project.lineage(bad, bad),
        lambda: project.run(bad),
    ]
    for call in calls:
        with pytest.raises(TypeError, match="query id must be a str"):
            call()  # type: ignore[no-untyped-call]


@pytest.mark.parametrize(
    "args, expected",
    [
        (["replay", "--text", "x", "--as-of", "²"], "no snapshot labelled '²'"),
        (["query", "x", "--top-k", "9223372036854775808"], "--top-k"),
        (["query", "x", "--top-k", "²"], "--top-k"),
        (["drift", "1", "2", "--threshold", "nan"], "--threshold"),
        (["bisect", "x", "--predicate", "source:a.md", "--versions", "1,²"], "--versions"),
    ],
)
def test_odd_cli_arguments_get_one_line_and_exit_2(tmp_path: Path, args: list[str], expected: str) -> None:
    path = tmp_path / "proj"
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest_texts({"a.md": "some text"})
    done = subprocess.run(
        [sys.executable, "-m", "ragtt.cli", *args, "--project", str(path), "--embedder", "hash"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and expected in done.stderr, done.stderr


def test_a_non_utf8_argument_gets_one_line_and_exit_2(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable.encode(), b"-m", b"ragtt.cli", b"query", b"caf\xe9", b"--project", os.fsencode(tmp_path / "p")],
        cwd=REPO,
        capture_output=True,
        timeout=120,
    )
    err = done.stderr.decode()
    assert done.returncode == 2 and err.count("\n") == 1 and "not valid UTF-8" in err, err


def test_the_embedding_cache_reports_a_full_disk_and_stays_usable(tmp_path: Path) -> None:
    from ragtt.events.cache import EmbeddingCache

    cache = EmbeddingCache(tmp_path / "e.db")
    embedder = ragtt.HashEmbedder(256)
    cache.embed(embedder, ["first"])
    cache._vectors._conn.execute("PRAGMA max_page_count = 1")
    texts = [f"text {i} " * 50 for i in range(300)]
    with pytest.raises(ragtt.StoreError, match="full"):
        cache.embed(embedder, texts)
    assert cache.get(embedder.model_id, "first") is not None
    cache._vectors._conn.execute("PRAGMA max_page_count = 1073741823")
    vectors, computed, _ = cache.embed(embedder, texts)
    assert computed == len(texts) and vectors.shape == (300, 256)
    cache.close()
