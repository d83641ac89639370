"""``%ragtt federation ...``: the federation verbs in a notebook, through the same parser as the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ragtt
from tests.federation.test_federation_verbs import make_members


def test_magics(shell: Any, tmp_path: Path) -> None:
    members = make_members(tmp_path)
    fed = tmp_path / "fed"
    info = shell.run_line_magic("ragtt", f"federation create --federation {fed} --members '{json.dumps(members)}'")
    assert [m["name"] for m in info.members] == ["docs", "tickets"]
    res = shell.run_line_magic("ragtt", f"federation query --federation {fed} secret key")
    assert isinstance(res, ragtt.FederatedResult) and "<table" in res._repr_html_()
    again = shell.run_line_magic("ragtt", f"federation replay --federation {fed} --query-id last")
    assert again.original_query_id == res.query_id and again.matches_original
    diff = shell.run_line_magic("ragtt", f"federation diff --federation {fed} {res.query_id} last")
    assert isinstance(diff, ragtt.FederationDiff)
