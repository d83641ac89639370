"""``%ragtt federation ...``: the federation verbs in a notebook, through the same parser as the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ragtt
from tests.federation.test_federation_verbs import make_members

from .conftest import Offline, export, write_notebook


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


def test_the_timeline_of_a_federated_query(tmp_path: Path) -> None:
    from ragtt_nb import Timeline

    members = make_members(tmp_path)
    with ragtt.Federation.create(tmp_path / "fed", members=members) as fed:
        first = fed.query("secret key", generate=False)
        with ragtt.Project.open(members["docs"], progress=False) as docs:
            docs.ingest_texts({"config.md": "# Config\n\nSECRET_KEY must be long and secret.\n"})
        tl = Timeline(fed, query_id=first.query_id)
        assert tl.query_id == first.query_id
        assert tl.chunks_at() == [c.chunk_id for c in first.chunks]  # it opens at the run's slot
        assert tl.documents_at(tl.versions[-1]) == ["docs", "tickets"]  # one lane per member
        later = fed.query("secret key", generate=False)
        assert tl.chunks_at(tl.versions[-1]) == [c.chunk_id for c in later.chunks]
        assert "versions" in repr(tl)


def test_the_federated_timeline_renders_one_lane_per_member_in_a_report(tmp_path: Path, offline: Offline) -> None:
    members = make_members(tmp_path)
    notebook = write_notebook(
        tmp_path / "fed.ipynb",
        [
            "import ragtt\nfrom ragtt_nb import Timeline\n"
            f"fed = ragtt.Federation.create({str(tmp_path / 'fed')!r}, members={members!r})\n"
            "res = fed.query('secret key', generate=False)",
            "Timeline(fed, query_id=res.query_id)",
        ],
    )
    report = export(notebook, tmp_path / "fed.html", execute=True, timeout=300, allow_writes=True)
    page = offline.open(report)
    page.wait_for_selector(".ragtt-timeline .ragtt-chunk", timeout=30_000)
    assert offline.aborted == [] and offline.errors == []
    cards = page.locator(".ragtt-timeline .ragtt-chunk")
    assert cards.count() >= 1 and "tickets" in page.locator(".ragtt-timeline").inner_text()
