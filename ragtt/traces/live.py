"""Live export: each query and replay a project runs, sent to a collector as it happens.

``proj.export_traces(endpoint=URL, live=True)`` returns a ``LiveTraces``. The run's trace is
built in the caller's thread right after its events are logged (from the log, as
``export_traces`` builds it, with the chunk texts the result already holds, so the table is
not read again); a daemon thread sends batches. The queue is bounded: when the collector
is slower than the queries, traces are dropped and counted, never waited for, and a
collector that is down is an error counted here, never a failed query.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import TYPE_CHECKING, Any

from ragtt.traces.http import post_otlp, traces_url
from ragtt.traces.otlp import DEFAULT_PROJECT_NAME, load_traced_runs, otlp_json

if TYPE_CHECKING:
    from ragtt.context import Context
    from ragtt.results import QueryResult

__all__ = ["LiveTraces"]

_BATCH = 64  # runs per OTLP request
_IDLE_S = 0.05  # how long the sender waits for more runs before it sends a partial batch


class LiveTraces:
    """The handle of a live export: ``sent``, ``dropped``, ``failed``, ``last_error``;
    ``flush()`` waits for the queue to drain, ``stop()`` flushes and ends the thread."""

    def __init__(
        self, endpoint: str, *, project_name: str = DEFAULT_PROJECT_NAME, max_queue: int = 1000, timeout_s: float = 5.0
    ) -> None:
        self.endpoint = traces_url(endpoint)
        self.project_name = project_name
        self.sent = 0
        self.dropped = 0
        self.failed = 0
        self.last_error: str | None = None
        self._timeout_s = timeout_s
        self._counts = threading.Lock()  # both threads count failures
        self._queue: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=max_queue)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._send_loop, name="ragtt-live-traces", daemon=True)
        self._thread.start()

    def __repr__(self) -> str:
        state = "stopped" if self._stopping.is_set() else "running"
        return (
            f"LiveTraces({self.endpoint}, {state}, sent={self.sent}, dropped={self.dropped}, "
            f"failed={self.failed}, queued={self._queue.qsize()})"
        )

    @property
    def running(self) -> bool:
        return not self._stopping.is_set()

    def submit(self, ctx: Context, result: QueryResult) -> None:
        """Queue the trace of a run just logged; never raises (a failure is counted)."""
        if self._stopping.is_set():
            self._count("dropped", 1)
            return
        try:
            texts = {c.chunk_id: c.text for c in result.chunks}
            trace = otlp_json(load_traced_runs(ctx, [result.query_id], texts), project_name=self.project_name)
        except Exception as exc:  # the query succeeded; its trace is the only casualty
            self._count("failed", 1, f"building the trace of {result.query_id}: {exc}")
            return
        try:
            self._queue.put_nowait(trace)
        except queue.Full:
            self._count("dropped", 1)

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until every queued trace was sent (or failed); False if ``timeout_s`` passed first."""
        deadline = time.monotonic() + timeout_s
        while self._queue.unfinished_tasks:
            if time.monotonic() >= deadline or not self._thread.is_alive():
                return False
            time.sleep(0.01)
        return True

    def stop(self, timeout_s: float = 10.0) -> None:
        """Send what is queued (up to ``timeout_s``), then end the sender; later runs are not exported."""
        if self._stopping.is_set():
            return
        self.flush(timeout_s)
        self._stopping.set()
        self._thread.join(timeout_s)

    def _count(self, counter: str, n: int, error: str | None = None) -> None:
        with self._counts:
            setattr(self, counter, getattr(self, counter) + n)
            if error is not None:
                self.last_error = error

    def _send_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                first = self._queue.get(timeout=_IDLE_S)
            except queue.Empty:
                continue
            batch = [first]
            while len(batch) < _BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            spans = [s for t in batch for s in t["resourceSpans"][0]["scopeSpans"][0]["spans"]]
            merged = batch[0]
            merged["resourceSpans"][0]["scopeSpans"][0]["spans"] = spans
            try:
                post_otlp(merged, self.endpoint, timeout_s=self._timeout_s)
                self._count("sent", len(batch))
            except Exception as exc:  # a collector that is down must not end the sender
                self._count("failed", len(batch), str(exc))
            finally:
                for _ in batch:
                    self._queue.task_done()
