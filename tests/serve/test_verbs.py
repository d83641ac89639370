from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

import ragtt
from ragtt.verbs import VERBS, VerbUsageError, cli_type

ROOT = Path(__file__).resolve().parents[2]


def test_the_table_imports_nothing_heavy() -> None:
    code = (
        "import sys, ragtt.verbs, ragtt.verbs.cli; heavy = [m for m in ('lancedb', 'polars', 'torch', "
        "'fastapi', 'IPython', 'pydantic', 'litellm') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert out.stdout.strip() == "[]"


def test_the_issue_verbs_are_declared_with_the_same_argument_names() -> None:
    assert {
        "ingest",
        "query",
        "replay",
        "replay_as_of",
        "diff",
        "trace",
        "events",
        "snapshot",
        "snapshots",
        "lineage",
        "snapshot_diff",
        "drift",
        "bisect",
        "regression_run",
        "regression_capture",
        "verify",
    } <= set(VERBS)
    assert [a.name for a in VERBS["query"].args][:1] == ["text"]
    assert [a.name for a in VERBS["replay"].args][:1] == ["query_id"]
    assert [a.name for a in VERBS["diff"].args] == ["left", "right"]
    assert next(a for a in VERBS["replay_as_of"].args if a.name == "at").flags == ("--at", "--as-of")
    for verb in VERBS.values():
        assert len({a.name for a in verb.args}) == len(verb.args), verb.name
        if verb.route is not None:
            method, path = verb.route
            assert method in ("GET", "POST") and path.startswith("/")


def test_cli_types_check_range_and_choices() -> None:
    top_k = next(a for a in VERBS["query"].args if a.name == "top_k")
    assert cli_type(top_k)("5") == 5
    for bad in ("0", "²", "-1", "x"):
        with pytest.raises(argparse.ArgumentTypeError):
            cli_type(top_k)(bad)
    threshold = next(a for a in VERBS["drift"].args if a.name == "threshold")
    assert cli_type(threshold)("0.5") == 0.5
    with pytest.raises(argparse.ArgumentTypeError, match="from 0 to 1"):
        cli_type(threshold)("nan")
    mode = next(a for a in VERBS["query"].args if a.name == "mode")
    with pytest.raises(argparse.ArgumentTypeError, match="vector, bm25, hybrid"):
        cli_type(mode)("fuzzy")
    since = next(a for a in VERBS["events"].args if a.name == "since")
    assert cli_type(since)("2026-03-01T12:00Z").tzinfo is not None
    with pytest.raises(argparse.ArgumentTypeError, match="ISO datetime"):
        cli_type(since)("yesterday")
    versions = next(a for a in VERBS["bisect"].args if a.name == "versions")
    assert cli_type(versions)("3") == 3


def test_run_calls_the_project_and_renders(project: ragtt.Project) -> None:
    report = VERBS["ingest"].run(project, {"texts": {"a.md": "alpha beta gamma"}})
    assert VERBS["ingest"].exit_code(report) == 0 and VERBS["ingest"].to_json(report)["documents_added"] == ["a.md"]
    result = VERBS["query"].run(project, {"text": "alpha", "generate": False})
    replay = VERBS["replay"].run(project, {"query_id": result.query_id})
    assert VERBS["replay"].to_json(replay)["matches_original"] is True
    assert "replay matches original" in VERBS["replay"].to_text(replay)
    with pytest.raises(VerbUsageError, match="'topk'"):
        VERBS["query"].run(project, {"text": "alpha", "topk": 3})
    with pytest.raises(VerbUsageError, match="'text'"):
        VERBS["query"].run(project, {})
    with pytest.raises(VerbUsageError, match="not both"):
        VERBS["ingest"].run(project, {"texts": {"b.md": "x"}, "paths": ["b.md"]})
