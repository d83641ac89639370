"""Two processes ingest into one project at once while a third runs CLI queries: no
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
# Bounded by count, not by a clock: each writer ingests once (its imports and first writes
# take seconds on busy cores), waits at a gate for the other, then both race through the
# rest of their INGESTS ingests (every fourth also revises an earlier document) while the
# reader queries until both are done: the writes contend from the same moment however fast
# the machine is. LIMIT_S only caps a hung run.
INGESTS = 16
LIMIT_S = 300.0


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

    gate = tmp_path / "gate"
    gate.mkdir()
    writers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.history.ingest_worker",
                str(workspace(name)),
                name,
                str(LIMIT_S),
                "--count",
                str(INGESTS),
                "--gate",
                str(gate),
                "--peers",
                "alpha,beta",
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("alpha", "beta")
    ]
    deadline = time.monotonic() + LIMIT_S
    query_ids: list[str] = []
    for i in range(200):  # bounded in count and in time: while the writers write, and 3 at least
        if time.monotonic() > deadline or (i >= 3 and all(w.poll() is not None for w in writers)):
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
    gates, lasts = [], []
    for writer in writers:
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
        lines = [json.loads(line) for line in out.splitlines()]
        assert len(lines) == INGESTS, f"a writer got only {len(lines)} of {INGESTS} ingests done in {LIMIT_S} s"
        for line in lines:
            assert not line["failed"], line
            added.update(line["added"])
        gates.append(lines[-1]["gate_t"])
        lasts.append(lines[-1]["t"])
    # the two wrote at the same time: each one was past the gate, ingesting or waiting for the
    # write lock, before the other's last ingest ended
    assert max(gates) < min(lasts), "the writers never overlapped"
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
