"""Embedding drift between two index versions: per-source centroids and per-chunk cosines.

One scan per version; all arithmetic in numpy. A change of embedder is flagged; vectors of
different dimensions are reported as incomparable rather than compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ragtt._html import BOX, STYLE, esc, table
from ragtt.events import types as ev
from ragtt.results import TRANSIENT, Result, version_label
from ragtt.values import counted

if TYPE_CHECKING:
    import polars as pl
    from numpy.typing import NDArray

    from ragtt.context import At, Context

__all__ = ["DriftReport", "SourceDrift", "drift", "embedder_at"]


@dataclass(frozen=True)
class SourceDrift(Result):
    source: str
    status: str  # common | added | removed (present at the right version only / the left only)
    centroid_cosine: float | None  # None: the source is in one version only, or incomparable
    chunks_left: int
    chunks_right: int
    chunks_common: int
    chunk_cosine_mean: float | None
    chunk_cosine_min: float | None
    drifted: bool | None  # None when incomparable or in one version only

    def summary(self) -> str:
        """What happened to the source, as the CLI and the HTML table both say it."""
        if self.status != "common":
            return f"{self.status} ({self.chunks_right or self.chunks_left} chunks)"
        cos = "n/a (incomparable vectors)" if self.centroid_cosine is None else f"{self.centroid_cosine:.4f}"
        return f"centroid cosine {cos} ({self.chunks_common} common chunks){' DRIFTED' if self.drifted else ''}"


@dataclass(frozen=True)
class DriftReport(Result):
    left_version: int
    right_version: int
    embedder_left: str
    embedder_right: str
    embedder_changed: bool
    comparable: bool
    threshold: float
    sources: list[SourceDrift]
    chunk_cosines: dict[str, float]
    # The project it was computed on, so a view can fetch the vectors (DriftScatter(report)).
    project: Any = field(default=None, repr=False, compare=False, metadata=TRANSIENT)
    labels: dict[int, str] = field(default_factory=dict)  # version -> snapshot label

    @property
    def drifted_sources(self) -> list[str]:
        return [s.source for s in self.sources if s.drifted]

    def to_text(self) -> str:
        lines = [
            f"drift {self._span()} (threshold {self.threshold}): "
            f"{len(self.drifted_sources)} of {counted(len(self.sources), 'source')} drifted"
        ]
        if self.embedder_changed:
            lines.append(f"  embedder changed: {self.embedder_left} -> {self.embedder_right}")
        if not self.comparable:
            lines.append("  vectors have different dimensions: incomparable, no cosine computed")
        lines += [f"  {s.source}: {s.summary()}" for s in self.sources]
        return "\n".join(lines)

    def _span(self) -> str:
        return f"{version_label(self.left_version, self.labels)} -> {version_label(self.right_version, self.labels)}"

    def __str__(self) -> str:
        return self.to_text()

    def frame(self) -> pl.DataFrame:
        import polars as pl

        schema = {
            "source": pl.String,
            "status": pl.String,
            "centroid_cosine": pl.Float64,
            "drifted": pl.Boolean,
            "chunks_left": pl.Int64,
            "chunks_right": pl.Int64,
            "chunks_common": pl.Int64,
            "chunk_cosine_mean": pl.Float64,
            "chunk_cosine_min": pl.Float64,
        }
        return pl.DataFrame([{k: getattr(s, k) for k in schema} for s in self.sources], schema=schema, orient="row")

    def _repr_html_(self) -> str:
        rows = [
            (s.source, s.status, s.summary(), "yes" if s.drifted else "", s.chunks_left, s.chunks_right)
            for s in self.sources
        ]
        head = (
            f"<b>Drift</b> {esc(self._span())} (threshold {self.threshold}): "
            f"{len(self.drifted_sources)} of {counted(len(self.sources), 'source')} drifted"
        )
        if self.embedder_changed:
            head += f"; embedder changed: {esc(self.embedder_left)} &rarr; {esc(self.embedder_right)}"
        if not self.comparable:
            head += "; vectors have different dimensions: incomparable, no cosine computed"
        return (
            f"{STYLE}{BOX}{head}"
            + table(["source", "status", "what changed", "drifted", "chunks then", "chunks now"], rows)
            + "</div>"
        )


def embedder_at(ctx: Context, version: int) -> str:
    """The embedder model id whose vectors the table holds at ``version``."""
    last = ctx.log.last([ev.INGEST_COMPLETED, ev.INDEX_REEMBEDDED], version_range=(0, version))
    if last is None:
        return ctx.embedder.model_id
    return str(last.payload["to_model"] if last.type == ev.INDEX_REEMBEDDED else last.payload["embedder_id"])


def drift(ctx: Context, a: At, b: At, threshold: float = 0.9, *, project: Any = None) -> DriftReport:
    """``project`` rides along on the report (transient) so ``DriftScatter(report)`` can draw it."""
    from ragtt.index.snapshots import version_labels

    left_v, right_v = ctx.resolve(a), ctx.resolve(b)
    left, right = _load(ctx, left_v), _load(ctx, right_v)
    model_left, model_right = embedder_at(ctx, left_v), embedder_at(ctx, right_v)
    comparable = left["vectors"].shape[1] == right["vectors"].shape[1]
    chunk_cos: dict[str, float] = {}
    if comparable:
        common = sorted(set(left["index"]) & set(right["index"]))
        if common:
            li = [left["index"][c] for c in common]
            ri = [right["index"][c] for c in common]
            sims = np.einsum("ij,ij->i", left["vectors"][li], right["vectors"][ri])
            chunk_cos = dict(zip(common, sims.astype(float).tolist(), strict=True))
    sources = []
    for source in sorted(set(left["groups"]) | set(right["groups"])):
        lrows, rrows = left["groups"].get(source, []), right["groups"].get(source, [])
        lids = {left["ids"][i] for i in lrows}
        rids = {right["ids"][i] for i in rrows}
        common_ids = lids & rids
        cos = None
        if comparable and lrows and rrows:
            cos = _cosine(left["vectors"][lrows].mean(axis=0), right["vectors"][rrows].mean(axis=0))
        sims = [chunk_cos[c] for c in common_ids if c in chunk_cos]
        status = "common" if lrows and rrows else ("added" if rrows else "removed")
        sources.append(
            SourceDrift(
                source=source,
                status=status,
                centroid_cosine=cos,
                chunks_left=len(lrows),
                chunks_right=len(rrows),
                chunks_common=len(common_ids),
                chunk_cosine_mean=float(np.mean(sims)) if sims else None,
                chunk_cosine_min=float(np.min(sims)) if sims else None,
                drifted=None if cos is None else cos < threshold,
            )
        )
    return DriftReport(
        left_v,
        right_v,
        model_left,
        model_right,
        model_left != model_right,
        comparable,
        threshold,
        sources,
        chunk_cos,
        project=project,
        labels=version_labels(ctx),
    )


def _load(ctx: Context, version: int) -> dict[str, Any]:
    data, vectors = ctx.table.vectors(version, ["chunk_id", "source"])
    ids = data.column("chunk_id").to_pylist()
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = (vectors / np.where(norms == 0, 1, norms)).astype(np.float32)
    groups: dict[str, list[int]] = {}
    for i, source in enumerate(data.column("source").to_pylist()):
        groups.setdefault(source, []).append(i)
    return {"ids": ids, "index": {c: i for i, c in enumerate(ids)}, "vectors": vectors, "groups": groups}


def _cosine(a: NDArray[np.float32], b: NDArray[np.float32]) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(a @ b / (na * nb)) if na and nb else 0.0
