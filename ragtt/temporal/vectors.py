"""Vector side: the vec0 table of a namespace, and an in-memory matrix beside it.

sqlite-vec is the persistent index and applies validity inside its KNN query (metadata
filter). A KNN over 100,000 rows costs tens of milliseconds, so a store also keeps the
namespace's vectors in memory with the filter columns as arrays: the mask is applied
before the top-k, exactly like the vec0 filter. The matrix follows writes of any process
through ``assertions.change_seq``: each write transaction bumps the namespace's counter
and stamps the rows it touched, so a refresh reads only them. The same arrays (and each
row's id) serve the retrieval's full-text side: its matches are filtered here and its
candidates' columns read from here, not from ``assertions`` row by row.

A search is two-stage once the namespace has a full block of rows (``quantized.BLOCK_ROWS``):
every admitted row is scored on 4-bit codes of the vectors (``quantized.Int4Blocks``), the
best ``max(RESCORE_FACTOR * k, k + RESCORE_MIN)`` are rescored exactly in float32, and the
top-``k`` of those exact scores is returned, so every similarity returned is the exact one.
On 384-dimension unit vectors 4-bit rounding moves a cosine by about 0.005 on average, a
fifth of the gap between the k-th and the ``4k``-th neighbour of random vectors (k = 50);
the recall against exact search is measured by ``bench/bench_temporal.py`` and
``tests/temporal/test_quantized.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ragtt.temporal.quantized import Int4Blocks
from ragtt.temporal.schema import OPEN_END

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["VectorFilter", "VectorMatrix", "as_matrix", "vec0_search", "vec0_upsert"]

_IN_CHUNK = 500
VEC0_MAX_K = 4096  # sqlite-vec refuses a larger k
RESCORE_FACTOR = 4  # candidates rescored exactly: RESCORE_FACTOR * k ...
RESCORE_MIN = 64  # ... and at least k + RESCORE_MIN


@dataclass(frozen=True)
class VectorFilter:
    """What a vector search may return: validity at ``anchor`` plus optional field filters."""

    anchor: float
    include_superseded: bool = False
    min_confidence: float | None = None
    types: tuple[str, ...] | None = None
    entity_types: tuple[str, ...] | None = None


def as_matrix(vectors: Any, n: int, dim: int, what: str) -> NDArray[np.float32]:
    """A C-contiguous float32 (n, dim) array, or ValueError saying what came instead."""
    array = np.ascontiguousarray(vectors, dtype=np.float32)
    if array.ndim == 1 and n == 1:
        array = array.reshape(1, -1)
    if array.shape != (n, dim):
        raise ValueError(f"{what} must have shape ({n}, {dim}); got {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{what} contains NaN or infinity")
    return array


def vec0_upsert(
    conn: Any,
    table: str,
    rows: list[tuple[int, float, float | None, float, str, str | None]],
    vectors: NDArray[np.float32],
    *,
    fresh: bool = False,
) -> None:
    """Insert (or replace) embeddings with their filter columns; rows = (seq, from, until, conf, type, etype).

    ``fresh``: the rows were inserted into ``assertions`` in this transaction, so no vector
    can exist for them yet (a vec0 row is only ever written with its assertion, assertions
    are never deleted, and a seq is past every earlier one): the delete is skipped.
    """
    if not fresh:
        for start in range(0, len(rows), _IN_CHUNK):
            batch = rows[start : start + _IN_CHUNK]
            conn.execute(f"DELETE FROM {table} WHERE rowid IN ({','.join('?' * len(batch))})", [r[0] for r in batch])
    conn.executemany(
        f"INSERT INTO {table}(rowid, embedding, valid_from, valid_until, confidence, type, entity_type) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (seq, vectors[i].tobytes(), float(vf), OPEN_END if vu is None else float(vu), float(conf), typ, etype or "")
            for i, (seq, vf, vu, conf, typ, etype) in enumerate(rows)
        ],
    )


def vec0_search(
    conn: Any,
    table: str,
    query: NDArray[np.float32],
    k: int,
    flt: VectorFilter,
) -> list[tuple[int, float]]:
    """KNN in sqlite-vec with validity (and filters) inside the query: [(seq, cosine similarity)]."""
    where = ["embedding MATCH ?", "k = ?", "valid_from <= ?"]
    params: list[Any] = [query.tobytes(), min(int(k), VEC0_MAX_K), float(flt.anchor)]
    if not flt.include_superseded:
        where.append("valid_until > ?")
        params.append(float(flt.anchor))
    if flt.min_confidence is not None:
        where.append("confidence >= ?")
        params.append(float(flt.min_confidence))
    for column, values in (("type", flt.types), ("entity_type", flt.entity_types)):
        if values is not None:
            where.append(f"{column} IN ({','.join('?' * len(values))})")
            params.extend(values)
    sql = f"SELECT rowid, distance FROM {table} WHERE {' AND '.join(where)}"
    hits = [(int(seq), 1.0 - float(distance)) for seq, distance in conn.execute(sql, params)]
    return sorted(hits, key=lambda hit: (-hit[1], hit[0]))  # vec0 allows no tie-breaking ORDER BY


def _dots(rows: NDArray[np.float32], query: NDArray[np.float32]) -> NDArray[np.float32]:
    """float32 ``rows @ query`` in numpy's own single-threaded loop, not BLAS: a BLAS product
    this small wakes OpenBLAS's thread pool, whose workers then spin on the cores the ONNX
    Runtime call next needs (measured: the whole search twice as slow on two busy cores)."""
    return np.einsum("ij,j->i", rows, query)


class VectorMatrix:
    """One namespace's vectors in memory, with the filter columns as parallel arrays."""

    def __init__(self, table: str, dimension: int) -> None:
        self.table = table
        self.dimension = dimension
        self.change_seq = -1
        self.size = 0
        self._matrix = np.zeros((0, dimension), dtype=np.float32)
        self._blocks = Int4Blocks(dimension)
        self._quantized = 0
        self._seq = np.zeros(0, dtype=np.int64)
        self._from = np.zeros(0, dtype=np.float64)
        self._until = np.zeros(0, dtype=np.float64)
        self._open = np.zeros(0, dtype=bool)  # valid_until is None
        self._latest = -np.inf  # at least every row's valid_from and finite valid_until
        self._conf = np.zeros(0, dtype=np.float64)
        self._type = np.zeros(0, dtype=np.int32)
        self._etype = np.zeros(0, dtype=np.int32)
        self._ids: list[str] = []
        self._sorted: tuple[NDArray[np.int64], NDArray[np.int64]] | None = None  # seqs in order, and their rows
        self._codes: dict[str | None, int] = {}
        self._names: list[str | None] = []

    def _code(self, value: str | None) -> int:
        value = value or None
        code = self._codes.get(value)
        if code is None:
            code = self._codes[value] = len(self._names)
            self._names.append(value)
        return code

    def _grow(self, needed: int) -> None:
        capacity = len(self._seq)
        if needed <= capacity:
            return
        new = max(needed, capacity * 2, 1024)
        grown = np.zeros((new, self.dimension), dtype=np.float32)
        grown[: self.size] = self._matrix[: self.size]
        self._matrix = grown
        for name, dtype in (
            ("_seq", np.int64),
            ("_from", np.float64),
            ("_until", np.float64),
            ("_open", np.bool_),
            ("_conf", np.float64),
            ("_type", np.int32),
            ("_etype", np.int32),
        ):
            old = getattr(self, name)
            array = np.zeros(new, dtype=dtype)
            array[: self.size] = old[: self.size]
            setattr(self, name, array)

    def refresh(self, conn: Any, namespace: str, since: int | None) -> None:
        """Load rows of ``namespace`` stamped after ``since`` (None: everything) from SQLite."""
        sql = "SELECT seq, id, valid_from, valid_until, confidence, type, entity_type FROM assertions"
        sql += " WHERE namespace = ?"
        params: list[Any] = [namespace]
        if since is not None:
            sql += " AND change_seq > ?"
            params.append(since)
        meta = {int(r[0]): r[1:] for r in conn.execute(sql, params)}
        touched = np.fromiter(meta, dtype=np.int64, count=len(meta))
        for seq, row in zip(touched.tolist(), self.locate(touched).tolist(), strict=True):
            if row >= 0:
                self._set_meta(row, *meta[seq][1:])
        if since is None:
            vectors = conn.execute(f"SELECT rowid, embedding FROM {self.table}").fetchall()
        else:  # every touched row's vector: a new one, or one re-indexed with a new embedding
            vectors = []
            for start in range(0, len(touched), _IN_CHUNK):
                batch = touched[start : start + _IN_CHUNK].tolist()
                vectors += conn.execute(
                    f"SELECT rowid, embedding FROM {self.table} WHERE rowid IN ({','.join('?' * len(batch))})",
                    batch,
                ).fetchall()
        vectors = [(int(seq), blob) for seq, blob in vectors if int(seq) in meta]
        if not vectors:
            return
        block = np.frombuffer(b"".join(blob for _, blob in vectors), dtype=np.float32)
        block = block.reshape(len(vectors), self.dimension)
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        block = (block / np.where(norms > 0, norms, 1.0)).astype(np.float32)
        rows = self.locate(np.array([seq for seq, _ in vectors], dtype=np.int64))
        held = rows >= 0
        if held.any():
            rows = rows[held]
            fresh = block[held]
            differs = (self._matrix[rows] != fresh).any(axis=1)
            self._matrix[rows[differs]] = fresh[differs]
            self._blocks.forget(rows[differs])  # their 4-bit codes are stale: the next search re-seals
            vectors = [v for v, h in zip(vectors, held, strict=True) if not h]
            block = block[~held]
            if not vectors:
                return
        self._grow(self.size + len(vectors))
        self._matrix[self.size : self.size + len(vectors)] = block
        self._ids[self.size :] = [meta[seq][0] for seq, _ in vectors]
        for offset, (seq, _) in enumerate(vectors):
            row = self.size + offset
            self._seq[row] = seq
            self._set_meta(row, *meta[seq][1:])
        self.size += len(vectors)

    def _set_meta(self, row: int, vf: float, vu: float | None, conf: float, typ: str, etype: str | None) -> None:
        self._from[row] = vf
        self._until[row] = np.inf if vu is None else vu
        self._open[row] = vu is None
        self._latest = max(self._latest, vf if vu is None else vu)  # vu > vf: the schema's CHECK
        self._conf[row] = conf
        self._type[row] = self._code(typ)
        self._etype[row] = self._code(etype)

    def _codes_of(self, values: tuple[str, ...]) -> list[int]:
        return [self._codes[v] for v in values if v in self._codes]

    def _admits(self, rows: slice | NDArray[np.int64], flt: VectorFilter) -> NDArray[np.bool_]:
        """Which of ``rows`` the filter admits: the SQL side's WHERE clause, on the arrays.

        At or after ``_latest`` (a query of the current state) every row has started and
        every closed one has ended, so validity is whether a row is open: one boolean array
        read, not two float64 comparisons over every row (1.6 MB at 100,000 rows).
        """
        if flt.anchor >= self._latest:
            mask = self._open[rows] | flt.include_superseded  # a new array: the filters below write to it
        else:
            mask = self._from[rows] <= flt.anchor
            if not flt.include_superseded:
                mask &= self._until[rows] > flt.anchor
        if flt.min_confidence is not None:
            mask &= self._conf[rows] >= flt.min_confidence
        if flt.types is not None:
            mask &= np.isin(self._type[rows], self._codes_of(flt.types))
        if flt.entity_types is not None:
            mask &= np.isin(self._etype[rows], self._codes_of(flt.entity_types))
        return mask

    def locate(self, seqs: NDArray[np.int64]) -> NDArray[np.int64]:
        """The row holding each of ``seqs``, -1 where none does (another namespace, or no vector)."""
        n = self.size
        if n == 0:
            return np.full(len(seqs), -1, dtype=np.int64)
        if self._sorted is None or len(self._sorted[0]) != n:  # rows were added since: sort again
            order = np.argsort(self._seq[:n], kind="stable")
            self._sorted = (self._seq[:n][order], order)
        keys, order = self._sorted
        at = np.minimum(np.searchsorted(keys, seqs), n - 1)
        return np.where(keys[at] == seqs, order[at], -1)

    def admitted(self, seqs: NDArray[np.int64], flt: VectorFilter) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
        """Which of ``seqs`` are held here and admitted by the filter, and which are not held
        here at all (for the caller to check in SQL)."""
        rows = self.locate(seqs)
        held = rows >= 0
        ok = np.zeros(len(seqs), dtype=bool)
        ok[held] = self._admits(rows[held], flt)
        return ok, ~held

    def light_rows(self, seqs: list[int]) -> tuple[list[tuple[Any, ...]], list[int]]:
        """(seq, id, valid_from, valid_until, confidence, type, entity_type) of the ``seqs`` held
        here, as SQLite returns them, and the seqs not held here."""
        wanted = np.array(seqs, dtype=np.int64)
        rows = self.locate(wanted)
        known = rows >= 0
        held = rows[known]
        names, ids = self._names, self._ids
        columns = zip(
            wanted[known].tolist(),
            held.tolist(),
            self._from[held].tolist(),
            self._until[held].tolist(),
            self._conf[held].tolist(),
            self._type[held].tolist(),
            self._etype[held].tolist(),
            strict=True,
        )
        out = [
            (seq, ids[row], vf, None if vu == np.inf else vu, conf, names[typ], names[etype])
            for seq, row, vf, vu, conf, typ, etype in columns
        ]
        return out, wanted[~known].tolist()

    @property
    def quantized_rows(self) -> int:
        """Rows the last search scored on 4-bit codes before the exact rescoring (0: all exact)."""
        return self._quantized

    def search(self, query: NDArray[np.float32], k: int, flt: VectorFilter) -> list[tuple[int, float]]:
        """Cosine top-``k`` among the rows the filter admits, by exact float32 similarity: [(seq, similarity)].

        Past one full block of rows the candidates come from 4-bit codes (see the module docstring).
        """
        n = self.size
        self._quantized = 0
        if n == 0 or k <= 0:
            return []
        mask = self._admits(slice(0, n), flt)
        admitted = int(np.count_nonzero(mask))  # a tenth of the time of mask.sum() on 100,000 rows
        k = min(k, admitted)
        if k == 0:
            return []
        width = max(RESCORE_FACTOR * k, k + RESCORE_MIN)
        self._blocks.seal(self._matrix, n)
        sealed = self._blocks.rows
        self._quantized = 0 if admitted <= width else sealed
        if sealed == 0 or admitted <= width:
            rows = np.flatnonzero(mask)
            exact = (self._matrix[:n] @ query)[rows]
        else:
            blocks, approx = self._blocks.top(query, mask[:sealed], width)
            tail = np.flatnonzero(mask[sealed:])  # the unsealed rows, scored exactly
            scores = np.concatenate([approx, _dots(self._matrix[sealed:n], query)[tail]])
            pool = np.concatenate([blocks, sealed + tail])
            rows = pool[np.argpartition(-scores, width - 1)[:width]] if len(pool) > width else pool
            exact = _dots(self._matrix[rows], query)
        top = np.argpartition(-exact, k - 1)[:k] if k < len(rows) else np.arange(len(rows))
        seqs, sims = self._seq[rows[top]], exact[top]
        order = np.lexsort((seqs, -sims))  # similarity descending, then seq: deterministic ties
        return [(int(seqs[i]), float(sims[i])) for i in order]
