"""What a feed hands ragtt, read as ``(source, text)`` records: ``(source, text)`` pairs,
LangChain ``Document``s and LlamaIndex documents or nodes (told apart by their attributes,
so neither framework is imported unless its documents come). A ``None`` text is a removal."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragtt.integrations.records import content_source

__all__ = ["BadRecord", "FeedRecord", "SourceKey", "feed_record"]

# How a document's source is named: a metadata key, or a function of the document.
SourceKey = str | Callable[[Any], Any] | None


class BadRecord(ValueError):
    """An item that is not a record; ``source`` is its source when that much could be read
    (the source then keeps its indexed version: no piece of it is written without the others)."""

    def __init__(self, reason: str, source: str | None = None) -> None:
        super().__init__(reason)
        self.source = source


@dataclass(frozen=True)
class FeedRecord:
    """One record: its source, its text (None: remove the source), and whether the source
    was named by the document (False: named after its text, so an edit is a new source)."""

    source: str
    text: str | None
    named: bool = True


def feed_record(item: Any, source_key: SourceKey) -> FeedRecord:
    """``item`` as a record; raises ``BadRecord`` with the reason it is not one.

    ``source_key`` None names a document as its framework does (LangChain: ``metadata["source"]``,
    else its ``id``; LlamaIndex: ``ragtt.integrations.llama_index.node_source``); a string is the
    metadata key that holds the name; a callable gets the document and returns it.
    """
    if isinstance(item, tuple):
        if len(item) != 2:
            raise BadRecord(f"a feed pair is (source, text); got a tuple of {len(item)}")
        source, text = item
        named = True
    elif hasattr(item, "page_content"):  # LangChain
        text = item.page_content
        source, named = _named(item, source_key, lambda: getattr(item, "id", None))
    elif hasattr(item, "get_content") and hasattr(item, "metadata"):  # LlamaIndex
        from llama_index.core.schema import MetadataMode

        text = item.get_content(metadata_mode=MetadataMode.NONE)
        source, named = _named(item, source_key, lambda: _llama_source(item))
    else:
        raise BadRecord(
            f"a feed takes (source, text) pairs, LangChain Documents or LlamaIndex documents; got {type(item).__name__}"
        )
    if source is not None and (not isinstance(source, str) or not source):
        raise BadRecord(f"a source name is a non-empty str; got {source!r}")
    if text is not None and not isinstance(text, str):
        raise BadRecord(f"a document's text must be a str (or None to remove it); got {type(text).__name__}", source)
    if source is None:
        if text is None:
            raise BadRecord("a removal (text None) must name its source")
        source, named = content_source(text), False
    return FeedRecord(source, text, named)


def _named(item: Any, key: SourceKey, fallback: Callable[[], Any]) -> tuple[Any, bool]:
    if callable(key):
        return key(item), True
    meta = getattr(item, "metadata", None) or {}
    if key is not None:
        if key not in meta:
            raise BadRecord(f"the document has no metadata[{key!r}] to name its source; its keys: {sorted(meta)}")
        return str(meta[key]), True
    found = meta.get("source") or fallback()
    return (str(found), True) if found else (None, False)


def _llama_source(node: Any) -> str:
    from ragtt.integrations.llama_index import node_source

    return node_source(node)
