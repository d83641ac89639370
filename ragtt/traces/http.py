"""OTLP/HTTP: the OTLP/JSON dict sent to a collector as protobuf (what Phoenix's ``/v1/traces``
accepts). ``opentelemetry-proto`` is imported only here, only when spans are sent
(``pip install 'ragtt[otel]'``).
"""

from __future__ import annotations

import base64
import copy
import urllib.error
import urllib.request
from typing import Any

from ragtt.errors import ConfigError, TraceExportError

__all__ = ["post_otlp", "to_protobuf", "traces_url"]


def traces_url(endpoint: str) -> str:
    """``http://host:port`` or a full ``.../v1/traces`` URL: where OTLP/HTTP posts spans."""
    if not endpoint.startswith(("http://", "https://")):
        raise ConfigError(f"a trace endpoint is an http(s) URL, e.g. http://127.0.0.1:6006; got {endpoint!r}")
    return endpoint if endpoint.rstrip("/").endswith("/v1/traces") else endpoint.rstrip("/") + "/v1/traces"


def to_protobuf(otlp: dict[str, Any]) -> bytes:
    """The OTLP/JSON dict as an ``ExportTraceServiceRequest`` in protobuf bytes."""
    try:
        from google.protobuf import json_format
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError as exc:
        raise ConfigError("exporting to an endpoint needs opentelemetry-proto: pip install 'ragtt[otel]'") from exc
    message = copy.deepcopy(otlp)
    # OTLP/JSON writes ids in hex; protobuf's JSON mapping reads bytes as base64.
    for resource in message["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode("ascii")
    return bytes(json_format.ParseDict(message, ExportTraceServiceRequest()).SerializeToString())


def post_otlp(otlp: dict[str, Any], endpoint: str, *, timeout_s: float = 10.0) -> None:
    """POST the spans to an OTLP/HTTP collector (Phoenix: ``http://127.0.0.1:6006``)."""
    url = traces_url(endpoint)
    request = urllib.request.Request(
        url, data=to_protobuf(otlp), method="POST", headers={"Content-Type": "application/x-protobuf"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # traces_url allows http(s) only
            response.read()
    except urllib.error.HTTPError as exc:
        raise TraceExportError(f"{url} refused the spans: HTTP {exc.code} {exc.read()[:200]!r}") from exc
    except OSError as exc:
        raise TraceExportError(f"could not send spans to {url}: {exc}") from exc
