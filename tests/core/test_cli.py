from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragtt.cli import main

SAMPLE = Path(__file__).resolve().parents[2] / "ragtt" / "sample"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    proj = ["--project", str(tmp_path / "p"), "--embedder", "hash"]
    code, out, _ = run(capsys, "ingest", str(SAMPLE / "release-1"), *proj)
    assert code == 0 and "4 added" in out
    assert run(capsys, "snapshot", "r1", *proj)[0] == 0
    code, out, _ = run(capsys, "query", "refund days", "--json", *proj)
    first = json.loads(out)
    assert code == 0 and first["chunks"][0]["source"] == "refund-policy.md"
    run(capsys, "ingest", str(SAMPLE / "release-3"), *proj)
    code, out, _ = run(capsys, "replay", "--query-id", first["query_id"], *proj)
    assert code == 0 and "matches original" in out
    code, out, _ = run(capsys, "replay", "--text", "refund days", "--as-of", "r1", "--json", *proj)
    assert json.loads(out)["index_version"] == first["index_version"]
    code, out, _ = run(capsys, "query", "refund days", "--json", "--no-generate", *proj)
    second = json.loads(out)["query_id"]
    html = tmp_path / "diff.html"
    code, out, _ = run(capsys, "diff", "--left", first["query_id"], "--right", second, "--html", str(html), *proj)
    assert code == 0 and "RBO" in out and html.read_text().startswith("<!DOCTYPE html>")
    code, out, _ = run(capsys, "trace", first["query_id"], *proj)
    assert "retrieval.executed" in out
    code, out, _ = run(capsys, "snapshots", *proj)
    assert out.splitlines()[1].split()[:2] == ["r1", "v3"]  # a table: label, version, ...
    for suffix in ("parquet", "csv"):
        target = tmp_path / f"events.{suffix}"
        assert run(capsys, "events", "--out", str(target), *proj)[0] == 0 and target.stat().st_size > 0


def test_cli_user_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    proj = ["--project", str(tmp_path / "p"), "--embedder", "hash"]
    code, _, err = run(capsys, "replay", "--query-id", "nope", *proj)
    assert code == 2 and err.count("\n") == 1 and "not a ragtt project" in err and "ragtt ingest" in err
    assert not (tmp_path / "p").exists(), "a read-only verb must not create a project"
    code, _, err = run(capsys, "ingest", str(tmp_path / "missing"), *proj)
    assert code == 1
    code, _, err = run(capsys, "replay", "--query-id", "nope", *proj)
    assert code == 2 and err.count("\n") == 1 and "nope" in err
    with pytest.raises(SystemExit) as info:
        main(["replay", *proj])
    assert info.value.code == 2


def test_cli_project_from_environment_and_no_torch_needed(tmp_path: Path) -> None:
    env = {**os.environ, "RAGTT_PROJECT": str(tmp_path / "envproj")}
    code = (
        "import sys, ragtt.cli; rc = ragtt.cli.main(sys.argv[1:]); "
        "assert 'torch' not in sys.modules, 'hash embedder must not import torch'; sys.exit(rc)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "ingest", str(SAMPLE / "release-1"), "--embedder", "hash"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "envproj" / "events.db").exists()


def test_global_options_before_or_after_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    where = ["--project", str(tmp_path / "p"), "--embedder", "hash"]
    assert run(capsys, *where, "ingest", str(SAMPLE / "release-1"))[0] == 0
    code, out, _ = run(capsys, *where, "--json", "query", "refund", "days", "--no-generate")
    first = json.loads(out)
    assert code == 0 and first["text"] == "refund days"  # unquoted words are one text
    code, out, _ = run(capsys, "--project", str(tmp_path / "p"), "replay", first["query_id"], "--embedder", "hash")
    assert code == 0 and "matches original" in out  # the id as a bare word fills --query-id
    code, out, _ = run(capsys, *where, "diff", first["query_id"], first["query_id"])
    assert code == 0 and "RBO" in out
    with pytest.raises(SystemExit) as info:
        main([*where, "query", "refund", "--topk", "3"])
    assert info.value.code == 2 and "unrecognized arguments: --topk 3" in capsys.readouterr().err


def test_compare_configs_needs_no_project_and_test_capture_reads_a_queries_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queries = tmp_path / "queries.txt"
    queries.write_text("refund days\n\nexpress shipping\n", encoding="utf-8")
    code, out, _ = run(
        capsys,
        "compare-configs",
        str(SAMPLE / "release-1"),
        "--config-a",
        '{"retrieval_mode": "vector"}',
        "--config-b",
        '{"retrieval_mode": "bm25"}',
        "--queries-file",
        str(queries),
        "--embedder",
        "hash",
        "--json",
        "--project",
        str(tmp_path / "never"),
    )
    assert code == 0 and [q["text"] for q in json.loads(out)["queries"]] == ["refund days", "express shipping"]
    assert not (tmp_path / "never").exists()
    with pytest.raises(SystemExit):
        main(["compare-configs", str(SAMPLE), "--config-a", "[1]", "--config-b", "{}", "--query", "x"])
    assert "expected a JSON object" in capsys.readouterr().err
    proj = ["--project", str(tmp_path / "p"), "--embedder", "hash"]
    assert run(capsys, "ingest", str(SAMPLE / "release-1"), *proj)[0] == 0
    suite = tmp_path / "golden.json"
    code, out, _ = run(
        capsys, "test", "capture", "--name", "g", "-o", str(suite), "--queries-file", str(queries), *proj
    )
    assert code == 0 and "captured 2 golden queries" in out and suite.exists()
    code, out, _ = run(capsys, "test", "run", str(suite), *proj)
    assert code == 0 and out.count("PASS") == 2


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out.startswith("ragtt ")


def test_plugin_commands_are_looked_up_only_for_a_command_ragtt_does_not_have() -> None:
    """Finding plugins reads every installed distribution's metadata: ``ragtt replay`` skips it."""
    import argparse

    from ragtt.cli import build_parser

    def commands(parser: argparse.ArgumentParser) -> set[str]:
        return set(next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices)

    everything = commands(build_parser())  # `ragtt --help`: every command is listed
    assert "report" in everything  # ragtt_nb's, through the ragtt.cli entry points
    assert commands(build_parser("report")) == everything
    assert commands(build_parser("replay")) == everything - {"report"}
    assert commands(build_parser("test")) == everything - {"report"}  # `ragtt test capture`
