"""Swap embedders: every current chunk re-embedded into a new table version, ids unchanged."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ragtt.errors import ConfigError
from ragtt.events.store import Event, utc_now
from ragtt.index.embedders import Embedder, check_embedder
from ragtt.index.table import chunk_schema
from ragtt.results import IngestReport

if TYPE_CHECKING:
    from ragtt.project import Project

__all__ = ["reembed"]


def reembed(proj: Project, embedder: Embedder) -> IngestReport:
    """One new version when the dimension is unchanged; two when it changes (the rewrite,
    then the full-text index, which a rewrite drops). Older versions keep their vectors,
    so every earlier query still replays."""
    started = time.perf_counter()
    embedder = check_embedder(embedder)
    old = proj.embedder
    if embedder.model_id == old.model_id and embedder.dim == old.dim:
        raise ConfigError(f"the index is already embedded with {old.model_id}; nothing to re-embed")
    table = proj._table
    before = table.latest_version()
    columns = [n for n in chunk_schema(old.dim).names if n != "vector"]
    rows = table.scan(before, columns)
    texts = rows.column("text").to_pylist()
    vectors, computed, reused = proj._cache.embed(embedder, texts)
    import pyarrow as pa

    data = rows.append_column("vector", pa.array(list(vectors), type=pa.list_(pa.float32(), embedder.dim)))
    data = data.cast(chunk_schema(embedder.dim))
    new_versions = table.rewrite_vectors(data, embedder.dim)
    proj.embedder = embedder
    now = utc_now()
    sources = sorted(set(rows.column("source").to_pylist()))
    with proj._events.transaction() as conn:
        for version in new_versions:
            proj._history.record(conn, version, "reembed", now)
        proj._events.set_meta("embedder_id", embedder.model_id, conn)
        proj._events.set_meta("embedder_dim", str(embedder.dim), conn)
        proj._events.append_many([Event("index.reembedded", {
            "from_model": old.model_id, "to_model": embedder.model_id, "from_dim": old.dim,
            "to_dim": embedder.dim, "chunks": len(texts), "embeddings_computed": computed,
            "embeddings_reused": reused, "versions": new_versions,
        }, index_version=new_versions[-1], ts=now)], conn=conn)
    return IngestReport(
        documents_added=[], documents_updated=[], documents_unchanged=sources, failed=[], chunks_added=0,
        chunks_removed=0, chunks_kept=len(texts), embeddings_computed=computed, embeddings_reused=reused,
        index_version_before=before, index_version_after=new_versions[-1],
        elapsed_s=round(time.perf_counter() - started, 4),
    )
