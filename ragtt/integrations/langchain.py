"""LangChain: a ragtt project as a ``langchain_core`` retriever, and LangChain ``Document``s
into a project (``pip install 'ragtt[langchain]'``).

>>> retriever = RagttRetriever(proj, top_k=4)  # doctest: +SKIP
>>> chain = retriever | format_docs | prompt | llm  # doctest: +SKIP
>>> docs = retriever.invoke("What is the refund window?")  # doctest: +SKIP
>>> proj.replay(docs[0].metadata["query_id"]).matches_original  # doctest: +SKIP
True
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from ragtt.integrations.records import chunk_metadata, content_source, join_by_source, project_lock
from ragtt.project import Project

if TYPE_CHECKING:
    from ragtt.results import IngestReport

__all__ = ["RagttRetriever", "ingest_documents"]


class RagttRetriever(BaseRetriever):
    """Retrieves from a ragtt ``Project``; every call is a logged ragtt query (no generation:
    the chain answers). Each ``Document`` has ``id`` = its chunk id and metadata ``query_id``,
    ``chunk_id``, ``source``, ``score``, ``rank``, ``index_version``, ``regions`` (plus
    ``doc_id`` and ``charspan``). ``top_k`` / ``mode`` None use the project's config."""

    project: Project
    top_k: int | None = None
    mode: str | None = None

    def __init__(self, project: Project, *, top_k: int | None = None, mode: str | None = None, **kwargs: Any) -> None:
        if not isinstance(project, Project):
            raise TypeError(f"RagttRetriever takes a ragtt.Project; got {type(project).__name__}")
        project.plan(top_k=top_k, mode=mode)  # a bad top_k or mode fails here, not at the chain's first call
        unknown = sorted(set(kwargs) - set(BaseRetriever.model_fields))
        if unknown:  # pydantic would drop them silently: top_k=/mode= misspelt would go unnoticed
            raise TypeError(
                f"RagttRetriever got unexpected keyword argument(s) {', '.join(unknown)}; it takes project, "
                f"top_k, mode and BaseRetriever's {', '.join(BaseRetriever.model_fields)}"
            )
        # pydantic's dataclass_transform shows mypy only BaseRetriever's own fields, not these
        super().__init__(project=project, top_k=top_k, mode=mode, **kwargs)  # type: ignore[call-arg]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        with project_lock(self.project):
            result = self.project.query(query, top_k=self.top_k, mode=self.mode, generate=False)
        return [
            Document(id=chunk.chunk_id, page_content=chunk.text, metadata=chunk_metadata(result, chunk))
            for chunk in result.chunks
        ]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        # ragtt's stores are synchronous: a worker thread keeps the event loop free.
        return await asyncio.to_thread(self._get_relevant_documents, query, run_manager=run_manager.get_sync())


def ingest_documents(project: Project, docs: Iterable[Document]) -> IngestReport:
    """Ingest LangChain ``Document``s in one index version. A document's source is
    ``metadata["source"]`` (what LangChain's loaders set), else its ``id``, else a hash of
    its text. Documents that share a source (a PDF loader's pages) become one ragtt document,
    joined in order; ragtt chunks it itself, so hand over whole documents rather than splits.
    Re-ingesting a source replaces it; an unchanged one writes nothing."""
    records = []
    for doc in docs:
        if not isinstance(doc, Document):
            raise TypeError(f"ingest_documents takes langchain_core Documents; got {type(doc).__name__}")
        source = doc.metadata.get("source") or doc.id or content_source(doc.page_content)
        records.append((str(source), doc.page_content))
    with project_lock(project):
        return project.ingest_texts(join_by_source(records))
