"""Trace export reads the event log through its seam: the same traces on SQLite and Postgres."""

from __future__ import annotations

from typing import Any

from tests.traces.conftest import TEXTS, attrs, spans_of


def test_many_runs_export_in_one_read_on_each_backend(backend: str, open_project: Any) -> None:
    proj = open_project()
    proj.ingest_texts(TEXTS)
    ids = [proj.query(q, generate=False).query_id for q in ("refunds", "shipping", "returns")]
    ids.append(proj.replay(ids[0]).query_id)
    events = proj.events.runs([*ids, "unknown"])
    assert list(events) == [*ids, "unknown"] and events["unknown"] == []
    assert all(e.query_id == q for q in ids for e in events[q]) and len(events[ids[0]]) == 4
    only = proj.events.runs(ids[-1:], types=["replay.query.received", "replay.query.completed"])
    assert [e.type for e in only[ids[-1]]] == ["replay.query.received", "replay.query.completed"]
    roots = [attrs(s) for s in spans_of(proj.export_traces(reversed(ids))) if s["name"] == "rag.query"]
    assert [r["ragtt.query_id"] for r in roots] == ids[::-1]
    assert roots[0]["ragtt.replay_of"] == ids[0]
