"""Lineage: why each chunk entered or left a query's top-k between two runs.

Built from the event log (``document.ingested`` / ``document.removed`` carry the chunk ids
they added and removed, with the version) and one chunk-id set per version, never from a
scan per chunk.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ragtt._html import BOX, STYLE, esc, table
from ragtt.events import types as ev
from ragtt.results import Result, version_label
from ragtt.timetravel.passages import pair_passages

if TYPE_CHECKING:
    import polars as pl

    from ragtt.context import Context
    from ragtt.timetravel.run import LoggedRun

__all__ = ["LineageEntry", "LineageReport", "lineage", "runs_lineage"]


@dataclass(frozen=True)
class LineageEntry(Result):
    chunk_id: str
    source: str
    change: str  # entered | left
    cause: str  # added | reingested | removed | ranking
    version: int | None  # where the cause happened (None for ranking-only changes)
    event_id: str | None
    at: datetime | None
    rank_before: int | None
    rank_after: int | None
    top_k: int | None = None  # the k of the run the chunk entered or left
    passage: str | None = None  # re-ingested: "changed" (an edited counterpart exists), "gone" or "new"
    # passage "changed": the edited counterpart's rank in the other run (None: not in its top-k)
    counterpart_rank: int | None = None

    def statement(self, labels: Mapping[int, str] | None = None) -> str:
        """One sentence: "chunk 1a2b3c4d5e (refund-policy.md, was #2) left the top 4:
        refund-policy.md was re-ingested at flask-1.0 (v6) and this passage changed"."""
        rank = f"was #{self.rank_before}" if self.change == "left" else f"now #{self.rank_after}"
        top = f"the top {self.top_k}" if self.top_k else "the top-k"
        what = f"chunk {self.chunk_id[:10]} ({self.source}, {rank}) {self.change} {top}"
        when = version_label(self.version, labels)
        if self.cause == "reingested" and self.passage == "changed" and self.counterpart_rank is not None:
            # its edited counterpart is in the other run: the passage changed in place, it did
            # not enter or leave the top-k
            own = (self.rank_before if self.change == "left" else self.rank_after) or 0
            then, now = (own, self.counterpart_rank) if self.change == "left" else (self.counterpart_rank, own)
            moved = "rank kept" if then == now else f"moved {'up' if now < then else 'down'}"
            what = f"chunk {self.chunk_id[:10]} ({self.source}, #{then} -> #{now}) changed in place, {moved}"
        if self.cause == "ranking":
            return f"{what}: ranking changed only; this passage is unchanged at both versions"
        if self.cause == "added":
            return f"{what}: {self.source} was added at {when}"
        if self.cause == "removed":
            return f"{what}: {self.source} was removed at {when}"
        if self.cause == "reingested":
            passage = {
                "changed": " and this passage changed",
                "gone": " and this passage is no longer in it",
                "new": " and this passage is new in it",
            }.get(self.passage or "", "")
            return f"{what}: {self.source} was re-ingested at {when}{passage}"
        return f"{what}: no ingest recorded in the log explains it"


@dataclass(frozen=True)
class LineageReport(Result):
    left_id: str
    right_id: str
    left_version: int
    right_version: int
    entries: list[LineageEntry]
    labels: dict[int, str] = field(default_factory=dict)  # version -> snapshot label
    left_query: str = ""
    right_query: str = ""
    # The two runs asked different questions: said here, in the text and in every front end.
    warning: str | None = None

    @property
    def same_question(self) -> bool:
        return self.left_query == self.right_query

    def to_text(self) -> str:
        head = (
            f"lineage {self.left_id} at {version_label(self.left_version, self.labels)} -> {self.right_id} "
            f"at {version_label(self.right_version, self.labels)}"
        )
        if self.warning:
            head += f"\n  WARNING: {self.warning}"
        if not self.entries:
            return head + "\n  the top-k did not change"
        return "\n".join([head, *(f"  {e.statement(self.labels)}" for e in self.entries)])

    def reasons(self) -> dict[str, str]:
        """chunk id -> the sentence that says why it entered or left."""
        return {e.chunk_id: e.statement(self.labels) for e in self.entries}

    def __str__(self) -> str:
        return self.to_text()

    def frame(self) -> pl.DataFrame:
        import polars as pl

        schema: dict[str, Any] = {
            "chunk_id": pl.String,
            "source": pl.String,
            "change": pl.String,
            "cause": pl.String,
            "version": pl.Int64,
            "event_id": pl.String,
            "at": pl.Datetime("us", "UTC"),
            "rank_before": pl.Int64,
            "rank_after": pl.Int64,
            "passage": pl.String,
            "why": pl.String,
        }
        rows = [
            {**{k: getattr(e, k) for k in schema if k != "why"}, "why": e.statement(self.labels)} for e in self.entries
        ]
        return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)

    def _repr_html_(self) -> str:
        rows = [
            (
                e.change,
                e.cause,
                version_label(e.version, self.labels) if e.version is not None else "",
                e.source,
                e.chunk_id[:10],
                e.statement(self.labels),
            )
            for e in self.entries
        ]
        return (
            f"{STYLE}{BOX}<b>Lineage</b> {esc(version_label(self.left_version, self.labels))} &rarr; "
            f"{esc(version_label(self.right_version, self.labels))}"
            f" <code>{esc(self.left_id)}</code> &rarr; <code>{esc(self.right_id)}</code>"
            + (f"<div class='rem'>warning: {esc(self.warning)}</div>" if self.warning else "")
            + table(["change", "cause", "version", "source", "chunk", "why"], rows)
            + "</div>"
        )


def lineage(ctx: Context, left_id: str, right_id: str) -> LineageReport:
    """Either id may be ``"last"``: the newest live run of the other one's question."""
    from ragtt.timetravel.run import load_run, resolve_pair

    left_id, right_id = resolve_pair(ctx, left_id, right_id)
    return runs_lineage(ctx, load_run(ctx, left_id), load_run(ctx, right_id))


def runs_lineage(ctx: Context, left: LoggedRun, right: LoggedRun) -> LineageReport:
    """``lineage`` of two runs read already (a federation holds its members' runs in its own log)."""
    from ragtt.index.snapshots import version_labels
    from ragtt.timetravel.diff import question_warning

    lranks = {c["chunk_id"]: (c["rank"], c["source"]) for c in left.chunks}
    rranks = {c["chunk_id"]: (c["rank"], c["source"]) for c in right.chunks}
    at_left = ctx.table.chunk_sources(left.index_version)
    at_right = ctx.table.chunk_sources(right.index_version)
    changes = _chunk_changes(
        ctx, min(left.index_version, right.index_version), max(left.index_version, right.index_version)
    )
    forward = right.index_version >= left.index_version
    # Moving forward, a chunk that left was taken out and one that entered was put in;
    # moving back in time, the other way round.
    entries = [
        *(
            replace(e, top_k=left.plan.top_k)
            for e in _moves(lranks, rranks, at_right, "left", "removed" if forward else "added", changes)
        ),
        *(
            replace(e, top_k=right.plan.top_k)
            for e in _moves(rranks, lranks, at_left, "entered", "added" if forward else "removed", changes)
        ),
    ]
    return LineageReport(
        left.query_id,
        right.query_id,
        left.index_version,
        right.index_version,
        _with_passages(ctx, entries, left.index_version, right.index_version, right.query),
        version_labels(ctx),
        left.query,
        right.query,
        question_warning(left.query, right.query),
    )


def _with_passages(
    ctx: Context, entries: list[LineageEntry], left_version: int, right_version: int, query: str
) -> list[LineageEntry]:
    """Say, for each chunk a re-ingest took out or put in, whether its passage was edited
    (a counterpart on the other side, ``pair_passages`` with what the diff knows: the same
    pairing as ``diff``'s) or is gone / new."""
    from ragtt.timetravel.diff import aboutness

    out = list(entries)
    sources = sorted({e.source for e in entries if e.cause == "reingested"})
    if not sources:
        return out
    # At most one scan per version for every re-ingested source (not one per source and
    # version), none for a source read lately (the diffs of a history matrix share them).
    by_version: dict[int, dict[str, dict[str, str]]] = {}
    rows: dict[str, dict[str, Any]] = {}
    columns = ["chunk_id", "source", "text", "doc_key", "char_start", "char_end", "vector"]
    for v in {left_version, right_version}:
        grouped: dict[str, dict[str, str]] = {}
        for source, found in ctx.table.source_rows(v, sources, columns).items():
            for r in found:
                grouped.setdefault(source, {})[r["chunk_id"]] = r["text"]
                rows[r["chunk_id"]] = r
        by_version[v] = grouped
    about = aboutness(ctx, query, rows)
    # a chunk at one version only is in the other run's top-k iff an entry of that run names it
    ranks = {e.chunk_id: e.rank_before or e.rank_after for e in entries}
    for source in sources:
        texts = {v: by_version[v].get(source, {}) for v in by_version}
        for change, own, other in (("left", left_version, right_version), ("entered", right_version, left_version)):
            mine = [
                (k, e)
                for k, e in enumerate(out)
                if e.source == source and e.cause == "reingested" and e.change == change
            ]
            if not mine:
                continue
            ours = [
                {"source": source, "text": texts[own].get(e.chunk_id, ""), "chunk_id": e.chunk_id, "k": k}
                for k, e in mine
            ]
            theirs = [
                {"source": source, "text": t, "chunk_id": cid}
                for cid, t in texts[other].items()
                if cid not in texts[own]
            ]
            paired = {p.left["k"]: p.right["chunk_id"] for p in pair_passages(ours, theirs, about=about)}
            for k, e in mine:
                fallback = "gone" if change == "left" else "new"
                counterpart = ranks.get(paired.get(k, ""))
                out[k] = replace(e, passage="changed" if k in paired else fallback, counterpart_rank=counterpart)
    return out


def _moves(
    ranks: dict[str, tuple[int, str]],
    other: dict[str, tuple[int, str]],
    present: dict[str, str],
    change: str,
    key: str,
    changes: dict[tuple[str, str], Any],
) -> list[LineageEntry]:
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


def _caused(chunk_id: str, source: str, change: str, event: Any, before: int | None, after: int | None) -> LineageEntry:
    if event is None:  # written outside ragtt's log (should not happen): say so, don't guess
        return LineageEntry(chunk_id, source, change, "unknown", None, None, None, before, after)
    if event.type == ev.DOCUMENT_REMOVED:
        cause = "removed"
    elif event.payload.get("status") == "added":
        cause = "added"
    else:
        cause = "reingested"
    return LineageEntry(chunk_id, source, change, cause, event.index_version, event.event_id, event.ts, before, after)


def _chunk_changes(ctx: Context, low: int, high: int) -> dict[tuple[str, str], Any]:
    """("added"|"removed", chunk_id) -> the event in (low, high] that did it (the latest wins)."""
    found: dict[tuple[str, str], Any] = {}
    for event in ctx.log.query(types=[ev.DOCUMENT_INGESTED, ev.DOCUMENT_REMOVED], version_range=(low, high)):
        for chunk_id in event.payload.get("chunk_ids_added", []):
            found[("added", chunk_id)] = event
        for chunk_id in event.payload.get("chunk_ids_removed", []):
            found[("removed", chunk_id)] = event
    return found
