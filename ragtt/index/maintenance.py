"""Maintenance: compaction, full-text indexing and the ANN index, ragtt's own, deleting no version.

It runs after a write has committed, as a write of its own: a failure (another process's
commit conflict, a full disk) never fails the write before it. It is retried by the next
write, and reported as a warning.

Once the table holds ``PipelineConfig.ann_min_rows`` rows, maintenance also trains an IVF-PQ
index on the vectors, as one more write (operation ``"index"``, event ``index.vector_built``):
from that version on, vector search probes it (``ragtt.index.retrieve``). Compaction after it
folds new rows into the index (LanceDB's optimize), each time at a new version.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragtt._memory import release_free_memory
from ragtt.commit import writing
from ragtt.events import types as ev
from ragtt.events.store import Event
from ragtt.values import first_line

if TYPE_CHECKING:
    from ragtt.context import Context

__all__ = [
    "MAINTAIN_EVERY",
    "MAINTAIN_ROWS",
    "VECTOR_INDEX_NAME",
    "build_vector_index",
    "ivf_pq_sizes",
    "maintenance_due",
    "optimize",
    "vector_index_due",
]

# Maintenance (compaction, full-text indexing) after this many writes, or once this many rows
# wait outside the full-text index (BM25 scans those one by one: at 2,000 of them, ten ingests
# of 200 rows, a BM25 query took 8x as long as on the indexed table).
MAINTAIN_EVERY = 32
MAINTAIN_ROWS = 256
VECTOR_INDEX_NAME = "vector_idx"


_PENDING = "maintenance_pending"  # meta: "1" while a skipped maintenance waits for the next write


def maintenance_due(ctx: Context, rows_written: int) -> bool:
    return (
        rows_written >= MAINTAIN_ROWS
        or ctx.log.get_meta(_PENDING) == "1"
        or ctx.log.versions.writes_since_maintenance() >= MAINTAIN_EVERY
        or ctx.table.unindexed_text_rows(ctx.version) >= MAINTAIN_ROWS
        or vector_index_due(ctx, ctx.version)
    )


def vector_index_due(ctx: Context, version: int) -> bool:
    """Whether ``version`` holds ``ann_min_rows`` rows and no ANN index (checked after every
    write, so an ingest whose maintenance was cut short still gets its index next time)."""
    threshold = ctx.config.ann_min_rows
    return bool(threshold) and ctx.table.vector_index(version) is None and ctx.table.count(version) >= threshold


def optimize(ctx: Context, *, strict: bool = True) -> tuple[list[int], list[str]]:
    """Compact and index (and train the ANN index once the table is large enough); returns
    (versions made, warnings). ``strict=False`` (after an ingest) turns a failure into a
    warning instead of an exception."""
    made: list[int] = []
    try:
        with writing(ctx, "maintenance") as w:
            w.stage([Event(ev.INDEX_OPTIMIZED, {})], meta={_PENDING: ""})
            ctx.table.optimize()
            made += w.commit()
        release_free_memory()  # the full-text update's freed buffers, before the ANN index trains
        made += build_vector_index(ctx)
        return made, []
    except Exception as exc:
        if strict:
            raise
        ctx.log.set_meta(_PENDING, "1")
        first = first_line(exc)
        return made, [f"maintenance skipped, to be retried by the next write: {first}"]


def ivf_pq_sizes(rows: int, dim: int) -> tuple[int, int, int]:
    """The IVF-PQ index's sizes for ``rows`` vectors of ``dim``: LanceDB's own sqrt(rows)
    partitions, dim/8 sub-vectors, and 64 training vectors per partition. LanceDB's default
    of 256 held 150,000 vectors (230 MB at 384 dims) at 343k rows, the peak of the ingest that
    crossed the threshold; 64 per centroid still trains k-means well (faiss warns below 39)."""
    sub_vectors = next(s for s in (dim // 8, dim // 4, dim // 2, 1) if s > 0 and dim % s == 0)
    return max(1, round(rows**0.5)), sub_vectors, 64


def build_vector_index(ctx: Context) -> list[int]:
    """Train the IVF-PQ index when the latest version has ``ann_min_rows`` rows and no such
    index yet (one new version, logged as ``index.vector_built``); else nothing."""
    if not ctx.config.ann_min_rows:
        return []
    with writing(ctx, "index") as w:
        if not vector_index_due(ctx, w.base):
            return []
        rows = ctx.table.count(w.base)
        partitions, sub_vectors, sample_rate = ivf_pq_sizes(rows, ctx.table.vector_dim(w.base))
        payload: ev.VectorIndexBuilt = {
            "name": VECTOR_INDEX_NAME,
            "index_type": "IVF_PQ",
            "rows": rows,
            "num_partitions": partitions,
            "num_sub_vectors": sub_vectors,
            "sample_rate": sample_rate,
        }
        w.stage([Event(ev.INDEX_VECTOR_BUILT, dict(payload))])
        ctx.table.create_vector_index(VECTOR_INDEX_NAME, partitions, sub_vectors, sample_rate)
        return w.commit()
