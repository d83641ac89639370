"""What the temporal package's modules need of an AssertionStore, in one place.

An ``AssertionStore`` hands its pipeline modules (namespaces, retrieval, frames, graph,
maintenance) ``store.internals``: the connection and the lock that guards it, the read and
write transactions, the helper thread, the schema extensions' columns, the metrics hook and
the in-memory caches. It is internal to ``ragtt.temporal``: no compatibility promise is made
to code outside the package, which uses the store's own methods.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ragtt.errors import StoreError

if TYPE_CHECKING:
    from ragtt.index.embedders import Embedder
    from ragtt.temporal.store import AssertionStore
    from ragtt.temporal.vectors import VectorMatrix

__all__ = ["StoreInternals"]


class StoreInternals:
    """One store's connection, transactions and caches (``store.internals``; package-internal).

    ``matrices``: each namespace's vectors held in memory (``vector_cache``);
    ``namespace_embedders``: the embedder a reindex switched a namespace to, for this store's
    life; ``extensions``: table -> {column: default} of the store's schema extensions.
    """

    def __init__(self, store: AssertionStore, conn: Any, *, owns_connection: bool) -> None:
        self._store = store
        self.conn = conn
        self.owns_connection = owns_connection
        self.lock = threading.RLock()
        self.closed = False
        self.helper: tuple[int, ThreadPoolExecutor] | None = None  # (the pid that started it, the pool)
        self.extensions: dict[str, dict[str, Any]] = {}
        self.matrices: dict[str, VectorMatrix] = {}
        self.namespace_embedders: dict[str, Embedder] = {}

    def close(self) -> None:
        """Drop the caches, stop the helper thread, close the connection if the store opened it."""
        with self.lock:
            if self.closed:
                return
            self.closed = True
            self.matrices.clear()
            if self.helper is not None and self.helper[0] == os.getpid():
                self.helper[1].shutdown(wait=True)
            self.helper = None
            if self.owns_connection:
                self.conn.close()

    def check_open(self) -> None:
        if self.closed:
            raise StoreError("this AssertionStore is closed; open a new one")

    @contextmanager
    def write(self) -> Iterator[Any]:
        """The connection inside one write transaction (BEGIN IMMEDIATE), under the store's lock."""
        with self.lock:
            self.check_open()
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise

    @contextmanager
    def read(self) -> Iterator[Any]:
        """The connection inside one read transaction (a consistent snapshot), under the store's lock."""
        with self.lock:
            self.check_open()
            self.conn.execute("BEGIN")
            try:
                yield self.conn
            finally:
                self.conn.execute("COMMIT")

    def alongside(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        """``fn(*args)`` on the store's helper thread, for work on the connection while the
        caller (holding the store's lock, inside ``read``) computes without it; the caller
        must wait for the future before it touches the connection again. A connection the
        store was given may refuse other threads, and a shutting-down interpreter takes no
        new work on its pools: there the call runs here, at once."""
        if self.owns_connection:
            if self.helper is None or self.helper[0] != os.getpid():  # a forked child has no thread
                self.helper = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragtt-temporal"))
            try:
                return self.helper[1].submit(fn, *args)
            except RuntimeError:  # the interpreter is shutting down, and its pools with it
                pass
        done: Future[Any] = Future()
        try:
            done.set_result(fn(*args))
        except Exception as exc:
            done.set_exception(exc)
        return done

    def columns(self, table: str) -> list[str]:
        """The extension columns of ``table``, in declaration order."""
        return list(self.extensions.get(table, {}))

    def defaults(self, table: str) -> dict[str, Any]:
        """The extension columns of ``table`` with their defaults."""
        return dict(self.extensions.get(table, {}))

    def emit(self, name: str, value: float, **tags: str) -> None:
        """Report a metric to the store's hook; a failing hook is logged, never raised."""
        store = self._store
        if store.metrics is not None:
            try:
                store.metrics(name, value, tags)
            except Exception:  # a metrics sink must never break a write or a query
                store.logger.exception("metrics hook failed for %s", name)

    def close_vectors(self, conn: Any, namespace: str, closes: Sequence[tuple[int, float]]) -> None:
        """End the validity of vector rows ``closes`` ((seq, valid_until) pairs) in ``namespace``'s index."""
        store = self._store
        info = store.namespaces.info(namespace, conn=conn)
        if info.vec_table and store.vector_enabled:
            conn.executemany(
                f"UPDATE {info.vec_table} SET valid_until = ? WHERE rowid = ?",
                [(float(end), seq) for seq, end in closes],
            )
