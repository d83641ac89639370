"""Maintenance: reindex a namespace through a staging table, rebuild the full-text index.

Reindexing embeds every assertion of the namespace (superseded ones too, so history stays
searchable) into a new vec0 table while the old one keeps serving. The swap happens in one
write transaction that first catches up: rows written meanwhile are embedded, and rows
whose validity changed meanwhile get their filter columns refreshed. Any failure drops the
staging table and leaves the old index as it was. A row in ``namespace_locks`` keeps a
second reindex (from any process) out; a lock whose process is gone is taken over.
"""

from __future__ import annotations

import os
import socket
import time
from typing import TYPE_CHECKING, Any

from ragtt._hashing import time_ordered_id
from ragtt.errors import ConfigError, NamespaceLockedError, StoreError
from ragtt.temporal.fts import validate_tokenizer
from ragtt.temporal.schema import fts_ddl, vec_ddl, vec_table_name
from ragtt.temporal.vectors import as_matrix, vec0_upsert

if TYPE_CHECKING:
    from ragtt.index.embedders import Embedder
    from ragtt.temporal.namespaces import NamespaceInfo
    from ragtt.temporal.store import AssertionStore

__all__ = ["rebuild_fts", "reindex_namespace"]


def _alive(pid: int, host: str) -> bool:
    if host != socket.gethostname():
        return True  # cannot tell for another machine: assume it still works
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _acquire(store: AssertionStore, namespace: str) -> str:
    owner = time_ordered_id()
    with store.internals.write() as conn:
        store.namespaces.info(namespace, conn=conn)
        row = conn.execute(
            "SELECT owner, pid, host, acquired_at FROM namespace_locks WHERE namespace = ?", (namespace,)
        ).fetchone()
        if row is not None:
            if _alive(row[1], row[2]):
                raise NamespaceLockedError(
                    f"namespace {namespace!r} is being reindexed by process {row[1]} on "
                    f"{row[2]} since {time.ctime(row[3])}; wait for it to finish"
                )
            conn.execute("DELETE FROM namespace_locks WHERE namespace = ?", (namespace,))
        conn.execute(
            "INSERT INTO namespace_locks VALUES (?, ?, ?, ?, ?)",
            (namespace, owner, os.getpid(), socket.gethostname(), time.time()),
        )
    return owner


def _release(store: AssertionStore, namespace: str, owner: str) -> None:
    with store.internals.write() as conn:
        conn.execute("DELETE FROM namespace_locks WHERE namespace = ? AND owner = ?", (namespace, owner))


def _copy(store: AssertionStore, conn: Any, table: str, rows: list[Any], embedder: Embedder, dim: int) -> None:
    vectors = as_matrix(embedder.embed([r[6] for r in rows]), len(rows), dim, f"{embedder.model_id} output")
    vec0_upsert(conn, table, [tuple(r[:6]) for r in rows], vectors)


def reindex_namespace(
    store: AssertionStore, namespace: str, new_dimension: int, embedder: Embedder, *, batch_size: int = 256
) -> NamespaceInfo:
    from ragtt.index.embedders import check_embedder

    check_embedder(embedder)
    if embedder.dim != new_dimension:
        raise ConfigError(f"the embedder has dimension {embedder.dim}, not new_dimension={new_dimension}")
    if not store.vector_enabled:
        raise StoreError("sqlite-vec is not loaded; reindexing needs it")
    owner = _acquire(store, namespace)
    staging: str | None = None
    select = (
        "SELECT seq, valid_from, valid_until, confidence, type, entity_type, content FROM assertions "
        "WHERE namespace = ?"
    )
    try:
        with store.internals.write() as conn:
            info = store.namespaces.info(namespace, conn=conn)
            staging = vec_table_name(namespace, info.index_generation + 1)
            conn.execute(f"DROP TABLE IF EXISTS {staging}")
            conn.execute(vec_ddl(staging, new_dimension))
        start_seq, high = info.change_seq, 0
        while True:  # embedding happens outside any transaction: writers are never blocked by it
            with store.internals.read() as conn:
                rows = conn.execute(
                    f"{select} AND seq > ? ORDER BY seq LIMIT ?", (namespace, high, batch_size)
                ).fetchall()
            if not rows:
                break
            vectors = as_matrix(
                embedder.embed([r[6] for r in rows]), len(rows), new_dimension, f"{embedder.model_id} output"
            )
            with store.internals.write() as conn:
                vec0_upsert(conn, staging, [tuple(r[:6]) for r in rows], vectors)
            high = rows[-1][0]
        with store.internals.write() as conn:  # catch up and swap, under the write lock
            late = conn.execute(f"{select} AND seq > ? ORDER BY seq", (namespace, high)).fetchall()
            if late:
                _copy(store, conn, staging, late, embedder, new_dimension)
            changed = conn.execute(
                "SELECT seq, valid_until FROM assertions WHERE namespace = ? AND change_seq > ? AND seq <= ?",
                (namespace, start_seq, high),
            ).fetchall()
            conn.executemany(
                f"UPDATE {staging} SET valid_until = ? WHERE rowid = ?",
                [(1e308 if vu is None else float(vu), seq) for seq, vu in changed],
            )
            old = store.namespaces.info(namespace, conn=conn).vec_table
            conn.execute(
                "UPDATE namespaces SET embedding_dimension = ?, embedding_model = ?, vec_table = ?, "
                "index_generation = index_generation + 1, change_seq = change_seq + 1 WHERE name = ?",
                (new_dimension, embedder.model_id, staging, namespace),
            )
            if old and old != staging:
                conn.execute(f"DROP TABLE IF EXISTS {old}")
        staging = None
        store.internals.namespace_embedders[namespace] = embedder
        store.internals.matrices.pop(namespace, None)
        store.logger.info("reindexed namespace %r with %s (%d dimensions)", namespace, embedder.model_id, new_dimension)
        return store.namespaces.info(namespace)
    finally:
        if staging is not None:  # failed: the old index was never touched
            try:
                with store.internals.write() as conn:
                    conn.execute(f"DROP TABLE IF EXISTS {staging}")
            except Exception:
                store.logger.exception("could not drop staging table %s", staging)
        _release(store, namespace, owner)


def rebuild_fts(store: AssertionStore, tokenizer: str | None) -> str:
    with store.internals.write() as conn:
        current = conn.execute("SELECT value FROM settings WHERE key = 'fts_tokenizer'").fetchone()[0]
        chosen = validate_tokenizer(tokenizer) if tokenizer is not None else current
        for trigger in ("assertions_fts_ad", "assertions_fts_au"):
            conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        conn.execute("DROP TABLE IF EXISTS assertions_fts")
        for sql in fts_ddl(chosen):
            conn.execute(sql)
        conn.execute("INSERT INTO assertions_fts(assertions_fts) VALUES ('rebuild')")
        conn.execute("UPDATE settings SET value = ? WHERE key = 'fts_tokenizer'", (chosen,))
    store.logger.info("rebuilt the full-text index with tokenizer %r", chosen)
    return chosen
