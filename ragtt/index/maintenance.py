"""Maintenance: compaction and full-text indexing, ragtt's own, deleting no version.

It runs after a write has committed, as a write of its own: a failure (another process's
commit conflict, a full disk) never fails the write before it. It is retried by the next
write, and reported as a warning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragtt.commit import writing
from ragtt.events import types as ev
from ragtt.events.store import Event

if TYPE_CHECKING:
    from ragtt.context import Context

__all__ = ["MAINTAIN_EVERY", "MAINTAIN_ROWS", "maintenance_due", "optimize"]

# Maintenance (compaction, full-text indexing) after this many writes, or a write this large.
MAINTAIN_EVERY = 32
MAINTAIN_ROWS = 256


_PENDING = "maintenance_pending"  # meta: "1" while a skipped maintenance waits for the next write


def maintenance_due(ctx: Context, rows_written: int) -> bool:
    return (
        rows_written >= MAINTAIN_ROWS
        or ctx.log.get_meta(_PENDING) == "1"
        or ctx.log.versions.writes_since_maintenance() >= MAINTAIN_EVERY
    )


def optimize(ctx: Context, *, strict: bool = True) -> tuple[list[int], list[str]]:
    """Compact and index; returns (versions made, warnings). ``strict=False`` (after an
    ingest) turns a failure into a warning instead of an exception."""
    try:
        with writing(ctx, "maintenance") as w:
            w.stage([Event(ev.INDEX_OPTIMIZED, {})], meta={_PENDING: ""})
            ctx.table.optimize()
            return w.commit(), []
    except Exception as exc:
        if strict:
            raise
        ctx.log.set_meta(_PENDING, "1")
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return [], [f"maintenance skipped, to be retried by the next write: {first}"]
