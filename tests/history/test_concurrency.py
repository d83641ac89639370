"""Two processes ingest into one project for 30 s while a third runs CLI queries: no
exception escapes, nothing is lost, no version is claimed twice, every query replays, and
the history verifies: with the log in SQLite, in Postgres (the children get only
``RAGTT_EVENTS_URI``), and in Postgres with the index in an S3 bucket, where every process
has a workspace folder of its own and knows only the log's URI and the bucket's credentials."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import ragtt
from tests.backends import backend_for, child_env, events_uri, index_args, s3_env

REPO = Path(__file__).resolve().parents[2]
SECONDS = 30.0


@pytest.fixture(scope="module", params=["sqlite", "postgres", "postgres+s3"])
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    with backend_for(request) as name:
        yield name


def test_two_writers_and_a_cli_reader(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "proj"
    uri = events_uri(path)
    with ragtt.Project.open(
        path, embedder=ragtt.HashEmbedder(), progress=False, events_uri=uri, **index_args(path)
    ) as proj:
        proj.ingest_texts({"seed.md": "# Seed\n\nThe first document, so queries have something to find.\n"})
    env = {**os.environ, "PYTHONPATH": str(REPO), "RUST_LOG": "error", **child_env(path), **s3_env()}

    def workspace(name: str) -> Path:
        """Each process's own empty folder when nothing but the URIs is shared."""
        return tmp_path / name if backend == "postgres+s3" else path

    writers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.history.ingest_worker", str(workspace(name)), name, str(SECONDS)],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("alpha", "beta")
    ]
    query_ids: list[str] = []
    deadline = time.monotonic() + SECONDS
    for i in range(200):  # bounded in count and in time
        if time.monotonic() > deadline:
            break
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "ragtt.cli",
                "query",
                f"note {i % 9} topic",
                "--project",
                str(workspace("reader")),
                "--embedder",
                "hash",
                "--no-generate",
                "--json",
            ],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        query_ids.append(json.loads(done.stdout)["query_id"])
    added: set[str] = set()
    for writer in writers:
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
        lines = [json.loads(line) for line in out.splitlines()]
        assert len(lines) >= 3, f"a writer got only {len(lines)} ingests done in {SECONDS} s"
        for line in lines:
            assert not line["failed"], line
            added.update(line["added"])
    assert len(query_ids) >= 3
    with ragtt.Project.open(
        path, embedder=ragtt.HashEmbedder(), progress=False, create=False, events_uri=uri, **index_args(path)
    ) as proj:
        report = proj.verify()
        assert report.ok, report.problems
        indexed = set(proj.chunks()["source"])
        assert added <= indexed, f"lost documents: {sorted(added - indexed)[:5]}"
        for query_id in query_ids:
            assert proj.replay(query_id).matches_original, query_id
        versions = proj.versions()["version"].to_list()
        assert versions == list(range(1, proj.version + 1)), "every version is logged exactly once"
        ingests = proj.events.query(types="ingest.completed")
        made = [v for e in ingests for v in e.payload.get("versions", [])]
        assert len(made) == len(set(made)), "no version is claimed by two ingests"
