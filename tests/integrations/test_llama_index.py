"""LlamaIndex: a RetrieverQueryEngine over RagttRetriever with a mock LLM, and nodes into a project."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
from llama_index.core import Document
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode

import ragtt
from ragtt.integrations.llama_index import RagttRetriever, ingest_documents, node_source
from ragtt.integrations.records import METADATA_KEYS
from tests.integrations.flask_docs import QUESTION, flask_docs


def li_documents() -> list[Document]:
    # what SimpleDirectoryReader makes: one Document per file, file_path in its metadata
    return [Document(text=text, metadata={"file_path": source}) for source, text in flask_docs()]


def test_a_query_engines_answer_replays_identically(project: ragtt.Project) -> None:
    before = project.version
    report = ingest_documents(project, li_documents())
    assert report.ok and project.version == before + 1
    assert sorted(report.documents_added) == ["docs/config.rst", "docs/installation.rst", "docs/web-security.rst"]

    engine = RetrieverQueryEngine.from_args(RagttRetriever(project, top_k=3), llm=MockLLM())
    response = engine.query(QUESTION)

    nodes = response.source_nodes
    assert len(nodes) == 3 and all(set(METADATA_KEYS) <= set(n.metadata) for n in nodes)
    assert [n.metadata["rank"] for n in nodes] == [1, 2, 3]
    assert all(n.node.node_id == n.metadata["chunk_id"] and n.score == n.metadata["score"] for n in nodes)
    # MockLLM answers with the prompt it got: the retrieved text and its source, not ragtt's bookkeeping
    answer = str(response)
    assert nodes[0].get_content() in answer and f"source: {nodes[0].metadata['source']}" in answer
    assert "query_id" not in answer and "regions" not in answer
    [query_id] = {n.metadata["query_id"] for n in nodes}

    assert project.run(query_id).query == QUESTION
    replay = project.replay(query_id)
    assert replay.matches_original is True
    assert replay.chunk_ids == [n.metadata["chunk_id"] for n in nodes]


def test_async_queries_are_logged_and_replay(project: ragtt.Project) -> None:
    ingest_documents(project, li_documents())
    engine = RetrieverQueryEngine.from_args(RagttRetriever(project, top_k=2, mode="hybrid"), llm=MockLLM())
    response = own_loop(engine.aquery("installing Flask in a virtualenv"))
    [query_id] = {n.metadata["query_id"] for n in response.source_nodes}
    assert project.plan_of(query_id).mode == "hybrid" and project.plan_of(query_id).top_k == 2
    assert project.replay(query_id).matches_original


def test_node_sources_and_nodes_sharing_one(project: ragtt.Project) -> None:
    split = TextNode(
        text="Shipping takes three days.",
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="policy-doc")},
    )
    nodes = [
        TextNode(text="Refunds are issued within 30 days.", metadata={"source": "policy-doc"}),
        split,
        TextNode(text="Named by its own id.", id_="faq-7"),
        Document(text="From a file.", metadata={"file_path": "/data/a.md", "source": "ignored"}),
    ]
    assert [node_source(n) for n in nodes] == ["policy-doc", "policy-doc", "faq-7", "/data/a.md"]
    before = project.version
    report = ingest_documents(project, nodes)
    assert report.ok and sorted(report.documents_added) == ["/data/a.md", "faq-7", "policy-doc"]
    assert project.version == before + 1
    assert project.document("policy-doc").text == "Refunds are issued within 30 days.\n\nShipping takes three days."
    again = ingest_documents(project, nodes)
    assert sorted(again.documents_unchanged) == sorted(report.documents_added) and project.version == before + 1


def test_bad_arguments_fail_at_construction(project: ragtt.Project) -> None:
    with pytest.raises(TypeError, match="topk"):
        RagttRetriever(project, topk=3)
    with pytest.raises(TypeError, match=r"ragtt\.Project"):
        RagttRetriever("./proj")  # type: ignore[arg-type]
    with pytest.raises(ragtt.ConfigError, match="top_k"):
        RagttRetriever(project, top_k=-1)
    with pytest.raises(TypeError, match="nodes"):
        ingest_documents(project, ["plain text"])  # type: ignore[list-item]


def own_loop(coroutine):  # type: ignore[no-untyped-def]
    """``asyncio.run(coroutine)`` on a thread of its own: a browser test earlier on this worker
    (Playwright's sync API) leaves an event loop running on the main thread."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result(timeout=300)
