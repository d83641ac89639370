"""Remove a source: its chunks leave the index in one new version, logged by the crash protocol."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragtt._hashing import doc_id_for
from ragtt.commit import writing
from ragtt.errors import NotFoundError
from ragtt.events import types as ev
from ragtt.events.store import Event
from ragtt.index.table import sql_string_list

if TYPE_CHECKING:
    from ragtt.context import Context

__all__ = ["remove_source"]


def remove_source(ctx: Context, source: str) -> int:
    """Returns the version without the source: a new one, or the current one when the
    source was removed already (so an interrupted removal can simply be run again)."""
    if not isinstance(source, str):
        raise TypeError(f"source must be a str; got {type(source).__name__}")
    with writing(ctx, "remove") as w:
        found = ctx.table.scan(w.base, ["chunk_id"], where=f"source IN ({sql_string_list([source])})")
        if found.num_rows == 0:
            if ctx.log.last_ingest_of(source) is not None:
                return w.base
            indexed = sorted(set(ctx.table.scan(w.base, ["source"]).column("source").to_pylist()))
            shown = ", ".join(map(repr, indexed[:10])) + (f" and {len(indexed) - 10} more" if len(indexed) > 10 else "")
            raise NotFoundError(f"source {source!r} was never in the index (indexed: {shown or 'nothing yet'})")
        w.stage(
            [
                Event(
                    ev.DOCUMENT_REMOVED,
                    {
                        "doc_id": doc_id_for(source),
                        "source": source,
                        "chunk_ids_removed": sorted(found.column("chunk_id").to_pylist()),
                    },
                    doc_id=doc_id_for(source),
                )
            ]
        )
        ctx.table.delete_sources([source])
        return w.commit()[-1]
