"""Compare two pipeline configs on the same corpus and queries, sharing one embedding cache."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt._html import BOX, STYLE, table
from ragtt.config import PipelineConfig
from ragtt.errors import ConfigError
from ragtt.results import Result
from ragtt.timetravel.diff import rank_biased_overlap
from ragtt.values import counted

if TYPE_CHECKING:
    import polars as pl

    from ragtt.index.embedders import Embedder

__all__ = ["ConfigComparison", "QueryComparison", "compare_configs", "kendall_tau"]


@dataclass(frozen=True)
class QueryComparison(Result):
    text: str
    chunk_ids_a: list[str]
    chunk_ids_b: list[str]
    overlap_at_k: float
    rank_correlation: float
    rbo: float


@dataclass(frozen=True)
class ConfigComparison(Result):
    config_a: dict[str, Any]
    config_b: dict[str, Any]
    queries: list[QueryComparison]
    embeddings_computed: int
    embeddings_reused: int

    @property
    def mean_overlap(self) -> float:
        return sum(q.overlap_at_k for q in self.queries) / len(self.queries) if self.queries else 1.0

    @property
    def mean_rank_correlation(self) -> float:
        return sum(q.rank_correlation for q in self.queries) / len(self.queries) if self.queries else 1.0

    def to_text(self) -> str:
        changed = sorted(k for k, v in self.config_a.items() if self.config_b.get(k) != v)
        lines = [
            f"compare configs ({', '.join(changed) or 'identical'}): mean overlap@k {self.mean_overlap:.3f}, "
            f"mean rank correlation {self.mean_rank_correlation:.3f} "
            f"over {counted(len(self.queries), 'query', 'queries')}"
        ]
        lines += [f"  {q.overlap_at_k:.2f} overlap, tau {q.rank_correlation:+.2f}: {q.text!r}" for q in self.queries]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def frame(self) -> pl.DataFrame:
        import polars as pl

        return pl.DataFrame(
            [
                {"text": q.text, "overlap_at_k": q.overlap_at_k, "rank_correlation": q.rank_correlation, "rbo": q.rbo}
                for q in self.queries
            ],
            schema={"text": pl.String, "overlap_at_k": pl.Float64, "rank_correlation": pl.Float64, "rbo": pl.Float64},
            orient="row",
        )

    def _repr_html_(self) -> str:
        rows = [(q.text, f"{q.overlap_at_k:.2f}", f"{q.rank_correlation:+.2f}", f"{q.rbo:.3f}") for q in self.queries]
        return (
            f"{STYLE}{BOX}<b>Config comparison</b>: mean overlap@k {self.mean_overlap:.3f}"
            + table(["query", "overlap@k", "rank corr.", "RBO"], rows)
            + "</div>"
        )


def kendall_tau(a: list[str], b: list[str]) -> float:
    """Kendall's tau-b over the union of two top-k lists; an item missing from a list ranks k+1."""
    items = sorted(set(a) | set(b))
    if len(items) < 2:
        return 1.0
    ra = {x: a.index(x) if x in a else len(a) for x in items}
    rb = {x: b.index(x) if x in b else len(b) for x in items}
    concordant = discordant = ties_a = ties_b = 0
    for i, x in enumerate(items):
        for y in items[i + 1 :]:
            da, db = ra[x] - ra[y], rb[x] - rb[y]
            if da == 0 and db == 0:
                continue
            if da == 0:
                ties_a += 1
            elif db == 0:
                ties_b += 1
            elif (da > 0) == (db > 0):
                concordant += 1
            else:
                discordant += 1
    denom = ((concordant + discordant + ties_a) * (concordant + discordant + ties_b)) ** 0.5
    return (concordant - discordant) / denom if denom else 1.0


def compare_configs(
    corpus: str | Path | Iterable[str | Path] | dict[str, str],
    config_a: PipelineConfig,
    config_b: PipelineConfig,
    queries: list[str],
    *,
    embedder: Embedder | None = None,
    workdir: str | Path | None = None,
) -> ConfigComparison:
    """Ingest ``corpus`` under both configs (throwaway projects) and diff every query's top-k."""
    from ragtt.project import Project

    if not isinstance(config_a, PipelineConfig) or not isinstance(config_b, PipelineConfig):
        raise ConfigError("config_a and config_b must be ragtt.PipelineConfig objects")
    if isinstance(queries, str) or not queries:
        raise ConfigError("queries must be a non-empty list of strings")
    with tempfile.TemporaryDirectory(prefix="ragtt-compare-") as tmp:
        root = Path(workdir) if workdir is not None else Path(tmp)
        cache = root / "shared-embeddings.db"
        results: list[list[list[str]]] = []
        computed = reused = 0
        for name, config in (("a", config_a), ("b", config_b)):
            with Project.open(
                root / name, config=config, embedder=embedder, progress=False, embedding_cache=cache
            ) as proj:
                report = proj.ingest_texts(corpus) if isinstance(corpus, dict) else proj.ingest(corpus, prune=False)
                computed += report.embeddings_computed
                reused += report.embeddings_reused
                results.append([proj.query(q, generate=False).chunk_ids for q in queries])
    comparisons = []
    for text, ids_a, ids_b in zip(queries, results[0], results[1], strict=True):
        k = max(len(ids_a), len(ids_b), 1)
        comparisons.append(
            QueryComparison(
                text,
                ids_a,
                ids_b,
                len(set(ids_a) & set(ids_b)) / k,
                kendall_tau(ids_a, ids_b),
                rank_biased_overlap(ids_a, ids_b),
            )
        )
    return ConfigComparison(config_a.to_dict(), config_b.to_dict(), comparisons, computed, reused)
