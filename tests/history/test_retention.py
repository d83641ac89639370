"""Retention (``proj.prune``) on both event-log backends: what it keeps still replays and
explains itself, what it forgets says so, the chain stays verifiable, and the disk shrinks."""

from __future__ import annotations

import argparse
import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import ragtt
from ragtt.events import types as ev
from ragtt.events.time import utc_now
from ragtt.retention import parse_duration
from ragtt.verbs import VERBS
from ragtt.verbs.cli import add_arguments, pick
from tests.backends import copy_project, drop_guards, events_uri, raw_log
from tests.history.scenarios import QUESTIONS, open_project

STEPS = 80  # ingests: with creation and maintenance, about 85 versions
SNAPSHOT_EVERY = 1
# Runs per version: the profile is 1,000 versions and 100,000 events, about 20 runs
# (100 events) a version; this history has fewer (6 runs, about 33 events a version).
RUNS_PER_STEP = 6


def _text(i: int) -> str:
    return (
        f"# Release {i}\n\nIn release {i} the refund window is {i + 10} days and item {i * 7} ships from "
        f"warehouse {i % 5}.\n\n## Notes {i}\n\nCustomer data for release {i} stays in region {i % 3}; "
        f"support answers ticket class {i % 4} within {i % 6 + 1} days.\n"
    )


def build_history(root: Path, steps: int = STEPS) -> Path:
    """A history of ``steps`` ingests, queries (some answered) after each, a snapshot after each."""
    path = root / "proj"
    with open_project(path, embedder=ragtt.HashEmbedder()) as proj:
        for i in range(steps):
            proj.ingest_texts({f"doc{i % 4}.md": _text(i)})
            for k in range(RUNS_PER_STEP):
                if k % 3 == 2:
                    proj.query(f"item {i * 7 + k} warehouse", generate=False, mode="bm25")
                else:
                    proj.query(QUESTIONS[(i + k) % len(QUESTIONS)], generate=k % 3 == 0)
            if i % SNAPSHOT_EVERY == SNAPSHOT_EVERY - 1:
                proj.snapshot(f"s{i}")
        proj.optimize()
    return path


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Path:
    root = tmp_path_factory.mktemp("retention-base")
    build_history(root)
    return root


@pytest.fixture
def proj(base: Path, tmp_path: Path) -> Any:
    root = copy_project(base, tmp_path / "copy")
    with open_project(root / "proj") as p:
        yield p


def _runs(proj: ragtt.Project) -> list[str]:
    """Query ids of the live queries (not replays) whose events are whole."""
    return [e.query_id for e in proj.events.query(types=ev.QUERY_RECEIVED) if e.payload and e.query_id]


def disk_bytes(proj: ragtt.Project) -> int:
    index = sum(f.stat().st_size for f in (proj.path / "lancedb").rglob("*") if f.is_file())
    return index + proj.events.size_bytes()


def test_retained_queries_replay_identically_and_lineage_still_explains_every_change(proj: ragtt.Project) -> None:
    before = _runs(proj)
    pairs = [(a, b) for a, b in zip(before[-12:], before[-11:], strict=False)]  # runs newer than the cutoff
    lineages = {pair: proj.lineage(*pair).entries for pair in pairs}
    report = proj.prune(max_snapshots=5)
    kept = _runs(proj)
    assert report.queries_pruned == len(before) - len(kept) > 0 and kept == before[len(before) - len(kept) :]
    for qid in kept:
        assert proj.replay(qid).matches_original, qid
    for pair in pairs:
        entries = proj.lineage(*pair).entries
        assert entries == lineages[pair], pair
        assert all(e.cause != "unknown" for e in entries), pair
    for snap in proj.snapshots():  # every kept snapshot still reads: chunks, documents, replay_text
        for source in set(proj.chunks(at=snap.label)["source"]):
            assert proj.document(source, at=snap.label).text
        assert proj.replay_text("refund window", at=snap.label).chunks


def test_a_pruned_query_id_says_it_was_pruned_when_and_by_which_policy(proj: ragtt.Project) -> None:
    oldest = _runs(proj)[0]
    report = proj.prune(max_snapshots=5, max_age="30d")
    assert report.prune_id is not None
    message = r"query \w+ was pruned on 20\d\d-\d\d-\d\dT[\d:]+Z by prune\(max_snapshots=5, max_age='30d'\)"
    for call in (proj.replay, proj.trace, proj.run, proj.plan_of):
        with pytest.raises(ragtt.NotFoundError, match=message):
            call(oldest)
    with pytest.raises(ragtt.NotFoundError, match="was pruned"):
        proj.lineage(oldest, _runs(proj)[-1])
    with pytest.raises(ragtt.NotFoundError, match="no query or replay with id"):
        proj.replay("0" * 32)  # never logged: not "pruned"


def test_verify_stays_ok_and_the_chain_records_the_prune(proj: ragtt.Project) -> None:
    events_before = len(proj.events.query())
    report = proj.prune(max_snapshots=5)
    assert proj.verify().ok, proj.verify().problems
    pruned = proj.events.last(ev.HISTORY_PRUNED)
    assert pruned is not None and pruned.event_id == report.prune_id
    assert pruned.payload["policy"]["max_snapshots"] == 5
    assert pruned.payload["events_pruned"] == report.events_pruned > 0
    assert pruned.payload["versions_deleted"] == report.versions_deleted
    assert len(proj.events.query()) == events_before + 1 - report.events_pruned
    assert sum(last - first + 1 for first, last, _ in pruned.payload["spans"]) == report.events_pruned
    assert len(proj.snapshots()) == 5  # and verify() found each one's tag, and no other tag


def test_the_log_refuses_deletions_outside_a_prune_and_verify_finds_them(proj: ragtt.Project) -> None:
    conn = raw_log(proj.path)
    run_event = "SELECT MIN(seq) FROM events WHERE type = 'retrieval.executed'"
    with pytest.raises(Exception, match="immutable"):  # the newest event is no prune
        conn.execute(f"DELETE FROM events WHERE seq = ({run_event})")
    _rollback(conn)
    proj.prune(max_snapshots=5)
    with pytest.raises(Exception, match="immutable"):  # never a document event, even right after a prune
        conn.execute("DELETE FROM events WHERE seq = (SELECT MIN(seq) FROM events WHERE type = 'document.ingested')")
    _rollback(conn)
    assert proj.verify().ok
    # Right after a prune the guard lets a run's events go: verify() finds what no prune lists.
    conn.execute(f"DELETE FROM events WHERE seq = ({run_event})")
    _commit(conn)
    assert any("are missing (deleted?)" in p for p in proj.verify().problems), proj.verify().problems
    drop_guards(conn)  # someone with the rights to the database rewrites the prune's record
    prune_seq = proj.events.last(ev.HISTORY_PRUNED).seq
    conn.execute(f"UPDATE events SET payload = replace(payload, '\"spans\"', '\"spanz\"') WHERE seq = {prune_seq}")
    _commit(conn)
    conn.close()
    problems = proj.verify().problems  # the pruned gaps are unaccounted for now, and the chain breaks
    assert "are missing (deleted?)" in problems[0] and any("does not match its hash" in p for p in problems)


def _rollback(conn: Any) -> None:
    if not os.environ.get("RAGTT_TEST_PG") and conn.in_transaction:
        conn.rollback()


def _commit(conn: Any) -> None:
    if not os.environ.get("RAGTT_TEST_PG") and conn.in_transaction:
        conn.commit()


def test_document_events_and_texts_are_never_pruned(proj: ragtt.Project) -> None:
    docs_before = [(e.event_id, e.payload) for e in proj.events.query(types=ev.DOCUMENT_INGESTED)]
    keys = [p["doc_key"] for _, p in docs_before]
    texts_before = proj.events.documents.texts(keys)
    proj.prune(max_snapshots=1)
    assert [(e.event_id, e.payload) for e in proj.events.query(types=ev.DOCUMENT_INGESTED)] == docs_before
    assert proj.events.documents.texts(keys) == texts_before
    assert proj.verify().ok


def test_keep_pins_a_query_a_snapshot_and_a_version(proj: ragtt.Project) -> None:
    oldest = _runs(proj)[0]
    old_version = proj.run(oldest).index_version
    early = proj.snapshots()[0]
    other = proj.snapshots()[1].index_version + 1
    with pytest.raises(ragtt.ConfigError, match="keep names 'nope'"):
        proj.prune(max_snapshots=1, keep=["nope"])
    report = proj.prune(max_snapshots=1, keep=[oldest, early.label, other])
    assert oldest in _runs(proj) and proj.replay(oldest).matches_original
    assert early.label in [s.label for s in proj.snapshots()] and len(proj.snapshots()) == 2
    assert {old_version, early.index_version, other} <= set(report.versions_kept)
    assert proj.chunks(at=other).height > 0
    proj.bisect(oldest, "source:doc1.md")  # walks only the versions that still exist
    with pytest.raises(ragtt.NotFoundError, match="a prune deletes old versions"):
        proj.chunks(at=report.versions_deleted[0])
    assert proj.verify().ok


def test_max_age_forgets_older_runs_and_keeps_every_snapshot(proj: ragtt.Project) -> None:
    runs = _runs(proj)
    started = {qid: proj.events.query(query_id=qid)[0].ts for qid in runs}
    snapshots = [s.label for s in proj.snapshots()]
    report = proj.prune(max_age=utc_now() - started[runs[len(runs) // 2]])
    assert report.cutoff is not None and report.snapshots_dropped == []
    assert [s.label for s in proj.snapshots()] == snapshots
    kept = [qid for qid in runs if started[qid] >= report.cutoff]
    assert 0 < len(kept) < len(runs) and _runs(proj) == kept
    for qid in kept:
        assert proj.replay(qid).matches_original
    assert proj.verify().ok


def test_prune_again_does_nothing_and_versions_are_never_reused(proj: ragtt.Project) -> None:
    first = proj.prune(max_snapshots=5)
    latest = proj.version
    assert first.versions_deleted and max(first.versions_deleted) < latest
    assert proj.prune(max_snapshots=5).prune_id is None
    with pytest.raises(ragtt.NotFoundError):
        proj.chunks(at=first.versions_deleted[-1])
    proj.ingest_texts({"after.md": "# After\n\nWritten after the prune.\n"})
    assert proj.version == latest + 1
    assert proj.versions()["version"].to_list()[-1] == latest + 1
    assert proj.verify().ok


def test_disk_use_drops_by_at_least_80_percent(proj: ragtt.Project, tmp_path: Path) -> None:
    """Measured above what an empty project takes on the same backend (Postgres gives every
    table and index its minimum pages, about 250 KB here, which a history this small would
    otherwise be dominated by); bench/bench_prune.py measures the raw totals at 1,000 versions."""
    with open_project(tmp_path / "empty" / "proj", embedder=ragtt.HashEmbedder()) as empty:
        floor = disk_bytes(empty)
    before = disk_bytes(proj) - floor
    report = proj.prune(max_snapshots=5)
    after = disk_bytes(proj) - floor
    assert len(report.versions_deleted) >= 70 and len(proj.snapshots()) == 5
    assert after <= 0.2 * before, f"{before} -> {after} bytes ({1 - after / before:.0%} less)"


def test_the_prune_verb_and_its_command_line(proj: ragtt.Project) -> None:
    verb = VERBS["prune"]
    assert verb.writes_index and verb.route == ("POST", "/prune")
    parser = argparse.ArgumentParser(prog="ragtt prune", exit_on_error=False)
    add_arguments(parser, [verb])
    chosen, values = pick(parser.parse_args(["--max-snapshots", "50", "--max-age", "30d", "--keep", "s1"]), [verb])
    assert chosen is verb and values == {"max_snapshots": 50, "max_age": "30d", "keep": ["s1"]}
    report = verb.run(proj, {"max_snapshots": 5, "max_age": "30d"})
    assert verb.to_json(report)["queries_pruned"] == report.queries_pruned > 0
    assert verb.to_text(report).startswith("prune: ")
    with pytest.raises(ragtt.ConfigError, match="needs a policy"):
        verb.run(proj, {})


def test_ragtt_prune_on_the_command_line(proj: ragtt.Project, capsys: pytest.CaptureFixture[str]) -> None:
    from ragtt.cli import main

    kept, pruned = _runs(proj)[-1], _runs(proj)[0]
    stores = ["--project", str(proj.path), "--embedder", "hash"]
    if (uri := events_uri(proj.path)) is not None:
        stores += ["--events-uri", uri]
    argv = ["prune", *stores, "--max-snapshots", "1", "--max-age", "30d", "--keep", kept, "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["queries_pruned"] > 0
    assert main(["replay", *stores, "--query-id", pruned]) != 0
    assert "was pruned on" in capsys.readouterr().err
    assert main(["replay", *stores, "--query-id", kept]) == 0


def test_parse_duration() -> None:
    assert parse_duration("30d") == timedelta(days=30)
    assert parse_duration("12h") == timedelta(hours=12)
    assert parse_duration("1.5m") == timedelta(seconds=90)
    assert parse_duration("2w") == timedelta(weeks=2)
    assert parse_duration(timedelta(seconds=3)) == timedelta(seconds=3)
    for bad in ("30", "d", "-1d", "30 days", "1y"):
        with pytest.raises(ragtt.ConfigError, match="s, m, h, d or w"):
            parse_duration(bad)
