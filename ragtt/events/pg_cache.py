"""The embedding cache in the project's Postgres database: one cache for every machine.

A query embedded on one machine is a cache hit on every other, so a replay anywhere
searches with the bit-identical vector and never re-embeds. Vectors are float32 bytes
(``bytea``); the table is created by the log's migration 3 (``pg_schema.py``). Inserts are
``ON CONFLICT DO NOTHING``: two machines that embed one text at once both succeed and keep
the first row (equal keys hold equal vectors). Each batch is one statement, so it is in the
cache entirely or not at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragtt.errors import StoreError
from ragtt.events.pg_schema import migrate
from ragtt.events.postgres import connect, redact, session_errors

__all__ = ["PostgresVectors"]

_LOOKUP = "SELECT text_sha256, vector FROM embeddings WHERE model_id = %s AND text_sha256 = ANY(%s)"
_STORE = (
    "INSERT INTO embeddings (model_id, text_sha256, dim, vector) "
    "SELECT %s, k, %s, v FROM unnest(%s::text[], %s::bytea[]) AS t(k, v) ON CONFLICT DO NOTHING"
)


class PostgresVectors:
    """The ``VectorStore`` of an ``EmbeddingCache`` in the Postgres database ``uri`` names."""

    path: Path | None = None

    def __init__(self, uri: str) -> None:
        import psycopg

        self.location = redact(uri)
        self._error = psycopg.Error
        # A session of its own: a cache write is never part of a log transaction.
        self._pg: Any = connect(uri, "embedding cache")
        try:
            migrate(self._pg, self.location)
        except BaseException:
            self._pg.close()
            raise

    def close(self) -> None:
        self._pg.close()

    def lookup(self, model_id: str, keys: list[str]) -> dict[str, bytes]:
        try:
            with session_errors("embedding cache", self.location):
                rows = self._pg.execute(_LOOKUP, (model_id, keys)).fetchall()
        except self._error as exc:
            raise StoreError(f"cannot read the embedding cache {self.location}: {str(exc).strip()}") from None
        return {str(key): bytes(blob) for key, blob in rows}

    def store(self, model_id: str, dim: int, rows: list[tuple[str, bytes]]) -> None:
        if not rows:
            return
        keys, blobs = zip(*rows, strict=True)
        try:
            with session_errors("embedding cache", self.location):
                self._pg.execute(_STORE, (model_id, dim, list(keys), list(blobs)))
        except self._error as exc:
            raise StoreError(f"cannot write to the embedding cache {self.location}: {str(exc).strip()}") from None
