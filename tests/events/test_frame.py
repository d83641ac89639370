"""``events.frame()`` is the same frame on both backends (Postgres reads it through ADBC as
Arrow): columns, types, NULLs, ``source`` of document events only, and the filters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from ragtt.events.base import Event
from ragtt.events.sql import dump_json
from ragtt.opening import open_log
from tests.backends import events_uri

T0 = datetime(2025, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)


def test_the_frame_is_the_same_on_both_backends(tmp_path: Path, backend: str) -> None:
    tmp_path.mkdir(exist_ok=True)
    log = open_log(tmp_path, events_uri(tmp_path), "chunks", create=True)
    assert log.frame().height == 0 and log.frame().schema["index_version"] == pl.Int64
    log.append_many(
        [
            Event("document.ingested", {"source": "docs/é ?%.md"}, doc_id="d1", index_version=2, ts=T0),
            Event("query.received", {"text": "what's 100% ?", "source": "not a document"}, query_id="q1", ts=T0),
            Event("retrieval.executed", {}, query_id="q1", index_version=2, ts=T0 + timedelta(seconds=1)),
            Event("document.removed", {"source": "b.md"}, doc_id="d2", ts=T0 + timedelta(days=1)),
        ]
    )
    frame = log.frame()
    assert frame.schema == pl.Schema(
        {
            "seq": pl.Int64,
            "event_id": pl.String,
            "ts": pl.Datetime("us", "UTC"),
            "type": pl.String,
            "query_id": pl.String,
            "index_version": pl.Int64,
            "doc_id": pl.String,
            "payload": pl.String,
            "source": pl.String,
        }
    )
    assert frame["seq"].to_list() == [1, 2, 3, 4] and frame["ts"][0] == T0
    assert frame["source"].to_list() == ["docs/é ?%.md", None, None, "b.md"]
    assert frame["query_id"].to_list() == [None, "q1", "q1", None] and frame["index_version"].to_list() == [
        2,
        None,
        2,
        None,
    ]
    assert frame["payload"][1] == '{"text": "what\'s 100% ?", "source": "not a document"}'
    assert log.frame(types=["query.received", "document.removed"])["seq"].to_list() == [2, 4]
    assert log.frame(types="retrieval.executed", query_id="q1")["seq"].to_list() == [3]
    assert log.frame(since=T0 + timedelta(hours=1))["seq"].to_list() == [4]
    assert log.frame(until=T0 + timedelta(seconds=1)).height == 3
    assert log.frame(query_id="nobody").height == 0
    log.close()


def _odd_events(backend: str, separators: bool) -> list[Event]:
    """Events whose text the packed SQLite read must carry as written: unicode, quotes, line
    breaks, a trailing carriage return, empty text beside NULL, a big payload, and (SQLite can
    store them, Postgres text cannot) NUL characters."""
    nul = "\x00" if backend == "sqlite" else ""
    odd = f"é 中文 🙂 \"q\" 'a' \\ \n\tx\r {nul}%s ?"
    events = [
        Event("document.ingested", {"source": odd, "n": 1}, doc_id=f"d{odd}", index_version=3, ts=T0),
        Event("document.ingested", {"source": ""}, doc_id="", index_version=0, ts=T0),
        Event("document.removed", {"no": "source"}, doc_id="d\r", ts=T0 + timedelta(microseconds=1)),
        Event("query.received", {"text": odd, "ctl": "\x1e\x1f\x01"}, query_id=f"{odd}\r", ts=T0),
        Event("query.received", {"text": "x" * 300_000}, query_id="", index_version=-1, ts=T0),
        Event(f"odd.{odd}", {}, ts=T0 + timedelta(days=400)),
        Event("retrieval.executed", {"k": [1, None, 2.5]}, query_id=f"{nul}q\r", index_version=2**62, ts=T0),
    ]
    if separators:  # a separator in a value: this span is read row by row
        events.append(Event("query.received", {}, query_id="a\x1eb\x1fc", doc_id="\x1f", ts=T0))
    return events


@pytest.mark.parametrize("separators", [False, True], ids=["packed", "separator-in-a-value"])
def test_the_frame_holds_every_value_as_written(
    tmp_path: Path, backend: str, separators: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("ragtt.events.store._SEQS_PER_READ", 3)  # SQLite: three spans, the last row by row
    tmp_path.mkdir(exist_ok=True)
    log = open_log(tmp_path, events_uri(tmp_path), "chunks", create=True)
    events = _odd_events(backend, separators)
    log.append_many(events)
    expected = [
        {
            "seq": seq,
            "event_id": e.event_id,
            "ts": e.ts,
            "type": e.type,
            "query_id": e.query_id,
            "index_version": e.index_version,
            "doc_id": e.doc_id,
            "payload": dump_json(e.payload),
            "source": e.payload.get("source") if e.type.startswith("document.") else None,
        }
        for seq, e in enumerate(events, start=1)
    ]
    frame = log.frame()
    assert frame.to_dicts() == expected
    assert log.frame(types="query.received").to_dicts() == [r for r in expected if r["type"] == "query.received"]
    log.close()


def test_a_timestamp_outside_format_ts_reads_as_strptime_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite parses a span's timestamps with NumPy only when every one is in format_ts's
    fixed form; a span holding another (a leap second, a short fraction: another writer's
    text) is read row by row, where Polars' strptime decides as it always has."""
    from ragtt._sqlite import connect

    monkeypatch.setattr("ragtt.events.store._SEQS_PER_READ", 1)  # a span per event
    log = open_log(tmp_path, None, "chunks", create=True)
    log.append_many([Event("query.received", {}, query_id=f"q{i}", ts=T0) for i in range(4)])
    raw = connect(tmp_path / "events.db")
    for ts in ("2025-01-01T23:59:60.000000Z", "2025-01-01T12:00:00.5Z"):
        raw.execute(
            "INSERT INTO events (event_id, ts, type, payload) VALUES (?, ?, 'odd.written', '{}')", (f"e{ts}", ts)
        )
    raw.close()
    frame = log.frame()
    assert frame["ts"].to_list() == [T0] * 4 + [datetime(2025, 1, 2, tzinfo=UTC), T0.replace(microsecond=500_000)]
    assert frame["query_id"].to_list() == ["q0", "q1", "q2", "q3", None, None]
    log.close()
