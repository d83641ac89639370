"""The sources' texts as word shingles, at any version, for matching reference passages: a
source unchanged across versions is one document (``doc_key``), shingled once."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragtt.context import Context

__all__ = ["Shingled"]

_SHINGLED_DOCS = 256  # parsed sources kept shingled across versions (an unchanged one is one document)


class Shingled:
    """Each source's parsed text, shingled once per document, the last ``_SHINGLED_DOCS`` of
    them kept. ``keys(version)`` reads a version's document keys in one scan (on any thread);
    ``of(keys)`` looks sources up in them, ``document(doc_key)`` one document and ``text(doc_key)``
    its text (on the thread that owns the log)."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        self._docs: OrderedDict[str, AbstractSet[tuple[str, ...]]] = OrderedDict()

    def keys(self, version: int) -> dict[str, str]:
        """source -> doc_key at ``version``."""
        table = self._ctx.table.scan(version, ["source", "doc_key"])
        return dict(zip(table["source"].to_pylist(), table["doc_key"].to_pylist(), strict=True))

    def of(self, keys: dict[str, str]) -> Callable[[str], AbstractSet[tuple[str, ...]]]:
        return lambda source: self.document(keys.get(source))

    def document(self, doc_key: str | None) -> AbstractSet[tuple[str, ...]]:
        """The shingles of one document's text (none for None: a source not in the index)."""
        from ragtt.timetravel.golden import text_shingles

        if doc_key is None:
            return frozenset()
        if doc_key not in self._docs:
            text = self.text(doc_key)
            self._docs[doc_key] = text_shingles(text) if text is not None else frozenset()
            if len(self._docs) > _SHINGLED_DOCS:
                self._docs.popitem(last=False)
        self._docs.move_to_end(doc_key)
        return self._docs[doc_key]

    def text(self, doc_key: str | None) -> str | None:
        """One document's parsed text (None: no such document, or its text is not in the log)."""
        row = self._ctx.log.documents.get(doc_key) if doc_key is not None else None
        return None if row is None or row.text is None else str(row.text)
