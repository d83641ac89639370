"""A run's trace, built from the event log: OpenInference spans, ragtt attributes, stable ids."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

import ragtt
from ragtt.traces import span_ids
from ragtt.traces.http import to_protobuf, traces_url
from ragtt.verbs import VERBS, VerbUsageError
from ragtt.verbs.cli import add_arguments, pick
from ragtt.verbs.schema import body_model
from tests.traces.conftest import ANSWER, attrs, spans_of


def test_a_query_is_a_chain_with_a_retriever_and_an_llm_child(llm_project: ragtt.Project) -> None:
    result = llm_project.query("how long do refunds take?", top_k=3)
    spans = spans_of(llm_project.export_traces(result.query_id))
    by_name = {s["name"]: s for s in spans}
    assert sorted(by_name) == ["generate", "rag.query", "retrieve"]
    root, retriever, llm = by_name["rag.query"], by_name["retrieve"], by_name["generate"]
    assert "parentSpanId" not in root
    assert retriever["parentSpanId"] == llm["parentSpanId"] == root["spanId"]
    assert {s["traceId"] for s in spans} == {root["traceId"]}

    r = attrs(root)
    assert r["openinference.span.kind"] == "CHAIN"
    assert r["input.value"] == "how long do refunds take?" and r["output.value"] == ANSWER
    assert r["ragtt.query_id"] == result.query_id and r["ragtt.index_version"] == result.index_version
    assert r["ragtt.config_id"] == result.config_id
    plan = json.loads(r["ragtt.plan"])
    assert plan == llm_project.plan_of(result.query_id).to_dict() and plan["top_k"] == 3
    assert "ragtt.replay_of" not in r

    d = attrs(retriever)
    assert d["openinference.span.kind"] == "RETRIEVER"
    for i, chunk in enumerate(result.chunks):
        prefix = f"retrieval.documents.{i}.document"
        assert d[f"{prefix}.id"] == chunk.chunk_id
        assert d[f"{prefix}.score"] == chunk.score
        assert d[f"{prefix}.content"] == chunk.text
        meta = json.loads(d[f"{prefix}.metadata"])
        assert meta["source"] == chunk.source and meta["rank"] == chunk.rank
        assert meta["charspan"] == list(chunk.charspan)
    assert f"retrieval.documents.{len(result.chunks)}.document.id" not in d

    m = attrs(llm)
    assert m["openinference.span.kind"] == "LLM" and m["llm.model_name"] == "gpt-4o-mini"
    assert m["output.value"] == ANSWER
    assert m["llm.token_count.prompt"] > 0 and m["llm.token_count.completion"] > 0
    assert m["llm.token_count.total"] == m["llm.token_count.prompt"] + m["llm.token_count.completion"]

    # Times from the events: children inside the root, the LLM after retrieval.
    start, end = int(root["startTimeUnixNano"]), int(root["endTimeUnixNano"])
    assert start <= int(retriever["startTimeUnixNano"]) <= int(retriever["endTimeUnixNano"])
    assert int(retriever["endTimeUnixNano"]) <= int(llm["startTimeUnixNano"]) <= int(llm["endTimeUnixNano"]) <= end
    assert (end - start) / 1e6 == pytest.approx(result.latency_ms, abs=0.01)


def test_without_generation_there_is_no_llm_span(project: ragtt.Project) -> None:
    project.ingest_texts({"a.md": "alpha beta gamma", "b.md": "delta epsilon"})
    result = project.query("alpha", generate=False)
    spans = spans_of(project.export_traces(result.query_id))
    assert [s["name"] for s in spans] == ["rag.query", "retrieve"]
    root = attrs(spans[0])
    assert json.loads(root["output.value"]) == result.chunk_ids and root["output.mime_type"] == "application/json"


def test_replays_have_the_same_shape_and_name_the_original(llm_project: ragtt.Project) -> None:
    original = llm_project.query("refunds", generate=False)
    replay = llm_project.replay(original.query_id)
    as_of = llm_project.replay_text("refunds", at=1)
    spans = spans_of(llm_project.export_traces([original.query_id, replay.query_id, as_of.query_id]))
    roots = [attrs(s) for s in spans if s["name"] == "rag.query"]
    assert [r["ragtt.query_id"] for r in roots] == [original.query_id, replay.query_id, as_of.query_id]
    assert roots[1]["ragtt.replay_of"] == original.query_id and roots[1]["ragtt.matches_original"] is True
    assert "ragtt.replay_of" not in roots[2] and roots[2]["ragtt.replay_at"] == "1"
    assert roots[2]["ragtt.index_version"] == 1
    replay_docs = next(
        attrs(s) for s in spans if s["name"] == "retrieve" and s["traceId"] == span_ids(replay.query_id)[0]
    )
    assert [
        replay_docs[f"retrieval.documents.{i}.document.id"] for i in range(len(replay.chunks))
    ] == original.chunk_ids


def test_ids_are_derived_from_the_query_id_so_re_export_is_idempotent(llm_project: ragtt.Project) -> None:
    a = llm_project.query("refunds")
    b = llm_project.query("shipping")
    first = llm_project.export_traces(a.query_id)
    assert llm_project.export_traces(a.query_id) == first
    trace_id, root_id, retriever_id, llm_id = span_ids(a.query_id)
    assert [(s["traceId"], s["spanId"]) for s in spans_of(first)] == [
        (trace_id, root_id),
        (trace_id, retriever_id),
        (trace_id, llm_id),
    ]
    assert span_ids(b.query_id)[0] != trace_id and len({root_id, retriever_id, llm_id}) == 3


def test_unknown_ids_and_bad_arguments_are_refused(project: ragtt.Project) -> None:
    project.ingest_texts({"a.md": "alpha"})
    with pytest.raises(ragtt.NotFoundError, match="no query or replay with id 'nope'"):
        project.export_traces("nope")
    with pytest.raises(ragtt.ConfigError, match="needs a query id"):
        project.export_traces()  # type: ignore[call-overload]
    with pytest.raises(ragtt.ConfigError, match="http"):
        traces_url("127.0.0.1:6006")
    assert traces_url("http://h:1/") == "http://h:1/v1/traces" == traces_url("http://h:1/v1/traces")


def test_the_attribute_names_are_openinference_s() -> None:
    from openinference.semconv.resource import ResourceAttributes
    from openinference.semconv.trace import DocumentAttributes, MessageAttributes, SpanAttributes

    from ragtt.traces import otlp

    assert otlp.SPAN_KIND == SpanAttributes.OPENINFERENCE_SPAN_KIND
    assert otlp.INPUT_VALUE == SpanAttributes.INPUT_VALUE and otlp.OUTPUT_VALUE == SpanAttributes.OUTPUT_VALUE
    assert otlp.INPUT_MIME == SpanAttributes.INPUT_MIME_TYPE and otlp.OUTPUT_MIME == SpanAttributes.OUTPUT_MIME_TYPE
    assert otlp.DOCUMENTS == SpanAttributes.RETRIEVAL_DOCUMENTS
    assert otlp.LLM_MODEL == SpanAttributes.LLM_MODEL_NAME
    assert otlp.LLM_OUTPUT_MESSAGES == SpanAttributes.LLM_OUTPUT_MESSAGES
    assert set(otlp.LLM_TOKENS.values()) == {
        SpanAttributes.LLM_TOKEN_COUNT_PROMPT,
        SpanAttributes.LLM_TOKEN_COUNT_COMPLETION,
        SpanAttributes.LLM_TOKEN_COUNT_TOTAL,
    }
    assert otlp.PROJECT_NAME == ResourceAttributes.PROJECT_NAME
    for field in ("id", "score", "content", "metadata"):
        assert f"document.{field}" == getattr(DocumentAttributes, f"DOCUMENT_{field.upper()}")
    assert MessageAttributes.MESSAGE_ROLE == "message.role" and MessageAttributes.MESSAGE_CONTENT == "message.content"


def test_the_protobuf_carries_the_same_spans(llm_project: ragtt.Project) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    result = llm_project.query("refunds")
    otlp = llm_project.export_traces(result.query_id, project_name="mine")
    message = ExportTraceServiceRequest.FromString(to_protobuf(otlp))
    (resource,) = message.resource_spans
    assert {a.key: a.value.string_value for a in resource.resource.attributes}["openinference.project.name"] == "mine"
    got = list(resource.scope_spans[0].spans)
    sent = spans_of(otlp)
    assert [(s.trace_id.hex(), s.span_id.hex(), s.parent_span_id.hex(), s.name) for s in got] == [
        (s["traceId"], s["spanId"], s.get("parentSpanId", ""), s["name"]) for s in sent
    ]
    assert [s.start_time_unix_nano for s in got] == [int(s["startTimeUnixNano"]) for s in sent]
    scores = {a.key: a.value.double_value for a in got[1].attributes if a.key.endswith(".score")}
    assert scores["retrieval.documents.0.document.score"] == result.chunks[0].score


def test_the_verb_writes_the_file_and_keeps_urls_and_files_from_servers(
    llm_project: ragtt.Project, tmp_path: Path
) -> None:
    verb = VERBS["export_traces"]
    assert verb.cli == "export-traces" and verb.route == ("GET", "/query/{query_id}/traces")
    result = llm_project.query("refunds")
    out = tmp_path / "trace.json"
    otlp = verb.run(llm_project, {"query_id": result.query_id, "out": str(out)})
    assert (
        json.loads(out.read_text(encoding="utf-8")) == verb.to_json(otlp) == llm_project.export_traces(result.query_id)
    )
    assert verb.to_text(otlp).splitlines()[0].split() == [
        span_ids(result.query_id)[0],
        span_ids(result.query_id)[1],
        "rag.query",
    ]
    # The command line the generated CLI will parse with the table's own argparse builder.
    parser = argparse.ArgumentParser(prog="ragtt export-traces", exit_on_error=False)
    add_arguments(parser, [verb])
    picked, values = pick(parser.parse_args(["--query-id", result.query_id, "-o", str(out)]), [verb])
    assert picked is verb and values == {"query_id": result.query_id, "out": str(out)}
    with pytest.raises(VerbUsageError, match="--query-id"):  # required: the table says so, by name
        pick(parser.parse_args(["--endpoint", "http://127.0.0.1:6006"]), [verb])
    flags = {a.name: a.flags for a in verb.args}
    assert flags == {"query_id": ("--query-id",), "endpoint": ("--endpoint",), "out": ("-o", "--out")}
    for front in ("rest", "mcp"):
        assert set(body_model(verb, front).model_fields) == {"query_id"}


def test_the_rest_route_returns_the_otlp_json(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from ragtt.serve import create_app
    from tests.traces.conftest import TEXTS

    with TestClient(create_app(tmp_path / "proj", embedder=ragtt.HashEmbedder())) as client:
        assert client.post("/ingest", json={"texts": TEXTS}).status_code == 200
        query_id = client.post("/query", json={"text": "refunds", "generate": False}).json()["query_id"]
        response = client.get(f"/query/{query_id}/traces")
        assert response.status_code == 200, response.text
        names = [s["name"] for s in spans_of(response.json())]
        assert names == ["rag.query", "retrieve"]
        # A client cannot make the server post anywhere: the endpoint is no parameter of the route
        # (were it used, the unreachable host would be an error, not the same trace).
        ignored = client.get(f"/query/{query_id}/traces", params={"endpoint": "http://unreachable.invalid"})
        assert ignored.status_code == 200 and ignored.json() == response.json()
        assert client.get("/query/nope/traces").status_code == 404


def test_importing_the_trace_builder_imports_no_opentelemetry() -> None:
    code = (
        "import sys, ragtt.traces, ragtt.traces.live; "
        "print([m for m in sys.modules if m.startswith(('opentelemetry', 'google.protobuf'))])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
