"""A bulk writer killed mid-batch leaves whole batches only, each with its vectors and full text.

The bulk path inserts a batch's vectors without first deleting rows that cannot exist yet
(``vec0_upsert(fresh=True)``) and runs with a large page cache, so more of the batch sits in
memory before the commit: a SIGKILL at any point must still lose the whole open batch and
nothing else.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from pathlib import Path

import numpy as np

from ragtt._sqlite import connect
from ragtt.temporal import AssertionStore, Episode, RetrievalQuery
from tests.temporal.conftest import NS, make

BATCH = 2000
DIM = 16


def bulk_writer(path: str) -> None:
    rng = np.random.default_rng(0)
    with AssertionStore.open(path, embedding_dimension=DIM) as store:
        store.write_episode(Episode("e1", NS, 0, 0.0, "bulk", "source"))
        for b in range(1000):  # far more than it gets to write before the kill
            items = [make(f"a{b}-{i}", f"claim {b} {i} turbulence", float(b * BATCH + i)) for i in range(BATCH)]
            store.write_assertions(items, rng.standard_normal((BATCH, DIM)).astype(np.float32))


def _count(path: Path) -> int:
    conn = connect(path)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM assertions").fetchone()[0])
    except Exception:  # the writer has not created the schema yet
        return 0
    finally:
        conn.close()


def test_killed_bulk_writer_leaves_whole_batches_with_vectors_and_full_text(tmp_path: Path) -> None:
    path = tmp_path / "bulk.db"
    proc = multiprocessing.get_context("spawn").Process(target=bulk_writer, args=(str(path),))
    proc.start()
    deadline = time.monotonic() + 120
    while _count(path) < 2 * BATCH and time.monotonic() < deadline and proc.is_alive():
        time.sleep(0.05)
    time.sleep(0.2)  # into the middle of a later batch
    assert proc.pid is not None
    os.kill(proc.pid, signal.SIGKILL)
    proc.join()
    with AssertionStore.open(path) as store:
        with store.internals.read() as conn:  # the test inspects the tables behind the API
            written = conn.execute("SELECT COUNT(*) FROM assertions").fetchone()[0]
            info = store.namespaces.info(NS, conn=conn)
            vectors = conn.execute(f"SELECT COUNT(*) FROM {info.vec_table}").fetchone()[0]
            text = conn.execute(
                "SELECT COUNT(*) FROM assertions_fts WHERE assertions_fts MATCH 'turbulence'"
            ).fetchone()
            citations = conn.execute("SELECT COUNT(*) FROM citations").fetchone()[0]
        assert written >= 2 * BATCH and written % BATCH == 0
        assert vectors == written and text[0] == written and citations == written
        assert store.pending_indexing(NS) == []
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        last = written // BATCH - 1
        res = store.retrieve(RetrievalQuery(NS, 1e12, query_text=f"claim {last}", strategy="bm25", limit=1))
        assert res.ids and res.ids[0].startswith(f"a{last}-")
