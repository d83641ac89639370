"""``proj.ingest_stream``: an unbounded feed written a batch at a time, one index version per
batch. A batch closes at ``batch_size`` records or ``max_latency`` after its first record,
whichever comes first, so a slow feed still becomes queryable in bounded time.

A reader thread pulls the feed into a queue no longer than a batch, so at most two batches of
records are in memory whatever the feed's length. However the call ends (the feed's end, a
write that raised, Ctrl-C), the reader stops and closes the feed (a generator's ``finally``
runs) before the call returns; a feed blocked inside its own ``next()`` ends the reader when
it yields, at most ``_JOIN_S`` later than that is waited for. Within a batch a record is the whole
current text of its source (the latest wins); a ``None`` text removes the source.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ragtt._html import BOX, STYLE, esc
from ragtt.errors import ConfigError
from ragtt.feeds.records import BadRecord, FeedRecord, SourceKey, feed_record
from ragtt.feeds.sync import ingest_records
from ragtt.results import Result

if TYPE_CHECKING:
    from ragtt.context import Context
    from ragtt.results import IngestReport

__all__ = ["StreamReport", "ingest_stream", "seconds"]

_END = object()
_JOIN_S = 5.0


@dataclass(frozen=True)
class StreamReport(Result):
    """What ``proj.ingest_stream`` wrote: totals over its batches (each batch's own
    ``IngestReport`` went to ``on_batch``), the versions it made, and every failure."""

    batches: int
    records: int
    documents_written: int
    documents_removed: int
    index_version_before: int
    index_version_after: int
    versions: int
    elapsed_s: float
    failed: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed

    def summary(self) -> str:
        return (
            f"{self.records} records in {self.batches} batches: {self.documents_written} written, "
            f"{self.documents_removed} removed, {len(self.failed)} failed; {self.versions} versions "
            f"(v{self.index_version_before} -> v{self.index_version_after}) in {self.elapsed_s:.2f} s"
        )

    def __repr__(self) -> str:
        return "\n".join([f"StreamReport({self.summary()})", *(f"  FAILED {s}: {r}" for s, r in self.failed)])

    def _repr_html_(self) -> str:
        failures = "".join(f"<li>{esc(s)}: {esc(r)}</li>" for s, r in self.failed)
        return f"{STYLE}{BOX}<b>StreamReport</b> {esc(self.summary())}<ul>{failures}</ul></div>"


def seconds(value: str | float | timedelta, name: str) -> float:
    """A positive duration as seconds: ``"5s"``, ``"1.6s"``, ``"2m"``, a number, or a timedelta."""
    from ragtt.retention import parse_duration

    if isinstance(value, int | float) and not isinstance(value, bool):
        out = float(value)
    elif isinstance(value, str | timedelta):
        parsed = parse_duration(value)
        if parsed is None:
            raise ConfigError(f"{name} is a duration ('5s', '2m', seconds as a number); got {value!r}")
        out = parsed.total_seconds()
    else:
        raise ConfigError(f"{name} is a duration ('5s', '2m', seconds as a number); got {value!r}")
    if out <= 0:
        raise ConfigError(f"{name} must be positive; got {value!r}")
    return out


def ingest_stream(
    ctx: Context,
    feed: Iterable[Any],
    *,
    batch_size: int,
    max_latency: str | float | timedelta,
    source_key: SourceKey,
    on_batch: Callable[[IngestReport], None] | None,
) -> StreamReport:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigError(f"batch_size must be a positive int; got {batch_size!r}")
    latency = seconds(max_latency, "max_latency")
    started = time.perf_counter()
    before = ctx.version
    pending: queue.Queue[Any] = queue.Queue(maxsize=batch_size)
    stop = threading.Event()
    reader = threading.Thread(target=_read, args=(feed, pending, stop), name="ragtt-stream-reader", daemon=True)
    reader.start()
    totals = {"batches": 0, "records": 0, "written": 0, "removed": 0, "versions": 0}
    failed: list[tuple[str, str]] = []
    try:
        done = False
        while not done:
            batch: list[Any] = []
            deadline: float | None = None
            while len(batch) < batch_size:
                wait: float | None = None if deadline is None else max(0.0, deadline - time.monotonic())
                try:
                    item = pending.get(timeout=wait)
                except queue.Empty:
                    break  # max_latency reached: write what came
                if item is _END:
                    done = True
                    break
                if isinstance(item, _Stopped):
                    failed.append(("(input)", item.reason))
                    done = True
                    break
                batch.append(item)
                deadline = deadline or time.monotonic() + latency
            if batch:
                report = _write_batch(ctx, batch, source_key)
                totals["batches"] += 1
                totals["records"] += len(batch)
                totals["written"] += len(report.documents_added) + len(report.documents_updated)
                totals["removed"] += len(report.documents_removed)
                totals["versions"] += report.index_version_after != report.index_version_before
                failed += report.failed
                if on_batch is not None:
                    on_batch(report)
    finally:
        stop.set()
        reader.join(_JOIN_S)
    return StreamReport(
        totals["batches"],
        totals["records"],
        totals["written"],
        totals["removed"],
        before,
        ctx.version,
        totals["versions"],
        round(time.perf_counter() - started, 4),
        failed,
    )


@dataclass(frozen=True)
class _Stopped:
    reason: str


def _read(feed: Iterable[Any], out: queue.Queue[Any], stop: threading.Event) -> None:
    def put(item: Any) -> bool:
        while not stop.is_set():  # the consumer may stop early: never block it out of exiting
            try:
                out.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    items = iter(feed)
    try:
        for item in items:
            if not put(item):
                return
    except Exception as exc:  # the feed died: what it gave is written, and the report says why it ended
        put(_Stopped(f"the feed stopped with {type(exc).__name__}: {exc}"))
        return
    finally:  # the consumer stopped early (or the feed ended): let the feed release what it holds
        close = getattr(items, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):  # its own cleanup failing must not hang the consumer
                close()
    put(_END)


def _write_batch(ctx: Context, batch: list[Any], source_key: SourceKey) -> IngestReport:
    latest: dict[str, FeedRecord] = {}
    failed: list[tuple[str, str]] = []
    for n, item in enumerate(batch):
        try:
            record = feed_record(item, source_key)
        except BadRecord as exc:
            failed.append((exc.source or f"(input) item {n} of the batch", str(exc)))
            continue
        latest.pop(record.source, None)  # the latest record of a source wins, in its place
        latest[record.source] = record
    return ingest_records(ctx, latest.values(), failed)
