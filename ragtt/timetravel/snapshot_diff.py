"""What changed in the index between two versions: documents and chunks, per source."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ragtt._html import BOX, STYLE, esc, table
from ragtt.results import Result, version_label

if TYPE_CHECKING:
    import polars as pl

    from ragtt.context import At, Context

__all__ = ["SnapshotDiff", "SourceChange", "snapshot_diff"]


@dataclass(frozen=True)
class SourceChange(Result):
    source: str
    status: str  # added | removed | changed | unchanged
    chunks_added: list[str]
    chunks_removed: list[str]
    chunks_kept: int


@dataclass(frozen=True)
class SnapshotDiff(Result):
    left_version: int
    right_version: int
    sources: list[SourceChange]
    labels: dict[int, str] = field(default_factory=dict)  # version -> snapshot label

    def _span(self) -> str:
        return f"{version_label(self.left_version, self.labels)} -> {version_label(self.right_version, self.labels)}"

    @property
    def documents_added(self) -> list[str]:
        return [s.source for s in self.sources if s.status == "added"]

    @property
    def documents_removed(self) -> list[str]:
        return [s.source for s in self.sources if s.status == "removed"]

    @property
    def documents_changed(self) -> list[str]:
        return [s.source for s in self.sources if s.status == "changed"]

    def to_text(self) -> str:
        lines = [
            f"snapshot diff {self._span()}: "
            f"{len(self.documents_added)} added, {len(self.documents_changed)} changed, "
            f"{len(self.documents_removed)} removed"
        ]
        for s in self.sources:
            if s.status != "unchanged":
                lines.append(
                    f"  {s.status:<8} {s.source}: +{len(s.chunks_added)} -{len(s.chunks_removed)} "
                    f"={s.chunks_kept} chunks"
                )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def frame(self) -> pl.DataFrame:
        import polars as pl

        return pl.DataFrame(
            [
                {
                    "source": s.source,
                    "status": s.status,
                    "chunks_added": len(s.chunks_added),
                    "chunks_removed": len(s.chunks_removed),
                    "chunks_kept": s.chunks_kept,
                }
                for s in self.sources
            ],
            schema={
                "source": pl.String,
                "status": pl.String,
                "chunks_added": pl.Int64,
                "chunks_removed": pl.Int64,
                "chunks_kept": pl.Int64,
            },
            orient="row",
        )

    def _repr_html_(self) -> str:
        rows = [
            (s.status, s.source, len(s.chunks_added), len(s.chunks_removed), s.chunks_kept)
            for s in self.sources
            if s.status != "unchanged"
        ]
        return (
            f"{STYLE}{BOX}<b>Snapshot diff</b> {esc(self._span())}"
            + table(["status", "source", "+chunks", "-chunks", "kept"], rows)
            + "</div>"
        )


def snapshot_diff(ctx: Context, a: At, b: At) -> SnapshotDiff:
    from ragtt.index.snapshots import version_labels

    left_v, right_v = ctx.resolve(a), ctx.resolve(b)
    left = _by_source(ctx.table.chunk_sources(left_v))
    right = _by_source(ctx.table.chunk_sources(right_v))
    changes = []
    for source in sorted(set(left) | set(right)):
        before, after = left.get(source, set()), right.get(source, set())
        if not before:
            status = "added"
        elif not after:
            status = "removed"
        else:
            status = "unchanged" if before == after else "changed"
        changes.append(
            SourceChange(source, status, sorted(after - before), sorted(before - after), len(before & after))
        )
    return SnapshotDiff(left_v, right_v, changes, version_labels(ctx))


def _by_source(chunks: dict[str, str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for chunk_id, source in chunks.items():
        out.setdefault(source, set()).add(chunk_id)
    return out
