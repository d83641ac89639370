"""Live export never fails a query: a collector that refuses or is gone is counted, not raised."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import ClassVar

import pytest

import ragtt
from ragtt.traces.http import post_otlp
from tests.traces.conftest import TEXTS
from tests.traces.phoenix import free_port


class _Refuses(http.server.BaseHTTPRequestHandler):
    bodies: ClassVar[list[bytes]] = []  # what it was sent, for the test to look at

    def do_POST(self) -> None:
        _Refuses.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(503)
        self.end_headers()
        self.wfile.write(b"at capacity")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def refusing() -> Iterator[str]:
    """A real HTTP server on loopback that answers every POST with 503."""
    _Refuses.bodies = []
    server = http.server.HTTPServer(("127.0.0.1", 0), _Refuses)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join(10)
    server.server_close()


def test_a_refusing_collector_is_counted_and_the_queries_go_on(project: ragtt.Project, refusing: str) -> None:
    project.ingest_texts(TEXTS)
    live = project.export_traces(endpoint=refusing, live=True)
    results = [project.query("refunds", generate=False), project.query("shipping")]
    assert all(r.chunks for r in results)
    assert live.flush(30)
    assert live.sent == 0 and live.failed == 2 and "HTTP 503" in (live.last_error or "")
    assert _Refuses.bodies and all(body for body in _Refuses.bodies)  # protobuf did reach it
    live.stop()
    assert not live.running
    project.query("refunds")  # after stop: not exported, nothing queued
    assert live.sent + live.failed + live.dropped == 2


def test_a_collector_that_is_gone_is_counted_and_explicit_export_raises(project: ragtt.Project) -> None:
    project.ingest_texts(TEXTS)
    gone = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    live = project.export_traces(endpoint=gone, live=True)
    result = project.query("refunds", generate=False)
    assert live.flush(30) and live.failed == 1 and "could not send" in (live.last_error or "")
    project.close()  # stops the live export too
    assert not live.running
    with pytest.raises(ragtt.TraceExportError, match="could not send spans"):
        post_otlp({"resourceSpans": []}, gone, timeout_s=5)
    assert result.query_id


def test_live_export_takes_an_endpoint_and_no_query_id(project: ragtt.Project) -> None:
    with pytest.raises(ragtt.ConfigError, match="live export takes an endpoint"):
        project.export_traces(live=True)  # type: ignore[call-overload]
    with pytest.raises(ragtt.ConfigError, match="live export takes an endpoint"):
        project.export_traces("q", endpoint="http://127.0.0.1:1", live=True)  # type: ignore[call-overload]
