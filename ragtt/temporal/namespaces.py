"""Namespaces and their vector indexes: creation, upgrade, embedding and pending work.

A namespace without a dimension is full-text only and needs no sqlite-vec. One with a
dimension has a vec0 table (named from a hash, with a generation that reindexing bumps);
when sqlite-vec is missing its assertions are still written and wait in ``pending``.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ragtt.errors import ConfigError, NotFoundError, StoreError, ValidationError
from ragtt.temporal.rows import chunks
from ragtt.temporal.schema import vec_ddl, vec_table_name
from ragtt.temporal.vectors import VectorMatrix, as_matrix, vec0_upsert
from ragtt.temporal.writes import VectorRow, bump_change_seq

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ragtt.index.embedders import Embedder
    from ragtt.temporal.models import Assertion
    from ragtt.temporal.store import AssertionStore

__all__ = ["NamespaceInfo", "Namespaces"]

VectorPlan = dict[str, tuple[list[int], "NDArray[np.float32]"]]


@dataclass(frozen=True)
class NamespaceInfo:
    name: str
    embedding_dimension: int | None
    embedding_model: str | None
    vec_table: str | None
    index_generation: int
    change_seq: int

    @property
    def vectorless(self) -> bool:
        return self.embedding_dimension is None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _dimension(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= 65536:
        raise ConfigError(f"embedding_dimension must be an int in 1..65536 or None; got {value!r}")
    return value


class Namespaces:
    """The namespace half of an AssertionStore (reached as ``store.namespaces``)."""

    def __init__(self, store: AssertionStore) -> None:
        self._store = store

    def info(self, namespace: str, *, conn: Any = None) -> NamespaceInfo:
        sql = (
            "SELECT name, embedding_dimension, embedding_model, vec_table, index_generation, change_seq "
            "FROM namespaces WHERE name = ?"
        )
        if conn is None:
            with self._store.internals.lock:
                self._store.internals.check_open()
                row = self._store.internals.conn.execute(sql, (namespace,)).fetchone()
        else:
            row = conn.execute(sql, (namespace,)).fetchone()
        if row is None:
            raise NotFoundError(f"namespace {namespace!r} does not exist; create it with init_namespace()")
        return NamespaceInfo(*row)

    def all(self) -> list[NamespaceInfo]:
        with self._store.internals.read() as conn:
            names = [r[0] for r in conn.execute("SELECT name FROM namespaces ORDER BY name")]
            return [self.info(n, conn=conn) for n in names]

    def init(self, namespace: str, dimension: int | None) -> NamespaceInfo:
        if not isinstance(namespace, str) or not namespace.strip():
            raise ValidationError(f"namespace must be a non-empty str; got {namespace!r}")
        dimension = _dimension(dimension)
        store = self._store
        with store.internals.write() as conn:
            row = conn.execute("SELECT embedding_dimension FROM namespaces WHERE name = ?", (namespace,)).fetchone()
            if row is not None:
                if dimension is not None and row[0] != dimension:
                    raise ConfigError(
                        f"namespace {namespace!r} exists with embedding_dimension {row[0]}, not "
                        f"{dimension}; use reindex_namespace() or upgrade_namespace_to_vector()"
                    )
                return self.info(namespace, conn=conn)
            model = store.embedder.model_id if store.embedder and store.embedder.dim == dimension else None
            conn.execute(
                "INSERT INTO namespaces (name, embedding_dimension, embedding_model, created_at) VALUES (?, ?, ?, ?)",
                (namespace, dimension, model, time.time()),
            )
            info = self._ensure_vec_table(conn, self.info(namespace, conn=conn))
        if dimension is not None and not store.vector_enabled:
            store.logger.warning(
                "namespace %r has dimension %d but sqlite-vec is not loaded: its assertions "
                "are searchable by full text and wait in pending_indexing()",
                namespace,
                dimension,
            )
        return info

    def ensure(self, namespace: str) -> NamespaceInfo:
        """The namespace, created on first use when it is the store's default one."""
        try:
            return self.info(namespace)
        except NotFoundError:
            if namespace != self._store.namespace:
                raise
            return self.init(namespace, self._store.embedding_dimension)

    def _ensure_vec_table(self, conn: Any, info: NamespaceInfo) -> NamespaceInfo:
        if info.embedding_dimension is None or info.vec_table or not self._store.vector_enabled:
            return info
        table = vec_table_name(info.name, info.index_generation)
        conn.execute(f"DROP TABLE IF EXISTS {table}")
        conn.execute(vec_ddl(table, info.embedding_dimension))
        conn.execute("UPDATE namespaces SET vec_table = ? WHERE name = ?", (table, info.name))
        return self.info(info.name, conn=conn)

    def upgrade(self, namespace: str, dimension: int) -> NamespaceInfo:
        dim = _dimension(dimension)
        if dim is None:
            raise ConfigError("upgrade_namespace_to_vector needs an embedding_dimension")
        store = self._store
        if not store.vector_enabled:
            raise StoreError(
                "sqlite-vec is not loaded, so no vector index can be built; install sqlite-vec "
                "and pysqlite3-binary, or keep the namespace full-text only"
            )
        with store.internals.write() as conn:
            info = self.info(namespace, conn=conn)
            if not info.vectorless:
                raise ConfigError(
                    f"namespace {namespace!r} already has dimension {info.embedding_dimension}; "
                    "use reindex_namespace() to change it"
                )
            model = store.embedder.model_id if store.embedder and store.embedder.dim == dim else None
            conn.execute(
                "UPDATE namespaces SET embedding_dimension = ?, embedding_model = ?, "
                "index_generation = index_generation + 1 WHERE name = ?",
                (dim, model, namespace),
            )
            info = self._ensure_vec_table(conn, self.info(namespace, conn=conn))
        if self.embedder_for(info)[0] is not None:
            self.index_pending(namespace)
        return self.info(namespace)

    @staticmethod
    def bump(conn: Any, namespaces: list[str]) -> int:
        """One new change stamp for a write transaction touching ``namespaces``."""
        if len(namespaces) == 1:
            return bump_change_seq(conn, namespaces[0])
        marks = ",".join("?" * len(namespaces))
        top = conn.execute(f"SELECT MAX(change_seq) FROM namespaces WHERE name IN ({marks})", namespaces).fetchone()
        stamp = int(top[0] or 0) + 1
        conn.execute(f"UPDATE namespaces SET change_seq = ? WHERE name IN ({marks})", [stamp, *namespaces])
        return stamp

    def embedder_for(self, info: NamespaceInfo) -> tuple[Embedder | None, str | None]:
        """The embedder that may index ``info``'s namespace, or None and the reason."""
        emb = self._store.internals.namespace_embedders.get(info.name) or self._store.embedder
        if info.vectorless:
            return None, f"namespace {info.name!r} is vectorless (full-text only)"
        if emb is None:
            return None, "the store has no embedder"
        if emb.dim != info.embedding_dimension:
            return None, (
                f"embedder {emb.model_id} has dimension {emb.dim}, namespace {info.name!r} "
                f"has {info.embedding_dimension}"
            )
        if info.embedding_model and info.embedding_model != emb.model_id:
            return None, (
                f"namespace {info.name!r} is indexed with {info.embedding_model}, not {emb.model_id}; "
                "use the same embedder or reindex_namespace()"
            )
        return emb, None

    def vectors_for(
        self,
        items: list[Assertion],
        infos: dict[str, NamespaceInfo],
        embeddings: Any,
    ) -> VectorPlan | None:
        """Which rows get which vectors: supplied ones, else the embedder's, per namespace."""
        plan: VectorPlan = {}
        groups: dict[str, list[int]] = {}
        for i, a in enumerate(items):
            groups.setdefault(a.namespace, []).append(i)
        if embeddings is not None:
            dims = {infos[ns].embedding_dimension for ns in groups}
            if len(dims) != 1 or None in dims:
                raise ValidationError(
                    f"embeddings were supplied but the namespaces {sorted(groups)} do not "
                    f"share one vector dimension (found {sorted(map(str, dims))})"
                )
            dim = dims.pop()
            assert dim is not None
            try:
                matrix = as_matrix(embeddings, len(items), dim, "embeddings")
            except ValueError as exc:
                raise ValidationError(
                    _bad_embedding([a.id for a in items], embeddings, dim, "the embeddings passed in", exc)
                ) from exc
            plan = {ns: (idx, matrix[idx]) for ns, idx in groups.items()}
        else:
            for ns, idx in groups.items():
                embedder, reason = self.embedder_for(infos[ns])
                if embedder is None:
                    if not infos[ns].vectorless:
                        self._store.logger.info("not indexing %d assertion(s): %s", len(idx), reason)
                    continue
                vectors = embedder.embed([items[i].content for i in idx])
                try:
                    plan[ns] = (idx, as_matrix(vectors, len(idx), embedder.dim, f"{embedder.model_id} output"))
                except ValueError as exc:
                    who = f"the embedder {embedder.model_id!r}"
                    raise ConfigError(
                        _bad_embedding([items[i].id for i in idx], vectors, embedder.dim, who, exc)
                    ) from exc
        if plan and not self._store.vector_enabled:
            self._store.logger.warning(
                "sqlite-vec is not loaded: %d embedding(s) not stored, see pending_indexing()",
                sum(len(i) for i, _ in plan.values()),
            )
            return None
        return plan or None

    def store_vectors(
        self,
        conn: Any,
        infos: dict[str, NamespaceInfo],
        items: list[Assertion],
        rows: list[VectorRow],
        plan: VectorPlan,
    ) -> None:
        """Index the vectors of assertions inserted in this transaction (``rows``: their vector rows)."""
        for ns, (idx, matrix) in plan.items():
            info = self._ensure_vec_table(conn, self.info(ns, conn=conn))
            if info.vec_table is None or info.embedding_dimension != matrix.shape[1]:
                self._store.logger.warning(
                    "namespace %r changed dimension during the write; %d assertion(s) left pending", ns, len(idx)
                )
                continue
            vec0_upsert(conn, info.vec_table, [rows[i] for i in idx], matrix, fresh=True)

    def pending(self, namespace: str) -> list[str]:
        with self._store.internals.read() as conn:
            info = self.info(namespace, conn=conn)
            if info.vectorless:
                return []
            if info.vec_table is None or not self._store.vector_enabled:
                sql, params = "SELECT id FROM assertions WHERE namespace = ? ORDER BY seq", [namespace]
            else:
                sql = (
                    f"SELECT id FROM assertions WHERE namespace = ? AND seq NOT IN "
                    f"(SELECT rowid FROM {info.vec_table}) ORDER BY seq"
                )
                params = [namespace]
            return [r[0] for r in conn.execute(sql, params)]

    def index(self, ids: list[str], embeddings: list[Any] | None) -> int:
        store = self._store
        if not store.vector_enabled:
            raise StoreError("sqlite-vec is not loaded; embeddings cannot be indexed in this process")
        with store.internals.read() as conn:
            found = {
                r[0]: r[1:]
                for part in chunks(ids)
                for r in conn.execute(
                    f"SELECT id, namespace, content FROM assertions WHERE id IN ({','.join('?' * len(part))})",
                    list(part),
                )
            }
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFoundError(f"assertion(s) {missing[:5]} do not exist")
        namespaces = sorted({ns for ns, _ in found.values()})
        infos = {ns: self.info(ns) for ns in namespaces}
        for info in infos.values():
            if info.vectorless:
                raise ValidationError(f"namespace {info.name!r} is vectorless; upgrade_namespace_to_vector() first")
        if embeddings is None:
            if len(namespaces) != 1:
                raise ValidationError("index one namespace at a time when the embedder computes the vectors")
            embedder, reason = self.embedder_for(infos[namespaces[0]])
            if embedder is None:
                raise ConfigError(f"cannot embed: {reason}")
            given: Any = embedder.embed([found[i][1] for i in ids])
            who = f"the embedder {embedder.model_id!r}"
        else:
            given, model = embeddings, infos[namespaces[0]].embedding_model if len(namespaces) == 1 else None
            who = "the embedding passed in" + (f" (the namespace is indexed with {model!r})" if model else "")
        try:
            vectors = np.asarray(given, dtype=np.float32).reshape(len(ids), -1)
        except ValueError as exc:
            raise ValidationError(_bad_embedding(ids, given, -1, who, exc)) from exc
        with store.internals.write() as conn:
            stamp = self.bump(conn, namespaces)
            for ns in namespaces:
                info = self._ensure_vec_table(conn, self.info(ns, conn=conn))
                assert info.vec_table is not None and info.embedding_dimension is not None
                idx = [k for k, i in enumerate(ids) if found[i][0] == ns]
                try:
                    matrix = as_matrix(vectors[idx], len(idx), info.embedding_dimension, "embedding")
                except ValueError as exc:
                    raise ValidationError(
                        _bad_embedding([ids[k] for k in idx], vectors[idx], info.embedding_dimension, who, exc)
                    ) from exc
                meta = {
                    r[0]: r
                    for part in chunks([ids[k] for k in idx])
                    for r in conn.execute(
                        "SELECT id, seq, valid_from, valid_until, confidence, type, entity_type FROM assertions "
                        f"WHERE id IN ({','.join('?' * len(part))})",
                        list(part),
                    )
                }
                rows: list[VectorRow] = [meta[ids[k]][1:] for k in idx]
                vec0_upsert(conn, info.vec_table, rows, matrix)
                for part in chunks([r[0] for r in rows]):
                    conn.execute(
                        f"UPDATE assertions SET change_seq = ? WHERE seq IN ({','.join('?' * len(part))})",
                        [stamp, *part],
                    )
        return len(ids)

    def index_pending(self, namespace: str, *, batch_size: int = 256) -> int:
        pending = self.pending(namespace)
        for part in chunks(pending, batch_size):
            self.index(list(part), None)
        return len(pending)

    def matrix(self, conn: Any, info: NamespaceInfo) -> VectorMatrix | None:
        """The in-memory matrix of ``info`` brought up to date (call inside a read transaction)."""
        store = self._store
        if not store.vector_cache or info.vec_table is None or info.embedding_dimension is None:
            return None
        current = store.internals.matrices.get(info.name)
        if current is None or current.table != info.vec_table:
            current = VectorMatrix(info.vec_table, info.embedding_dimension)
            current.refresh(conn, info.name, None)
        elif current.change_seq != info.change_seq:
            current.refresh(conn, info.name, current.change_seq)
        current.change_seq = info.change_seq
        store.internals.matrices[info.name] = current
        return current


def _bad_embedding(ids: list[str], vectors: Any, dim: int, who: str, exc: ValueError) -> str:
    """Which assertion's embedding is refused, whose it is and what it should have been."""
    rows: list[Any] = []
    with contextlib.suppress(TypeError, ValueError):  # not even rows of numbers: said as a count below
        rows = [np.asarray(v, dtype=np.float64).reshape(-1) for v in (vectors if vectors is not None else [])]
    for assertion_id, row in zip(ids, rows, strict=False):
        if (dim >= 0 and row.shape[0] != dim) or row.shape[0] == 0 or not np.isfinite(row).all():
            got = f"{row.shape[0]} numbers" if np.isfinite(row).all() else "NaN or infinity"
            want = f"a {dim}-dimension vector" if dim >= 0 else "a vector"
            return f"cannot index assertion {assertion_id!r}: {who} gave {got}, not {want} ({exc})"
    if vectors is None or len(rows) != len(ids):
        return (
            f"cannot index assertion(s) {ids[:5]!r}: {who} gave {len(rows)} vector(s) for {len(ids)} "
            f"assertion(s) ({exc})"
        )
    return f"cannot index assertion(s) {ids[:5]!r}: {who} gave unusable vectors ({exc})"
