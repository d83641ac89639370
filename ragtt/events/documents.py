"""Parsed documents, content-addressed by ``doc_key``: written once, never changed.

A text longer than ``PART_CHARS`` is stored in parts (``document_text_parts``, numbered
from 0) and its ``documents`` row holds an empty text and the number of parts: a database
driver copies a bound parameter whole, several times, so one 200 MB parameter would cost
several times the document in memory. Readers get the text whole either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragtt.errors import ProjectDamagedError
from ragtt.events.sql import sql_in

if TYPE_CHECKING:
    from ragtt.spooled_text import SpooledText

__all__ = ["PART_CHARS", "DocumentRow", "Documents"]

PART_CHARS = 1 << 20  # characters of one stored part of a long text


@dataclass(frozen=True)
class DocumentRow:
    doc_key: str
    doc_id: str
    source: str
    content_hash: str
    text: str | SpooledText  # a long text file's, written here: its parts are read back from disk one by one
    routes: str  # JSON list of page routes
    created_at: str


class Documents:
    """The ``documents`` table of one event log, with the parts of its long texts."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def put(self, conn: Any, rows: Sequence[DocumentRow]) -> None:
        """Insert the documents not stored yet (inside the caller's transaction, parts and
        all); a doc_key that exists already holds the same text, since the key hashes the content.

        A plain INSERT after a lookup, not ``INSERT ... SELECT ... WHERE NOT EXISTS``: SQLite
        copies a bound text through every register of a SELECT (measured: 5.5x a 100 MB text
        in memory for that form, 1.8x for a plain INSERT)."""
        stored: set[str] = set()
        keys = list({r.doc_key for r in rows})
        for start in range(0, len(keys), 500):
            batch = keys[start : start + 500]
            found = conn.execute(f"SELECT doc_key FROM documents WHERE doc_key IN ({sql_in(batch)})", batch)
            stored.update(k for (k,) in found.fetchall())
        for r in rows:
            if r.doc_key in stored:
                continue
            stored.add(r.doc_key)  # two rows of one call may share a key (same source, same bytes)
            parts = -(-len(r.text) // PART_CHARS) if len(r.text) > PART_CHARS else 0
            whole = "" if parts else r.text[:]  # a str as it is (a spooled text is longer than a part)
            conn.execute(
                "INSERT INTO documents (doc_key, doc_id, source, content_hash, text, routes, created_at, parts) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (r.doc_key, r.doc_id, r.source, r.content_hash, whole, r.routes, r.created_at, parts),
            )
            for part in range(parts):
                conn.execute(
                    "INSERT INTO document_text_parts (doc_key, part, text) VALUES (?, ?, ?)",
                    (r.doc_key, part, r.text[part * PART_CHARS : (part + 1) * PART_CHARS]),
                )

    def get(self, doc_key: str) -> DocumentRow | None:
        row = self._conn.execute(
            "SELECT doc_key, doc_id, source, content_hash, text, routes, created_at, parts FROM documents "
            "WHERE doc_key = ?",
            (doc_key,),
        ).fetchone()
        if row is None:
            return None
        *fields, parts = row
        if parts:
            fields[4] = self._joined(doc_key, parts)
        return DocumentRow(*fields)

    def texts(self, doc_keys: list[str]) -> dict[str, str]:
        """doc_key -> text for the keys that are stored."""
        out: dict[str, str] = {}
        for start in range(0, len(doc_keys), 500):
            batch = doc_keys[start : start + 500]
            rows = self._conn.execute(
                f"SELECT doc_key, text, parts FROM documents WHERE doc_key IN ({sql_in(batch)})", batch
            ).fetchall()
            out.update({k: self._joined(k, parts) if parts else t for k, t, parts in rows})
        return out

    def _joined(self, doc_key: str, parts: int) -> str:
        # Part by part into one str that grows in place (CPython's ``+=`` of a str nothing else
        # refers to), so a long text is held once, not as parts beside their join.
        text = ""
        for part in range(parts):
            row = self._conn.execute(
                "SELECT text FROM document_text_parts WHERE doc_key = ? AND part = ?", (doc_key, part)
            ).fetchone()
            if row is None:
                raise ProjectDamagedError(
                    f"document {doc_key}: part {part} of its {parts} text parts is missing from the event log"
                )
            text += row[0]
        return text
