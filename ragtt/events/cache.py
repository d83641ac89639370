"""Persistent embedding cache: (embedder model id, sha256 of text) -> vector.

A text is embedded once per embedder, ever: ingests, re-ingests, queries and replays all
read through this cache, so a replay also searches with the bit-identical query vector.
``EmbeddingCache`` holds that logic once; where the vectors live is a small backend: a
SQLite file on this machine (``embeddings.db``), or the project's Postgres database
(``ragtt/events/pg_cache.py``), shared by every machine of a team. ``ragtt.opening`` picks it.

    EmbeddingCache("embeddings.db")                          # SQLite
    EmbeddingCache(PostgresVectors("postgresql://..."))      # Postgres
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ragtt._hashing import sha256_hex
from ragtt._sqlite import connect, driver
from ragtt.errors import StoreError
from ragtt.events.cache_aside import CacheFileLock, file_identity

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from numpy.typing import NDArray

    from ragtt.index.embedders import Embedder

    # Computes the vectors of batches of texts, one array per batch, in order (an ingest engine's).
    BatchEmbed = Callable[[Embedder, list[list[str]]], Iterable[NDArray[np.float32]]]

__all__ = ["EmbeddingCache", "SQLiteVectors", "VectorStore", "set_aside"]

_SCHEMA = """
-- A rowid table: WITHOUT ROWID would put every ~1.5 KB vector on its own overflow page.
CREATE TABLE IF NOT EXISTS embeddings (
    model_id TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (model_id, text_sha256)
);
"""

_BATCH = 256


class VectorStore(Protocol):
    """Where an ``EmbeddingCache`` keeps its vectors (float32 bytes, keyed by model and text hash)."""

    #: For messages: a file path, or a URI without its password.
    location: str
    #: The SQLite file, or None when the vectors are not in a local file.
    path: Path | None

    def lookup(self, model_id: str, keys: list[str]) -> dict[str, bytes]: ...

    def store(self, model_id: str, dim: int, rows: list[tuple[str, bytes]]) -> None:
        """Insert ``(text hash, vector bytes)`` rows in one transaction; a row already there
        (another process computed it first) is kept: equal keys hold equal vectors."""

    def close(self) -> None: ...


class EmbeddingCache:
    def __init__(self, where: str | Path | VectorStore) -> None:
        self._vectors: VectorStore = SQLiteVectors(where) if isinstance(where, str | Path) else where

    @property
    def path(self) -> Path | None:
        """The cache's SQLite file (None when it lives in Postgres)."""
        return self._vectors.path

    @property
    def location(self) -> str:
        return self._vectors.location

    def close(self) -> None:
        self._vectors.close()

    def embed(
        self,
        embedder: Embedder,
        texts: list[str],
        progress: Any = None,
        *,
        compute: BatchEmbed | None = None,
    ) -> tuple[NDArray[np.float32], int, int]:
        """Vectors for ``texts`` in order, plus (computed, reused) counts of distinct texts.

        The texts the cache misses are embedded in batches of 256; ``compute(embedder,
        batches)`` yields each batch's vectors in order (default: ``embedder.embed`` here).
        The batches are the same whoever computes them, so the vectors are too."""
        dim = embedder.dim
        out = np.zeros((len(texts), dim), dtype=np.float32)
        if not texts:
            return out, 0, 0
        keys = [sha256_hex(t) for t in texts]
        positions: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            positions.setdefault(key, []).append(i)
        found = self._lookup(embedder.model_id, list(positions))
        for key, vector in found.items():
            out[positions[key]] = vector
        if progress is not None and found:  # cached texts count as done, so the bar ends full
            progress.update(sum(len(positions[k]) for k in found))
        missing = [k for k in positions if k not in found]
        batches = [missing[start : start + _BATCH] for start in range(0, len(missing), _BATCH)]
        inputs = [[texts[positions[k][0]] for k in batch] for batch in batches]
        computed = compute(embedder, inputs) if compute is not None else map(embedder.embed, inputs)
        for batch, result in zip(batches, computed, strict=True):
            vectors = np.asarray(result, dtype=np.float32)
            if vectors.shape != (len(batch), dim):
                raise ValueError(
                    f"embedder {embedder.model_id!r} returned shape {vectors.shape}; expected ({len(batch)}, {dim})"
                )
            self._store(embedder.model_id, dim, batch, vectors)
            for key, vector in zip(batch, vectors, strict=True):
                out[positions[key]] = vector
            if progress is not None:
                progress.update(sum(len(positions[k]) for k in batch))
        return out, len(missing), len(found)

    def get(self, model_id: str, text: str) -> NDArray[np.float32] | None:
        """The cached vector of ``text`` under ``model_id``, or None (never computes)."""
        key = sha256_hex(text)
        return self._lookup(model_id, [key]).get(key)

    def _lookup(self, model_id: str, keys: list[str]) -> dict[str, NDArray[np.float32]]:
        found = self._vectors.lookup(model_id, keys)
        return {key: np.frombuffer(blob, dtype=np.float32) for key, blob in found.items()}

    def _store(self, model_id: str, dim: int, keys: list[str], vectors: NDArray[np.float32]) -> None:
        rows = [(k, v.astype(np.float32).tobytes()) for k, v in zip(keys, vectors, strict=True)]
        self._vectors.store(model_id, dim, rows)


class SQLiteVectors:
    """The cache in a SQLite file on this machine (``embeddings.db``, or ``embedding_cache=``).

    It is not history: a file found damaged while in use is moved aside and a new one
    started, with a warning; the texts are embedded again as needed. While another
    connection has the damaged file open it is left in place and this one goes on without a
    cache (``ragtt/events/cache_aside.py`` says why)."""

    def __init__(self, path: str | Path) -> None:
        self.path: Path | None = Path(path)
        self.location = str(path)
        self._lock = CacheFileLock(Path(path))
        self._conn: Any = None  # None: going on without the cache (a damaged file others hold open)
        self._identity: tuple[int, int] | None = None
        try:
            self._open()
        except BaseException:
            self._lock.close()
            raise

    def _open(self) -> None:
        self._lock.share()
        conn = None
        try:
            conn = connect(self.location)
            conn.executescript(_SCHEMA)
        except driver().DatabaseError as exc:
            if conn is not None:
                conn.close()
            self._lock.release()
            if _is_damage(str(exc)):
                if self._lock.set_aside(f"is damaged ({exc})", file_identity(Path(self.location))):
                    return self._open()
                return None  # others hold it: no cache for now
            raise StoreError(
                f"the embedding cache {self.location} cannot be opened ({exc}); it is only a cache: "
                "move it aside and ragtt will embed again"
            ) from None
        self._conn = conn
        self._identity = file_identity(Path(self.location))  # fixed while the shared lock is held
        return None

    def _damaged(self, exc: Exception) -> bool:
        """Whether ``exc`` is damage to the file (then it is set aside and a new one started,
        or, while others hold it, this connection goes on without it)."""
        message = str(exc)
        if isinstance(exc, driver().IntegrityError) or not _is_damage(message):
            return False
        self._conn.close()
        self._conn = None
        self._lock.release()
        if self._lock.set_aside(f"is damaged ({message})", self._identity):
            self._open()
        return True

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._lock.close()

    def lookup(self, model_id: str, keys: list[str]) -> dict[str, bytes]:
        if self._conn is None:
            return {}
        try:
            return self._lookup(model_id, keys)
        except driver().DatabaseError as exc:
            if not self._damaged(exc):
                raise
            return {}  # a new, empty cache

    def _lookup(self, model_id: str, keys: list[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for start in range(0, len(keys), 500):
            batch = keys[start : start + 500]
            marks = ",".join("?" * len(batch))
            rows = self._conn.execute(
                f"SELECT text_sha256, vector FROM embeddings WHERE model_id = ? AND text_sha256 IN ({marks})",
                [model_id, *batch],
            ).fetchall()
            found.update((str(key), bytes(blob)) for key, blob in rows)
        return found

    def store(self, model_id: str, dim: int, rows: list[tuple[str, bytes]]) -> None:
        if self._conn is None:
            return
        try:
            self._store(model_id, dim, rows)
        except _Damaged as damaged:
            if not self._damaged(damaged.cause):
                raise StoreError(f"cannot write to the embedding cache {self.location}: {damaged.cause}") from None
            if self._conn is not None:
                self._store(model_id, dim, rows)

    def _store(self, model_id: str, dim: int, rows: list[tuple[str, bytes]]) -> None:
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            self._conn.executemany(
                "INSERT OR IGNORE INTO embeddings (model_id, text_sha256, dim, vector) VALUES (?, ?, ?, ?)",
                [(model_id, key, dim, blob) for key, blob in rows],
            )
            self._conn.execute("COMMIT")
        except driver().Error as exc:
            # SQLite rolls a transaction back by itself on SQLITE_FULL / IOERR: rolling back
            # again would hide the real error behind "no transaction is active".
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise _Damaged(exc) from None
        except BaseException:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise


class _Damaged(Exception):
    """A write to the cache failed with ``cause`` (damage, or a full disk: the caller decides)."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _is_damage(message: str) -> bool:
    """Whether SQLite's ``message`` says the file is damaged (not busy, not a full disk)."""
    if "locked" in message or "busy" in message:
        return False
    return any(w in message for w in ("malformed", "not a database", "corrupt", "no such table"))


def set_aside(db: Path, problem: str) -> None:
    """Move the damaged cache file ``db`` (and its WAL) aside as ``<name>.damaged``, with a
    warning saying why, unless a connection has it open (then it stays, and those that open
    it go on without a cache until it is free)."""
    lock = CacheFileLock(db)
    try:
        lock.set_aside(problem, None)
    finally:
        lock.close()
