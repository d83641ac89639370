"""LlamaIndex: a ragtt project as a LlamaIndex retriever, and LlamaIndex nodes into a project
(``pip install 'ragtt[llama-index]'``).

>>> engine = RetrieverQueryEngine.from_args(RagttRetriever(proj), llm=llm)  # doctest: +SKIP
>>> response = engine.query("What is the refund window?")  # doctest: +SKIP
>>> proj.replay(response.source_nodes[0].metadata["query_id"]).matches_original  # doctest: +SKIP
True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore, QueryBundle, TextNode

from ragtt.integrations.records import METADATA_KEYS, chunk_metadata, join_by_source, project_lock
from ragtt.project import Project

if TYPE_CHECKING:
    from ragtt.results import IngestReport

__all__ = ["RagttRetriever", "ingest_documents", "node_source"]

# Provenance for the user, not for the model: only the source name reaches the LLM's prompt.
_HIDDEN_FROM_LLM = [k for k in (*METADATA_KEYS, "doc_id", "charspan") if k != "source"]


class RagttRetriever(BaseRetriever):
    """Retrieves from a ragtt ``Project``; every call is a logged ragtt query (no generation:
    the query engine answers). Returns ``NodeWithScore``s whose ``TextNode`` has ``id_`` = its
    chunk id and metadata ``query_id``, ``chunk_id``, ``source``, ``score``, ``rank``,
    ``index_version``, ``regions`` (plus ``doc_id`` and ``charspan``). ``top_k`` / ``mode``
    None use the project's config."""

    def __init__(self, project: Project, *, top_k: int | None = None, mode: str | None = None, **kwargs: Any) -> None:
        if not isinstance(project, Project):
            raise TypeError(f"RagttRetriever takes a ragtt.Project; got {type(project).__name__}")
        project.plan(top_k=top_k, mode=mode)  # a bad top_k or mode fails here, not at the chain's first call
        super().__init__(**kwargs)
        self.project = project
        self.top_k = top_k
        self.mode = mode

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        with project_lock(self.project):
            result = self.project.query(query_bundle.query_str, top_k=self.top_k, mode=self.mode, generate=False)
        return [
            NodeWithScore(
                node=TextNode(
                    id_=chunk.chunk_id,
                    text=chunk.text,
                    metadata=chunk_metadata(result, chunk),
                    excluded_llm_metadata_keys=_HIDDEN_FROM_LLM,
                    excluded_embed_metadata_keys=_HIDDEN_FROM_LLM,
                ),
                score=chunk.score,
            )
            for chunk in result.chunks
        ]


def node_source(node: BaseNode) -> str:
    """A node's source name: ``metadata["file_path"]`` (what ``SimpleDirectoryReader`` sets),
    else ``metadata["source"]``, else the document it came from (``ref_doc_id``), else its
    own ``node_id``. A ``Document(text=...)`` built without any of these gets a random id:
    give it ``id_=`` or a ``source`` so re-ingesting it replaces it instead of adding a copy."""
    meta = node.metadata
    return str(meta.get("file_path") or meta.get("source") or node.ref_doc_id or node.node_id)


def ingest_documents(project: Project, docs: Iterable[BaseNode]) -> IngestReport:
    """Ingest LlamaIndex documents or nodes in one index version, each under ``node_source``.
    Nodes that share a source (a reader's pages, a splitter's nodes) become one ragtt
    document, joined in order; ragtt chunks it itself, so hand over whole documents rather
    than split nodes. Re-ingesting a source replaces it; an unchanged one writes nothing."""
    records = []
    for node in docs:
        if not isinstance(node, BaseNode):
            raise TypeError(f"ingest_documents takes LlamaIndex documents or nodes; got {type(node).__name__}")
        records.append((node_source(node), node.get_content(metadata_mode=MetadataMode.NONE)))
    with project_lock(project):
        return project.ingest_texts(join_by_source(records))
