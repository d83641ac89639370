"""Two processes ingest into one project for 30 s while a third runs CLI queries: no
exception escapes, nothing is lost, every query replays, and the history verifies: with the
log in SQLite, and in Postgres (the children get only ``RAGTT_EVENTS_URI``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import ragtt
from tests.backends import child_env, events_uri

REPO = Path(__file__).resolve().parents[2]
SECONDS = 30.0


def test_two_writers_and_a_cli_reader(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "proj"
    uri = events_uri(path)
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False, events_uri=uri) as proj:
        proj.ingest_texts({"seed.md": "# Seed\n\nThe first document, so queries have something to find.\n"})
    env = {**os.environ, "PYTHONPATH": str(REPO), "RUST_LOG": "error", **child_env(path)}
    writers = [subprocess.Popen([sys.executable, "-m", "tests.history.ingest_worker", str(path), name, str(SECONDS)],
                                cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for name in ("alpha", "beta")]
    query_ids: list[str] = []
    deadline = time.monotonic() + SECONDS
    for i in range(200):  # bounded in count and in time
        if time.monotonic() > deadline:
            break
        done = subprocess.run([sys.executable, "-m", "ragtt.cli", "query", f"note {i % 9} topic", "--project",
                               str(path), "--embedder", "hash", "--no-generate", "--json"],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
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
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False, create=False,
                            events_uri=uri) as proj:
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
