"""Acceptance: a real Phoenix receives the spans over OTLP/HTTP and its client reads back what was sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import ragtt
from tests.traces.conftest import ANSWER, TEXTS, attrs, spans_of
from tests.traces.phoenix import phoenix_server, span_reader


def _by_trace(spans: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    traces: dict[str, dict[str, dict[str, Any]]] = {}
    for span in spans:
        traces.setdefault(span["context"]["trace_id"], {})[span["name"]] = span
    return traces


@pytest.mark.slow  # a real Phoenix: about a minute to start on two busy cores
def test_phoenix_shows_queries_replays_and_live_runs_as_sent(tmp_path: Path) -> None:
    generator = ragtt.LiteLLMGenerator("gpt-4o-mini", mock_response=ANSWER)
    (tmp_path / "phoenix").mkdir()
    with (
        span_reader() as read_spans,
        phoenix_server(tmp_path / "phoenix") as url,
        ragtt.Project.open(
            tmp_path / "proj", embedder=ragtt.HashEmbedder(), generator=generator, progress=False
        ) as proj,
    ):
        proj.ingest_texts(TEXTS)
        query = proj.query("how long do refunds take?", top_k=3)
        replay = proj.replay(query.query_id)
        sent = proj.export_traces([query.query_id, replay.query_id], endpoint=url, project_name="ragtt-test")

        live = proj.export_traces(endpoint=url, live=True, project_name="ragtt-live")
        live_query = proj.query("shipping costs", generate=False)
        live_replay = proj.replay(live_query.query_id)
        assert live.flush(60), live
        assert (live.sent, live.failed, live.dropped) == (2, 0, 0), live.last_error
        live.stop()

        got = read_spans(url, {"ragtt-test": 5, "ragtt-live": 4})

    # Explicit export: a query with its LLM child, and its replay; names, kinds, parents, documents.
    traces = _by_trace(got["ragtt-test"])
    assert len(got["ragtt-test"]) == 5
    sent_by_id = {s["spanId"]: s for s in spans_of(sent)}
    for trace in traces.values():
        root = trace["rag.query"]
        assert root["span_kind"] == "CHAIN" and root["parent_id"] is None
        for name in set(trace) - {"rag.query"}:
            assert trace[name]["parent_id"] == root["context"]["span_id"]
        for span in trace.values():
            assert span["context"]["span_id"] in sent_by_id  # the ids we derived, not Phoenix's
    q = next(t for t in traces.values() if t["rag.query"]["attributes"]["ragtt.query_id"] == query.query_id)
    r = next(t for t in traces.values() if t["rag.query"]["attributes"]["ragtt.query_id"] == replay.query_id)
    assert sorted(q) == ["generate", "rag.query", "retrieve"] and sorted(r) == ["rag.query", "retrieve"]
    assert q["retrieve"]["span_kind"] == "RETRIEVER" and q["generate"]["span_kind"] == "LLM"

    root = q["rag.query"]["attributes"]
    assert root["input.value"] == "how long do refunds take?" and root["output.value"] == ANSWER
    assert root["ragtt.index_version"] == query.index_version and root["ragtt.config_id"] == query.config_id
    assert json.loads(root["ragtt.plan"])["top_k"] == 3
    assert r["rag.query"]["attributes"]["ragtt.replay_of"] == query.query_id
    assert r["rag.query"]["attributes"]["ragtt.matches_original"] is True

    docs = q["retrieve"]["attributes"]
    assert len(query.chunks) == 3
    for i, chunk in enumerate(query.chunks):
        prefix = f"retrieval.documents.{i}.document"
        assert docs[f"{prefix}.id"] == chunk.chunk_id
        assert docs[f"{prefix}.score"] == chunk.score
        assert docs[f"{prefix}.content"] == chunk.text
        assert docs[f"{prefix}.metadata.source"] == chunk.source  # Phoenix unfolds the metadata JSON
    llm = q["generate"]["attributes"]
    sent_llm = attrs(next(s for s in spans_of(sent) if s["name"] == "generate"))
    assert llm["llm.model_name"] == "gpt-4o-mini"
    for key in ("llm.token_count.prompt", "llm.token_count.completion", "llm.token_count.total"):
        assert llm[key] == sent_llm[key] > 0

    # Live export: each run arrived as it happened, in its own project, in the same shape.
    live_traces = _by_trace(got["ragtt-live"])
    roots = {t["rag.query"]["attributes"]["ragtt.query_id"]: t for t in live_traces.values()}
    assert set(roots) == {live_query.query_id, live_replay.query_id}
    assert roots[live_replay.query_id]["rag.query"]["attributes"]["ragtt.replay_of"] == live_query.query_id
    live_docs = roots[live_query.query_id]["retrieve"]["attributes"]
    assert [live_docs[f"retrieval.documents.{i}.document.id"] for i in range(len(live_query.chunks))] == (
        live_query.chunk_ids
    )
    assert [live_docs[f"retrieval.documents.{i}.document.score"] for i in range(len(live_query.chunks))] == [
        c.score for c in live_query.chunks
    ]
