"""A federation over two member projects made from Flask's docs, both ingested release by
release: every federated query replays identically after both members moved on, a question
asked of the past uses exactly each member's version at that time, and the diff explains
each member's changes with the member's own lineage."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragtt
from ragtt.federation.fusion import fuse
from tests.federation.flask_members import MEMBERS, QUESTIONS, Release, ingest_release, releases

PICKS = (0, 3, 7, 12, 17, 21)  # 0.10 ... 3.1.3: renames (README, the security page) and edits


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The federation, its members, each release's versions and the runs made as it went."""
    home = tmp_path_factory.mktemp("federation")
    members = {name: ragtt.Project.open(home / name, embedder=ragtt.HashEmbedder(), progress=False) for name in MEMBERS}
    done: list[Release] = []
    runs: list[tuple[Release, ragtt.FederatedResult]] = []
    fed = None
    try:
        for folder, release in releases(PICKS):
            ingest_release(members, home / "work", folder, release)
            done.append(release)
            if fed is None:
                fed = ragtt.Federation.create(home / "fed", members=members, weights={"readme": 1.5})
            runs += [(release, fed.query(q, generate=False)) for q in QUESTIONS]
        assert fed is not None
        yield {"home": home, "fed": fed, "members": members, "releases": done, "runs": runs}
    finally:
        if fed is not None:
            fed.close()
        for proj in members.values():
            proj.close()


def fused(result: ragtt.FederatedResult) -> list[tuple[str, str, float]]:
    return [(c.member, c.chunk_id, c.score) for c in result.chunks]


def test_a_run_records_each_members_project_version_and_plan(history: dict[str, Any]) -> None:
    release, result = history["runs"][0]
    assert [m.name for m in result.members] == list(MEMBERS)
    for member in result.members:
        proj = history["members"][member.name]
        assert member.project_id == proj.project_id
        assert member.index_version == release.versions[member.name]
        assert member.plan["top_k"] == proj.config.top_k and member.plan["embedder_id"] == proj.embedder.model_id
    assert result.fusion == {"method": "rrf", "k": 60, "weights": {"docs": 1.0, "readme": 1.5}}
    events = history["fed"].events.frame(types=["retrieval.executed"])
    assert result.query_id in events["query_id"].to_list()  # ONE logged run per query
    assert events.filter(events["query_id"] == result.query_id).height == 1
    assert {c.member for c in result.chunks} <= set(MEMBERS)


def test_every_federated_query_replays_identically_after_both_members_moved_on(history: dict[str, Any]) -> None:
    fed, members = history["fed"], history["members"]
    last = history["releases"][-1]
    assert all(members[n].version == last.versions[n] for n in MEMBERS)
    moved = 0
    for release, original in history["runs"]:
        again = fed.replay(original.query_id)
        assert again.matches_original, (release.name, original.text)
        assert fused(again) == fused(original)  # ids, order and scores, exactly
        assert [m.index_version for m in again.members] == [m.index_version for m in original.members]
        moved += release is not last
    assert moved >= len(QUESTIONS) * (len(PICKS) - 1)


def test_the_fused_list_is_weighted_rrf_over_the_members_lists(history: dict[str, Any]) -> None:
    _, result = history["runs"][-1]
    members = history["members"]
    lists = [(m.name, members[m.name].retrieve_at(result.text, m.index_version)) for m in result.members]
    weights = {"docs": 1.0, "readme": 1.5}
    for item in fuse(lists, weights, result.top_k):  # the formula by hand for the first item
        expected = 0.0
        for name, chunks in lists:
            ranks = [c.rank for c in chunks if ragtt_text_hash(c.text) == item.text_hash]
            expected += weights[name] / (60 + min(ranks)) if ranks else 0.0
        assert item.score == pytest.approx(expected)
    assert [c.chunk_id for c in result.chunks] == [f.best.chunk_id for f in fuse(lists, weights, result.top_k)]
    scores = [c.score for c in result.chunks]
    assert scores == sorted(scores, reverse=True)


def ragtt_text_hash(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_replay_text_at_a_time_uses_exactly_each_members_version_then(history: dict[str, Any]) -> None:
    fed, members = history["fed"], history["members"]
    for release in history["releases"][:-1]:
        at = release.date + timedelta(days=1)
        result = fed.replay_text(QUESTIONS[0], at=at)
        for member in result.members:
            proj = members[member.name]
            assert member.index_version == release.versions[member.name] == proj.resolve_version(at)
            own = proj.retrieve_at(QUESTIONS[0], member.index_version)
            assert member.chunk_ids == [c.chunk_id for c in own]
        assert result.at == at.isoformat()
    first = history["releases"][0]
    with pytest.raises(ragtt.NotFoundError, match="member 'docs'"):
        fed.replay_text(QUESTIONS[0], at=first.date - timedelta(days=1))


def test_diff_says_per_member_what_entered_left_and_moved_with_lineage(history: dict[str, Any]) -> None:
    fed = history["fed"]
    runs = [r for _, r in history["runs"] if r.text == QUESTIONS[0]]
    report = fed.diff(runs[0].query_id, runs[-1].query_id)
    assert [m.name for m in report.members] == list(MEMBERS)
    changed = [m for m in report.members if m.entered or m.left]
    assert changed, "six releases apart, some member's retrieval changed"
    for m in changed:
        assert set(m.reasons) == {*m.entered, *m.left}
        assert all(("added" in s or "re-ingested" in s or "removed" in s or "ranking" in s) for s in m.reasons.values())
    text = report.to_text()
    assert "entered the top" in text or "left the top" in text
    same = fed.diff(runs[-1].query_id, runs[-1].query_id)
    assert all(not (m.entered or m.left or m.moved) for m in same.members)


def test_reopened_federation_replays_and_verifies(history: dict[str, Any]) -> None:
    _, original = history["runs"][1]
    with ragtt.Federation.open(history["home"] / "fed") as fed:
        assert list(fed.members) == list(MEMBERS)
        assert fed.replay(original.query_id).matches_original
        assert fed.replay("last").matches_original
        report = fed.verify()
        assert report.ok, report.problems
        assert report.events_checked > len(history["runs"]) * 4


def test_results_render_as_escaped_html_and_text(history: dict[str, Any]) -> None:
    fed = history["fed"]
    result = fed.query("<script>alert(1)</script> secret key", generate=True)
    html = result._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert result.answer is not None
    assert "[docs]" in repr(result) or "[readme]" in repr(result)
    data = result.to_dict()
    assert data["chunks"][0]["contributions"][0]["member"] in MEMBERS
    diff = fed.diff(result.query_id, "last")
    assert "<script>" not in diff._repr_html_()


def test_generation_answers_from_the_fused_list(history: dict[str, Any]) -> None:
    result = history["fed"].query(QUESTIONS[0], top_k=3, generate=True)
    assert len(result.chunks) <= 3 and all(len(m.chunk_ids) <= 3 for m in result.members)
    assert result.answer and result.model == "extractive"
    assert history["fed"].replay(result.query_id).matches_original


def test_duplicate_texts_are_merged_into_one_item(tmp_path: Path) -> None:
    shared = "# Secret key\n\nSet SECRET_KEY to a long random value and keep it out of the repository.\n"
    with (
        ragtt.Project.open(tmp_path / "a", embedder=ragtt.HashEmbedder(), progress=False) as a,
        ragtt.Project.open(tmp_path / "b", embedder=ragtt.HashEmbedder(), progress=False) as b,
    ):
        a.ingest_texts({"config.md": shared, "other.md": "# Other\n\nNothing about keys.\n"})
        b.ingest_texts({"security.md": shared, "xss.md": "# XSS\n\nEscape every value.\n"})
        with ragtt.Federation.create(tmp_path / "fed", members={"a": a, "b": b}) as fed:
            result = fed.query("secret key", generate=False)
    top = result.chunks[0]
    assert {x.member for x in top.contributions} == {"a", "b"}
    assert top.score == pytest.approx(2 / 61)
    assert sum(1 for c in result.chunks if c.text_hash == top.text_hash) == 1


def test_the_timeline_of_a_federated_query_has_one_lane_per_member(history: dict[str, Any]) -> None:
    from ragtt.views.timeline_federation import build_federation

    fed, members = history["fed"], history["members"]
    release, focal = history["runs"][3 * len(QUESTIONS)]  # asked at the fourth release
    data, slots, results = build_federation(fed, focal.query_id)
    assert data["docs"] == list(MEMBERS)  # the lanes
    assert len(slots) == sum(len(p.versions()) for p in members.values())
    lanes = np.frombuffer(data["events"]["lane"]["view"], dtype="<i4")
    kinds = np.frombuffer(data["events"]["kind"]["view"], dtype="<i4")
    assert {int(lane) for lane in lanes[kinds == 0]} == {0, 1}  # every member's versions in its lane
    assert int((kinds == 3).sum()) >= len(history["runs"])  # the federated queries
    at = data["focal"]["version"]
    assert data["labels"][str(at)] == " · ".join(f"{m.name} v{m.index_version}" for m in focal.members)
    assert results[at - 1] == [c.chunk_id for c in focal.chunks]  # the run's own slot: its fused list
    assert results[-1] != results[at - 1]  # scrubbing on: the members moved on
    assert release.versions == {m.name: m.index_version for m in focal.members}


def test_a_run_is_named_by_a_unique_prefix_of_its_id(history: dict[str, Any]) -> None:
    fed = history["fed"]
    _, original = history["runs"][0]
    assert fed.replay(original.query_id[:20]).original_query_id == original.query_id
    with pytest.raises(ragtt.NotFoundError, match="is ambiguous"):
        fed.replay(original.query_id[:4])
