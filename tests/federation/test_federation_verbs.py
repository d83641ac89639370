"""``ragtt federation create|query|replay|diff``: the verb table's federation verbs on the
command line (the magics: tests/nb/test_magics_federation.py; REST and MCP: tests/serve)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragtt
from ragtt.cli import main

TEXTS = {
    "docs": {
        "config.md": "# Config\n\nSet SECRET_KEY to a random value.\n",
        "install.md": "# Install\n\npip install flask\n",
    },
    "tickets": {"t1.md": "# Ticket\n\nThe secret key leaked; rotate it.\n"},
}


@pytest.fixture
def members(tmp_path: Path) -> dict[str, str]:
    return make_members(tmp_path)


def make_members(tmp_path: Path) -> dict[str, str]:
    """Two small member projects, each with a snapshot "one"; name -> folder."""
    for name, texts in TEXTS.items():
        with ragtt.Project.open(tmp_path / name, embedder=ragtt.HashEmbedder(), progress=False) as proj:
            proj.ingest_texts(texts)
            proj.snapshot("one")
    return {name: str(tmp_path / name) for name in TEXTS}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_round_trip(members: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fed = ["--federation", str(tmp_path / "fed")]
    code, out, err = run(
        capsys, "federation", "create", *fed, "--members", json.dumps(members), "--weights", '{"tickets": 2}'
    )
    assert code == 0, err
    assert "docs: v" in out and "(weight 2.0)" in out
    code, out, err = run(capsys, "federation", "query", *fed, "secret", "key", "--json")
    assert code == 0, err
    first = json.loads(out)
    assert first["text"] == "secret key" and first["chunks"][0]["member"] == "tickets"
    with ragtt.Project.open(members["docs"], progress=False) as docs:
        docs.ingest_texts({"config.md": "# Config\n\nSECRET_KEY must be long.\n"})
    code, out, err = run(capsys, "federation", "replay", *fed, "--query-id", first["query_id"], "--json")
    assert code == 0 and json.loads(out)["matches_original"] is True, err
    code, out, _ = run(capsys, "federation", "replay", *fed, "--text", "secret key", "--at", "one")
    assert code == 0 and "each member as it was at one" in out
    code, out, _ = run(capsys, "federation", "query", *fed, "secret key")
    assert code == 0 and "[tickets]" in out
    code, out, _ = run(capsys, "federation", "diff", *fed, first["query_id"], "last")
    assert code == 0 and "docs v" in out and "re-ingested" in out


def test_cli_errors_are_one_line(members: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fed = ["--federation", str(tmp_path / "fed")]
    code, _, err = run(capsys, "federation", "query", *fed, "secret")
    assert code == 2 and "not a ragtt federation" in err and len(err.strip().splitlines()) == 1
    bad = json.dumps({**members, "gone": str(tmp_path / "gone")})
    code, _, err = run(capsys, "federation", "create", *fed, "--members", bad)
    assert code == 2 and "member 'gone'" in err
    code, _, err = run(
        capsys, "federation", "create", *fed, "--members", json.dumps(members), "--weights", '{"docs": 0}'
    )
    assert code == 2 and "above 0" in err
