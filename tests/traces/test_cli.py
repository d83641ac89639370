"""``ragtt export-traces`` (generated from the verb table): a file, or a collector, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragtt
from ragtt.cli import main
from tests.traces.conftest import TEXTS, spans_of
from tests.traces.phoenix import free_port


def test_export_traces_writes_otlp_json_and_names_a_dead_endpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ragtt.Project.open(tmp_path / "p", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest_texts(TEXTS)
        query_id = proj.query("refunds", generate=False).query_id
        expected = proj.export_traces(query_id)
    where = ["--project", str(tmp_path / "p"), "--embedder", "hash"]
    out = tmp_path / "trace.json"
    assert main(["export-traces", "--query-id", query_id, "--out", str(out), *where]) == 0
    assert json.loads(out.read_text(encoding="utf-8")) == expected
    printed = capsys.readouterr().out.splitlines()
    assert [line.split()[-1] for line in printed] == [s["name"] for s in spans_of(expected)]

    gone = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    assert main(["export-traces", "--query-id", query_id, "--endpoint", gone, *where]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "could not send spans" in err and gone in err
    assert main(["export-traces", "--query-id", "nope", *where]) == 2
    assert "no query or replay with id 'nope'" in capsys.readouterr().err
