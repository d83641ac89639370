"""What both framework adapters share: naming and joining the documents they ingest, and the
metadata each retrieved chunk carries back into the framework. No framework imports here."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ragtt._hashing import sha256_hex

if TYPE_CHECKING:
    from ragtt.project import Project
    from ragtt.results import QueryResult, RetrievedChunk

__all__ = ["METADATA_KEYS", "chunk_metadata", "content_source", "join_by_source", "project_lock"]

# The keys every retrieved document's metadata has, in both frameworks.
METADATA_KEYS = ("query_id", "chunk_id", "source", "score", "rank", "index_version", "regions")


def chunk_metadata(result: QueryResult, chunk: RetrievedChunk) -> dict[str, Any]:
    """One retrieved chunk's provenance, plain JSON values: enough to replay the query it came
    from (``query_id``) and to point at the passage (``charspan``; ``regions``, the boxes on
    the PDF page as ``{page, x0, y0, x1, y1}`` dicts, empty for text sources)."""
    plain = chunk.to_dict()
    return {
        "query_id": result.query_id,
        "chunk_id": chunk.chunk_id,
        "source": chunk.source,
        "score": chunk.score,
        "rank": chunk.rank,
        "index_version": result.index_version,
        "regions": plain["regions"],
        "doc_id": chunk.doc_id,
        "charspan": plain["charspan"],
    }


def content_source(text: str) -> str:
    """The source name of a document that names none: stable for the same text."""
    return f"document-{sha256_hex(text)[:16]}"


def join_by_source(records: Iterable[tuple[str, str]]) -> dict[str, str]:
    """``(source, text)`` pairs -> ``{source: text}`` for ``Project.ingest_texts``. Pieces
    that share a source (the pages of one PDF, a split file) become one document, joined in
    the order given with a blank line between them: a source is one document in ragtt, which
    chunks it itself."""
    pieces: dict[str, list[str]] = {}
    for source, text in records:
        pieces.setdefault(source, []).append(text)
    return {source: "\n\n".join(texts) for source, texts in pieces.items()}


_LOCKS: weakref.WeakKeyDictionary[Project, threading.Lock] = weakref.WeakKeyDictionary()
_LOCKS_LOCK = threading.Lock()


def project_lock(project: Project) -> threading.Lock:
    """The lock every framework retriever of ``project`` queries under. A project's connections
    serve one query at a time, and frameworks run retrievers on worker threads (LangChain's
    ``RunnableParallel``, ``batch``, ``ainvoke``), several retrievers over one project too."""
    with _LOCKS_LOCK:
        return _LOCKS.setdefault(project, threading.Lock())
