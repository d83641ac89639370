"""LangChain: a real LCEL chain over RagttRetriever, and LangChain Documents into a project."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import litellm
import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompt_values import PromptValue
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough

import ragtt
from ragtt.integrations.langchain import RagttRetriever, ingest_documents
from ragtt.integrations.records import METADATA_KEYS
from tests.conftest import corpus
from tests.integrations.flask_docs import QUESTION, flask_docs

ANSWER = "Set app.config['SECRET_KEY'] to a long random value."
ROLES = {"human": "user", "ai": "assistant", "system": "system"}


def lc_documents() -> list[Document]:
    return [Document(page_content=text, metadata={"source": source}) for source, text in flask_docs()]


def litellm_mock_model(seen: list[list[dict[str, str]]]) -> RunnableLambda[PromptValue, AIMessage]:
    """The chain's model: litellm's own offline mock (a real ModelResponse), no API key."""

    def call(prompt: PromptValue) -> AIMessage:
        messages = [{"role": ROLES[m.type], "content": str(m.content)} for m in prompt.to_messages()]
        seen.append(messages)
        response: Any = litellm.completion(model="gpt-4o-mini", messages=messages, mock_response=ANSWER)
        return AIMessage(content=response.choices[0].message.content)

    return RunnableLambda(call)


def format_docs(docs: list[Document]) -> str:
    return "\n\n".join(f"[{d.metadata['source']}] {d.page_content}" for d in docs)


def test_an_lcel_chains_answer_replays_identically(project: ragtt.Project) -> None:
    before = project.version
    report = ingest_documents(project, lc_documents())
    assert report.ok and project.version == before + 1  # one index version for the call
    assert sorted(report.documents_added) == ["docs/config.rst", "docs/installation.rst", "docs/web-security.rst"]

    seen: list[list[dict[str, str]]] = []
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from this context only:\n{context}"), ("human", "{question}")]
    )
    retriever = RagttRetriever(project, top_k=3)
    answer_chain = (
        RunnablePassthrough.assign(context=lambda x: format_docs(x["context"]))
        | prompt
        | litellm_mock_model(seen)
        | StrOutputParser()
    )
    chain = RunnableParallel(context=retriever, question=RunnablePassthrough()).assign(answer=answer_chain)
    out = chain.invoke(QUESTION)

    assert out["answer"] == ANSWER
    docs: list[Document] = out["context"]
    assert len(docs) == 3 and all(set(METADATA_KEYS) <= set(d.metadata) for d in docs)
    assert [d.metadata["rank"] for d in docs] == [1, 2, 3]
    assert all(d.id == d.metadata["chunk_id"] for d in docs)
    assert docs[0].page_content in seen[0][0]["content"]  # the model saw what ragtt retrieved
    [query_id] = {d.metadata["query_id"] for d in docs}
    assert {d.metadata["index_version"] for d in docs} == {project.version}

    run = project.run(query_id)
    assert run.query == QUESTION and run.plan.top_k == 3
    replay = project.replay(query_id)
    assert replay.matches_original is True
    assert replay.chunk_ids == [d.metadata["chunk_id"] for d in docs]
    assert [c.score for c in replay.chunks] == [d.metadata["score"] for d in docs]


def test_every_call_is_a_logged_query_with_the_retrievers_plan(project: ragtt.Project) -> None:
    ingest_documents(project, lc_documents())
    retriever = RagttRetriever(project, top_k=2, mode="bm25")
    first, second = retriever.invoke(QUESTION), retriever.invoke("installing Flask in a virtualenv")
    ids = [first[0].metadata["query_id"], second[0].metadata["query_id"]]
    assert len(set(ids)) == 2 and len(first) == len(second) == 2
    logged = project.events.frame().filter(project.events.frame()["type"] == "query.completed")
    assert set(ids) <= set(logged["query_id"])
    assert {project.plan_of(i).mode for i in ids} == {"bm25"}
    assert project.replay(ids[1]).chunk_ids == [d.metadata["chunk_id"] for d in second]


def test_async_batches_are_logged_queries_that_replay(project: ragtt.Project) -> None:
    ingest_documents(project, lc_documents())
    retriever = RagttRetriever(project, top_k=2)
    questions = [QUESTION, "installing Flask in a virtualenv", "cross-site scripting"]
    batches = own_loop(retriever.abatch(questions))
    ids = [docs[0].metadata["query_id"] for docs in batches]
    assert len(set(ids)) == 3
    assert [project.run(i).query for i in ids] == questions
    assert all(project.replay(i).matches_original for i in ids)


def test_retrievers_of_one_project_run_in_parallel_threads(project: ragtt.Project) -> None:
    # RunnableParallel and batch run retrievers on worker threads; one project's connections
    # serve one query at a time (unserialized, SQLite refuses a transaction within one)
    ingest_documents(project, lc_documents())
    both = RunnableParallel(
        narrow=RagttRetriever(project, top_k=1), wide=RagttRetriever(project, top_k=3, mode="hybrid")
    )
    questions = [f"{q} ({i})" for i in range(12) for q in (QUESTION, "installing Flask", "cross-site scripting")]
    outs = both.batch(questions, config={"max_concurrency": 8})
    ids = [docs[0].metadata["query_id"] for out in outs for docs in out.values()]
    assert len(set(ids)) == 2 * len(questions)
    assert all(project.replay(i).matches_original for i in ids)
    assert project.verify().ok


def test_pdf_chunks_come_back_with_their_regions(project: ragtt.Project) -> None:
    project.ingest(corpus("pdfs", "docling__normal_4pages.pdf"))
    docs = RagttRetriever(project, top_k=2).invoke("layout analysis of tables")
    for doc in docs:
        assert doc.metadata["regions"]
        assert all(r["page"] >= 1 and r["x1"] > r["x0"] and r["y1"] > r["y0"] for r in doc.metadata["regions"])


def test_documents_sharing_a_source_become_one_document(project: ragtt.Project) -> None:
    pages = [
        Document(page_content="Refunds are issued within 30 days.", metadata={"source": "policy.pdf", "page": 0}),
        Document(page_content="Shipping takes three days.", metadata={"source": "policy.pdf", "page": 1}),
        Document(page_content="Named by its id.", id="faq-7"),
        Document(page_content="Named by nothing at all."),
    ]
    report = ingest_documents(project, pages)
    assert report.ok and len(report.documents_added) == 3
    doc = project.document("policy.pdf")
    assert doc.text == "Refunds are issued within 30 days.\n\nShipping takes three days."
    assert project.document("faq-7").text == "Named by its id."
    [hashed] = [s for s in report.documents_added if s.startswith("document-")]
    assert project.document(hashed).text == "Named by nothing at all."
    again = ingest_documents(project, pages)  # the same documents again: nothing changes
    assert sorted(again.documents_unchanged) == sorted(report.documents_added)
    assert again.index_version_after == report.index_version_after


def test_bad_arguments_fail_at_construction(project: ragtt.Project) -> None:
    with pytest.raises(TypeError, match="topk"):
        RagttRetriever(project, topk=3)
    with pytest.raises(TypeError, match=r"ragtt\.Project"):
        RagttRetriever("./proj")  # type: ignore[arg-type]
    with pytest.raises(ragtt.ConfigError, match="retrieval_mode"):
        RagttRetriever(project, mode="semantic")
    with pytest.raises(TypeError, match="Documents"):
        ingest_documents(project, ["plain text"])  # type: ignore[list-item]


def own_loop(coroutine):  # type: ignore[no-untyped-def]
    """``asyncio.run(coroutine)`` on a thread of its own: a browser test earlier on this worker
    (Playwright's sync API) leaves an event loop running on the main thread."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result(timeout=300)
