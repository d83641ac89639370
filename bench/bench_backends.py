"""Issue 12's event-store targets, on a throwaway PostgreSQL and a SQLite file.

- Postgres: one query's 5 events appended in one transaction, p50 under 3 ms on loopback.
- ``events.frame()`` of 1,000,000 events: under 2 s from Postgres, under 1 s from SQLite.

The logs are built through the log's own API (``append_many``, 10,000 events a transaction,
hash chain and guards included), with the event mix of a query-heavy project: five run
events per query and one ``document.ingested`` in a thousand. ``--quick`` builds 100,000
events and scales the frame targets by the size (they are linear in it). The server is the
tests' (``tests/backends.postgres_server``), started here and stopped by PID.

    python bench/bench_backends.py [--events N] [--appends K] [--quick] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ragtt.events import types as ev  # noqa: E402
from ragtt.events.base import Event, EventLog  # noqa: E402
from ragtt.opening import open_log  # noqa: E402

RUN = (ev.QUERY_RECEIVED, ev.RETRIEVAL_EXECUTED, ev.CONTEXT_ASSEMBLED, ev.GENERATION_EXECUTED, ev.QUERY_COMPLETED)
BATCH = 10_000
FULL = 1_000_000


def synthetic(start: int, stop: int, tag: str = "") -> list[Event]:
    events = []
    for i in range(start, stop):
        if i % 1000 == 999:
            events.append(Event(ev.DOCUMENT_INGESTED, {"source": f"docs/{i}.md"}, doc_id=f"d{i}", index_version=2))
        else:
            payload = {"text": f"question {i // 5}", "top_k": 5, "chunk_ids": [f"c{i % 97}", f"c{i % 89}"]}
            events.append(Event(RUN[i % 5], payload, query_id=f"{tag}q{i // 5:09d}", index_version=2))
    return events


def build(log: EventLog, n: int) -> float:
    t0 = time.perf_counter()
    for start in range(0, n, BATCH):
        log.append_many(synthetic(start, min(n, start + BATCH)))
    return time.perf_counter() - t0


def append_p50(log: EventLog, rounds: int) -> float:
    seconds = []
    for r in range(rounds):
        events = [Event(t, {"text": f"live {r}", "top_k": 5}, query_id=f"live{r:06d}", index_version=2) for t in RUN]
        t0 = time.perf_counter()
        log.append_many(events)
        seconds.append(time.perf_counter() - t0)
    return statistics.median(seconds)


def frame_seconds(log: EventLog, n: int) -> float:
    seconds = []
    for _ in range(3):
        t0 = time.perf_counter()
        frame = log.frame()
        seconds.append(time.perf_counter() - t0)
    assert frame.height >= n, (frame.height, n)
    return min(seconds)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, help=f"events in each log (default {FULL:,}; quick 100,000)")
    ap.add_argument("--appends", type=int, help="5-event appends timed (default 300; quick 100)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    n = args.events or (100_000 if args.quick else FULL)
    appends = args.appends or (100 if args.quick else 300)
    scale = n / FULL
    from tests.backends import postgres_server

    rows: list[dict[str, Any]] = []

    def row(name: str, value: float, limit: float | None, unit: str = "s") -> None:
        ok = None if limit is None else value < limit
        verdict = "info" if ok is None else ("PASS" if ok else "FAIL")
        shown = f"{value * 1000:8.2f} ms" if unit == "ms" else f"{value:8.2f} s "
        target = "" if limit is None else (f"< {limit * 1000:.0f} ms" if unit == "ms" else f"< {limit:.2f} s")
        print(f"  {name:<44} {shown}  {target:>10}  {verdict}", flush=True)
        rows.append({"name": name, "seconds": value, "limit_s": limit, "status": verdict})

    print(f"\nissue 12 / event store: {n:,} events per log, {appends} timed 5-event appends")
    with tempfile.TemporaryDirectory(prefix="ragtt-bench-backends-") as tmp, postgres_server() as admin:
        for name, uri in (("postgres", admin), ("sqlite", None)):
            log = open_log(Path(tmp), uri, "chunks", create=True)
            try:
                row(f"{name}: build {n:,} events (append_many)", build(log, n), None)
                row(f"{name}: 5-event query append p50", append_p50(log, appends), 0.003 if uri else None, "ms")
                target = (2.0 if uri else 1.0) * scale
                row(f"{name}: events.frame() of {n:,} events", frame_seconds(log, n), target)
            finally:
                log.close()
    if args.json:
        args.json.write_text(json.dumps({"events": n, "rows": rows}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
