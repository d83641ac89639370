"""OpenTelemetry traces of logged queries and replays, in OpenInference's conventions.

A run's trace is built from what the event log holds for it, so exporting is a read: no
query is re-run. Each run is one trace of up to three spans that Phoenix (and any
OpenInference-aware viewer) renders natively::

    rag.query   CHAIN      input.value = the question, output.value = the answer
    ├── retrieve  RETRIEVER  retrieval.documents.{i}.document.id / .score / .content / .metadata
    └── generate  LLM        llm.model_name, llm.token_count.* (only when generation ran)

The root also carries ``ragtt.query_id``, ``ragtt.index_version``, ``ragtt.config_id`` and
``ragtt.plan`` (and for a replay ``ragtt.replay_of``), so a trace leads back to
``proj.replay(query_id)``. Trace and span ids are hashes of the query id: exporting the
same run twice sends the same spans. Times come from the events (a run's events are
stamped when it finished; its steps' durations are in ``query.completed``).

``otlp_json`` is plain dicts (OTLP/JSON, as the OTLP spec encodes it: hex ids, nanosecond
times as strings, integers as strings); no OpenTelemetry package is needed to build it.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ragtt._hashing import sha256_hex
from ragtt.errors import NotFoundError
from ragtt.events import types as ev

if TYPE_CHECKING:
    from ragtt.context import Context
    from ragtt.events.base import Event

__all__ = [
    "DEFAULT_PROJECT_NAME",
    "TracedRun",
    "load_traced_runs",
    "otlp_json",
    "span_ids",
]

DEFAULT_PROJECT_NAME = "ragtt"  # the Phoenix project the spans land in (openinference.project.name)

# OpenInference semantic conventions (openinference-semantic-conventions' SpanAttributes;
# a test checks these spellings against that package).
SPAN_KIND = "openinference.span.kind"
INPUT_VALUE = "input.value"
INPUT_MIME = "input.mime_type"
OUTPUT_VALUE = "output.value"
OUTPUT_MIME = "output.mime_type"
DOCUMENTS = "retrieval.documents"
LLM_MODEL = "llm.model_name"
LLM_TOKENS = {
    "prompt_tokens": "llm.token_count.prompt",
    "completion_tokens": "llm.token_count.completion",
    "total_tokens": "llm.token_count.total",
}
LLM_OUTPUT_MESSAGES = "llm.output_messages"
PROJECT_NAME = "openinference.project.name"

# json.dumps(..., sort_keys=True) builds a new encoder per call: one, made once, for every span.
_to_json = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode
_OTLP_TYPE = {str: "stringValue", float: "doubleValue", bool: "boolValue"}

# The events a trace is built from (context.assembled adds nothing the spans show).
_TRACED = (ev.QUERY_RECEIVED, ev.RETRIEVAL_EXECUTED, ev.GENERATION_EXECUTED, ev.QUERY_COMPLETED)
_TRACED_TYPES = frozenset(_TRACED) | frozenset(ev.REPLAY_PREFIX + t for t in _TRACED)

_SPAN_KIND_INTERNAL = 1  # OTLP's SpanKind: OpenInference puts its own kind in an attribute
_STATUS_OK = 1


@dataclass(frozen=True)
class TracedRun:
    """What one trace is built from: a run's events, and its chunks' texts."""

    query_id: str
    events: Mapping[str, Event]  # event type without the ``replay.`` prefix -> event
    replay: bool
    texts: Mapping[str, str]  # chunk_id -> text


def span_ids(query_id: str) -> tuple[str, str, str, str]:
    """(trace id, root, retriever and LLM span ids) of a run: hashes of its query id."""
    digest = sha256_hex("ragtt-trace\0" + query_id)
    return digest[:32], digest[32:48], digest[48:64], sha256_hex("ragtt-llm\0" + query_id)[:16]


def load_traced_runs(ctx: Context, query_ids: Iterable[str], texts: Mapping[str, str] | None = None) -> list[TracedRun]:
    """Read the runs' events from the log and their chunks' texts from the table (one scan
    per index version; ``texts`` already known, e.g. from a QueryResult, are not looked up)."""
    from ragtt.timetravel.run import check_query_id

    found: list[tuple[str, dict[str, Event], bool]] = []
    ids = [check_query_id(q) for q in query_ids]
    for query_id, events in ctx.log.runs(ids, types=_TRACED_TYPES).items():
        by_type = {e.type.removeprefix(ev.REPLAY_PREFIX): e for e in events}
        if ev.RETRIEVAL_EXECUTED not in by_type:
            raise NotFoundError(
                f"no query or replay with id {query_id!r} in this project's event log "
                "(list them with proj.events.frame(types=['query.received']))"
            )
        found.append((query_id, by_type, by_type[ev.RETRIEVAL_EXECUTED].type.startswith(ev.REPLAY_PREFIX)))
    known = dict(texts or {})
    wanted: dict[int, set[str]] = {}
    for _, by_type, _ in found:
        payload = by_type[ev.RETRIEVAL_EXECUTED].payload
        missing = {c["chunk_id"] for c in payload["chunks"]} - known.keys()
        if missing:
            wanted.setdefault(int(payload["index_version"]), set()).update(missing)
    for version, chunk_ids in wanted.items():
        known.update(ctx.table.texts(version, chunk_ids))
    return [TracedRun(qid, by_type, replay, known) for qid, by_type, replay in found]


def otlp_json(runs: Iterable[TracedRun], *, project_name: str = DEFAULT_PROJECT_NAME) -> dict[str, Any]:
    """An OTLP/JSON ``ExportTraceServiceRequest`` with one trace per run."""
    from ragtt import __version__

    spans: list[dict[str, Any]] = []
    # Thousands of small dicts and nothing cyclic: without the pause, the collector's full
    # passes over the growing result make a large export slower per run than a small one.
    paused = gc.isenabled()
    gc.disable()
    try:
        for run in runs:
            spans += _run_spans(run)
    finally:
        if paused:
            gc.enable()
    resource = _attributes({"service.name": "ragtt", PROJECT_NAME: project_name})
    scope = {"name": "ragtt", "version": __version__}
    return {"resourceSpans": [{"resource": {"attributes": resource}, "scopeSpans": [{"scope": scope, "spans": spans}]}]}


def _run_spans(run: TracedRun) -> list[dict[str, Any]]:
    received = run.events[ev.QUERY_RECEIVED]
    retrieval = run.events[ev.RETRIEVAL_EXECUTED].payload
    generation = run.events.get(ev.GENERATION_EXECUTED)
    completed = run.events.get(ev.QUERY_COMPLETED)
    done = completed or run.events[ev.RETRIEVAL_EXECUTED]
    timings = completed.payload.get("timings_ms", {}) if completed else {}
    end = _nanos(done.ts)
    latency = completed.payload.get("latency_ms") if completed else None
    start = end - _ms(latency if latency is not None else sum(timings.values()))
    retrieved = min(end, start + _ms(timings.get("embed", 0.0) + timings.get("retrieve", 0.0)))
    trace_id, root_id, retriever_id, llm_id = span_ids(run.query_id)
    query = retrieval["query"]
    chunks = retrieval["chunks"]

    root: dict[str, Any] = {
        SPAN_KIND: "CHAIN",
        INPUT_VALUE: query,
        INPUT_MIME: "text/plain",
        "ragtt.query_id": run.query_id,
        "ragtt.index_version": int(retrieval["index_version"]),
        "ragtt.config_id": retrieval["config_id"],
        "ragtt.plan": _to_json(retrieval["plan"]),
        "ragtt.mode": retrieval["plan"].get("mode"),
        "ragtt.top_k": retrieval["plan"].get("top_k"),
    }
    if generation is not None:
        root |= {OUTPUT_VALUE: generation.payload["answer"], OUTPUT_MIME: "text/plain"}
    else:
        root |= {OUTPUT_VALUE: _to_json([c["chunk_id"] for c in chunks]), OUTPUT_MIME: "application/json"}
    if run.replay:
        extra = received.payload
        if extra.get("original_query_id"):
            root["ragtt.replay_of"] = extra["original_query_id"]
        if extra.get("at") is not None:
            root["ragtt.replay_at"] = str(extra["at"])
        if completed is not None and "matches_original" in completed.payload:
            root["ragtt.matches_original"] = bool(completed.payload["matches_original"])

    docs: dict[str, Any] = {SPAN_KIND: "RETRIEVER", INPUT_VALUE: query, INPUT_MIME: "text/plain"}
    for i, c in enumerate(chunks):
        prefix = f"{DOCUMENTS}.{i}.document"
        docs[f"{prefix}.id"] = c["chunk_id"]
        docs[f"{prefix}.score"] = float(c["score"])
        docs[f"{prefix}.content"] = run.texts.get(c["chunk_id"], "")
        meta = {k: c[k] for k in ("source", "doc_id", "rank", "scores", "charspan") if k in c}
        docs[f"{prefix}.metadata"] = _to_json(meta)
    docs["ragtt.retrieve_ms"] = float(retrieval.get("retrieve_ms", 0.0))

    spans = [
        _span(trace_id, root_id, None, "rag.query", start, end, root),
        _span(trace_id, retriever_id, root_id, "retrieve", start, retrieved, docs),
    ]
    if generation is not None:
        gen = generation.payload
        llm: dict[str, Any] = {
            SPAN_KIND: "LLM",
            LLM_MODEL: gen["model"],
            INPUT_VALUE: query,
            INPUT_MIME: "text/plain",
            OUTPUT_VALUE: gen["answer"],
            OUTPUT_MIME: "text/plain",
            f"{LLM_OUTPUT_MESSAGES}.0.message.role": "assistant",
            f"{LLM_OUTPUT_MESSAGES}.0.message.content": gen["answer"],
        }
        usage = gen.get("usage") or {}
        llm |= {key: int(usage[name]) for name, key in LLM_TOKENS.items() if usage.get(name) is not None}
        spans.append(_span(trace_id, llm_id, root_id, "generate", retrieved, end, llm))
    return spans


def _span(
    trace_id: str, span_id: str, parent: str | None, name: str, start: int, end: int, attrs: dict[str, Any]
) -> dict[str, Any]:
    span: dict[str, Any] = {
        "traceId": trace_id,
        "spanId": span_id,
        "name": name,
        "kind": _SPAN_KIND_INTERNAL,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": _attributes(attrs),
        "status": {"code": _STATUS_OK},
    }
    if parent is not None:
        span["parentSpanId"] = parent
    return span


def _attributes(values: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key, value in values.items():
        if value is None:
            continue
        kind = type(value)
        if kind is int:
            typed: dict[str, Any] = {"intValue": str(value)}  # OTLP/JSON writes 64-bit integers as strings
        elif kind in _OTLP_TYPE:
            typed = {_OTLP_TYPE[kind]: value}
        else:
            typed = {"stringValue": str(value)}
        out.append({"key": key, "value": typed})
    return out


def _nanos(moment: datetime) -> int:
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1_000


def _ms(value: float) -> int:
    return max(0, round(float(value) * 1e6))
