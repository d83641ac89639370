from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ragtt._hashing import time_ordered_id
from ragtt._sqlite import connect
from ragtt.events.store import Event, EventStore


def test_events_are_immutable_and_time_ordered(tmp_path: Path) -> None:
    store = EventStore(tmp_path / "events.db")
    first = store.append(Event("a", {"x": 1}, query_id="q1", index_version=3))
    store.append_many([Event("b", {"y": [1, 2]}, query_id="q1"), Event("c", {}, doc_id="d")])
    events = store.query()
    assert [e.type for e in events] == ["a", "b", "c"]
    assert [e.event_id for e in events] == sorted(e.event_id for e in events)
    assert events[0].payload == {"x": 1} and events[0].index_version == 3 and events[0].event_id == first.event_id
    raw = connect(tmp_path / "events.db")  # what anyone with the file can do
    for statement in ("UPDATE events SET type = 'z'", "DELETE FROM events"):
        with pytest.raises(Exception, match="immutable"):
            raw.execute(statement)
    raw.close()
    assert len(store.query()) == 3
    store.close()


def test_wal_busy_timeout_and_migrations(tmp_path: Path) -> None:
    store = EventStore(tmp_path / "events.db")
    conn = connect(tmp_path / "events.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
    assert conn.execute("PRAGMA user_version").fetchone()[0] >= 1
    conn.close()
    store.close()
    # Re-opening migrates nothing and keeps the data.
    again = EventStore(tmp_path / "events.db")
    assert again.query() == []
    again.close()


def test_frame_filters(tmp_path: Path) -> None:
    store = EventStore(tmp_path / "events.db")
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    store.append_many(
        [
            Event("query.received", {"text": "a"}, query_id="q1", ts=t0),
            Event("retrieval.executed", {}, query_id="q1", index_version=2, ts=t0 + timedelta(seconds=1)),
            Event("query.received", {"text": "b"}, query_id="q2", ts=t0 + timedelta(days=1)),
        ]
    )
    frame = store.frame()
    assert frame.columns == [
        "seq",
        "event_id",
        "ts",
        "type",
        "query_id",
        "index_version",
        "doc_id",
        "payload",
        "source",
    ]
    assert str(frame.schema["ts"]) == "Datetime(time_unit='us', time_zone='UTC')"
    assert store.frame(types=["query.received"]).height == 2
    assert store.frame(query_id="q1").height == 2
    assert store.frame(since=t0 + timedelta(hours=1)).height == 1
    assert store.frame(until=t0 + timedelta(seconds=1)).height == 2
    store.close()


def test_time_ordered_ids_sort_by_creation() -> None:
    ids = [time_ordered_id() for _ in range(5000)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
