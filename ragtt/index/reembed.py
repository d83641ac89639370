"""Swap embedders: every current chunk re-embedded into a new table version, ids unchanged."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ragtt.commit import writing
from ragtt.events import types as ev
from ragtt.events.store import Event
from ragtt.index.embedders import Embedder, check_embedder
from ragtt.index.table import chunk_schema
from ragtt.results import IngestReport

if TYPE_CHECKING:
    from ragtt.context import Context

__all__ = ["reembed"]


def reembed(ctx: Context, embedder: Embedder) -> IngestReport:
    """One new version when the dimension is unchanged; two when it changes (the rewrite,
    then the full-text index, which a rewrite drops). Older versions keep their vectors,
    so every earlier query still replays. Re-embedding with the embedder the index already
    has changes nothing (so an interrupted call can simply be run again)."""
    started = time.perf_counter()
    embedder = check_embedder(embedder)
    with writing(ctx, "reembed") as w:
        old = ctx.embedder
        table = ctx.table
        columns = [n for n in chunk_schema(old.dim).names if n != "vector"]
        rows = table.scan(w.base, columns)
        texts = rows.column("text").to_pylist()
        sources = sorted(set(rows.column("source").to_pylist()))
        if embedder.model_id == old.model_id and embedder.dim == old.dim:
            return _report(
                sources,
                len(texts),
                (0, 0),
                (w.base, w.base),
                started,
                [("(reembed)", f"the index is already embedded with {old.model_id}; nothing changed")],
            )
        vectors, computed, reused = ctx.cache.embed(embedder, texts)
        import pyarrow as pa

        data = rows.append_column("vector", pa.array(list(vectors), type=pa.list_(pa.float32(), embedder.dim)))
        data = data.cast(chunk_schema(embedder.dim))
        w.stage(
            [
                Event(
                    ev.INDEX_REEMBEDDED,
                    {
                        "from_model": old.model_id,
                        "to_model": embedder.model_id,
                        "from_dim": old.dim,
                        "to_dim": embedder.dim,
                        "chunks": len(texts),
                        "embeddings_computed": computed,
                        "embeddings_reused": reused,
                    },
                )
            ],
            meta={"embedder_id": embedder.model_id, "embedder_dim": str(embedder.dim)},
            text_index=embedder.dim != old.dim,
        )
        table.rewrite_vectors(data, embedder.dim)
        new_versions = w.commit()
        ctx.embedder = embedder
    return _report(sources, len(texts), (computed, reused), (w.base, new_versions[-1]), started, [])


def _report(
    sources: list[str],
    chunks: int,
    embedded: tuple[int, int],
    versions: tuple[int, int],
    started: float,
    warnings: list[tuple[str, str]],
) -> IngestReport:
    return IngestReport(
        documents_added=[],
        documents_updated=[],
        documents_unchanged=sources,
        failed=[],
        chunks_added=0,
        chunks_removed=0,
        chunks_kept=chunks,
        embeddings_computed=embedded[0],
        embeddings_reused=embedded[1],
        index_version_before=versions[0],
        index_version_after=versions[1],
        elapsed_s=round(time.perf_counter() - started, 4),
        warnings=warnings,
    )
