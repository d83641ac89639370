"""Lineage: why each chunk entered or left a query's top-k between two runs.

Built from the event log (``document.ingested`` / ``document.removed`` carry the chunk ids
they added and removed, with the version) and one chunk-id set per version, never from a
scan per chunk.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ragtt._html import STYLE, esc, table
from ragtt.results import _Result

if TYPE_CHECKING:
    import polars as pl

    from ragtt.context import Context

__all__ = ["LineageEntry", "LineageReport", "lineage"]


@dataclass(frozen=True)
class LineageEntry(_Result):
    chunk_id: str
    source: str
    change: str  # entered | left
    cause: str  # added | reingested | removed | ranking
    version: int | None  # where the cause happened (None for ranking-only changes)
    event_id: str | None
    at: datetime | None
    rank_before: int | None
    rank_after: int | None

    def statement(self) -> str:
        rank = f"#{self.rank_before}" if self.change == "left" else f"#{self.rank_after}"
        what = f"chunk {self.chunk_id[:10]} ({self.source}, {rank}) {self.change} the top-k"
        when = f" at version {self.version}" + (f" ({self.at:%Y-%m-%d %H:%M:%S} UTC)" if self.at else "")
        if self.cause == "ranking":
            return f"{what}: ranking changed only; the chunk exists at both versions"
        if self.cause == "added":
            return f"{what} because source {self.source} was added{when}"
        if self.cause == "removed":
            return f"{what} because source {self.source} was removed{when}"
        return f"{what} because source {self.source} was re-ingested{when}"


@dataclass(frozen=True)
class LineageReport(_Result):
    left_id: str
    right_id: str
    left_version: int
    right_version: int
    entries: list[LineageEntry]

    def to_text(self) -> str:
        head = f"lineage {self.left_id} (v{self.left_version}) -> {self.right_id} (v{self.right_version})"
        if not self.entries:
            return head + "\n  the top-k did not change"
        return "\n".join([head, *(f"  {e.statement()}" for e in self.entries)])

    def __str__(self) -> str:
        return self.to_text()

    def frame(self) -> pl.DataFrame:
        import polars as pl

        schema: dict[str, Any] = {"chunk_id": pl.String, "source": pl.String, "change": pl.String, "cause": pl.String,
                  "version": pl.Int64, "event_id": pl.String, "at": pl.Datetime("us", "UTC"),
                  "rank_before": pl.Int64, "rank_after": pl.Int64}
        rows = [{k: getattr(e, k if k != "at" else "at") for k in schema} for e in self.entries]
        return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)

    def _repr_html_(self) -> str:
        rows = [(e.change, e.cause, e.version if e.version is not None else "", e.source, e.chunk_id[:10],
                 e.statement()) for e in self.entries]
        return (f"{STYLE}<div class='ragtt-r'><b>Lineage</b> v{self.left_version} &rarr; v{self.right_version}"
                f" <code>{esc(self.left_id)}</code> &rarr; <code>{esc(self.right_id)}</code>"
                + table(["change", "cause", "version", "source", "chunk", "why"], rows) + "</div>")


def lineage(ctx: Context, left_id: str, right_id: str) -> LineageReport:
    from ragtt.timetravel.run import load_run

    left, right = load_run(ctx, left_id), load_run(ctx, right_id)
    lranks = {c["chunk_id"]: (c["rank"], c["source"]) for c in left.chunks}
    rranks = {c["chunk_id"]: (c["rank"], c["source"]) for c in right.chunks}
    at_left = ctx.table.chunk_sources(left.index_version)
    at_right = ctx.table.chunk_sources(right.index_version)
    changes = _chunk_changes(ctx, min(left.index_version, right.index_version),
                             max(left.index_version, right.index_version))
    forward = right.index_version >= left.index_version
    # Moving forward, a chunk that left was taken out and one that entered was put in;
    # moving back in time, the other way round.
    entries = [*_moves(lranks, rranks, at_right, "left", "removed" if forward else "added", changes),
               *_moves(rranks, lranks, at_left, "entered", "added" if forward else "removed", changes)]
    return LineageReport(left_id, right_id, left.index_version, right.index_version, entries)


def _moves(ranks: dict[str, tuple[int, str]], other: dict[str, tuple[int, str]], present: dict[str, str],
           change: str, key: str, changes: dict[tuple[str, str], Any]) -> list[LineageEntry]:
    """Entries for the chunks of ``ranks`` missing from ``other``: "ranking" when the chunk
    exists at the other version anyway, else the event that ``key`` ("added"/"removed") it."""
    out = []
    for chunk_id, (rank, source) in ranks.items():
        if chunk_id in other:
            continue
        before, after = (rank, None) if change == "left" else (None, rank)
        if chunk_id in present:
            out.append(LineageEntry(chunk_id, source, change, "ranking", None, None, None, before, after))
        else:
            out.append(_caused(chunk_id, source, change, changes.get((key, chunk_id)), before, after))
    return out


def _caused(chunk_id: str, source: str, change: str, event: Any, before: int | None,
            after: int | None) -> LineageEntry:
    if event is None:  # written outside ragtt's log (should not happen): say so, don't guess
        return LineageEntry(chunk_id, source, change, "unknown", None, None, None, before, after)
    if event.type == "document.removed":
        cause = "removed"
    elif event.payload.get("status") == "added":
        cause = "added"
    else:
        cause = "reingested"
    return LineageEntry(chunk_id, source, change, cause, event.index_version, event.event_id, event.ts,
                        before, after)


def _chunk_changes(ctx: Context, low: int, high: int) -> dict[tuple[str, str], Any]:
    """("added"|"removed", chunk_id) -> the event in (low, high] that did it (the latest wins)."""
    found: dict[tuple[str, str], Any] = {}
    for event in ctx.log.query(types=["document.ingested", "document.removed"], version_range=(low, high)):
        for chunk_id in event.payload.get("chunk_ids_added", []):
            found[("added", chunk_id)] = event
        for chunk_id in event.payload.get("chunk_ids_removed", []):
            found[("removed", chunk_id)] = event
    return found
