"""Scorers: turn the vector and full-text evidence of each candidate into one score.

Higher is better everywhere. A custom scorer implements ``score_batch(candidates,
context) -> list[float]`` (one score per candidate, same order); it may also implement
``explain_batch`` to add its own entries to each result's ``score_components``.
Recency is opt-in (``recency_weight=0`` by default) and measured from the anchor.

>>> store.retrieve(RetrievalQuery("kb", anchor, "refund", ...))  # doctest: +SKIP
>>> AssertionStore.open(path, scorer=LinearScorer(vector_weight=0.5, bm25_weight=0.5))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ragtt.errors import ConfigError

__all__ = ["Candidate", "LinearScorer", "RRFScorer", "Scorer", "ScoringContext"]


@dataclass(frozen=True)
class Candidate:
    """One assertion that either side found, with its evidence (None where a side missed it)."""

    id: str
    valid_from: float
    valid_until: float | None
    confidence: float
    type: str
    entity_type: str | None
    vector_similarity: float | None = None
    vector_rank: int | None = None
    bm25: float | None = None
    bm25_rank: int | None = None


@dataclass(frozen=True)
class ScoringContext:
    """What a scorer may know beyond the candidates."""

    namespace: str
    anchor: float
    query_text: str | None
    strategy: str
    position_range: tuple[float, float] | None


@runtime_checkable
class Scorer(Protocol):
    def score_batch(self, candidates: Sequence[Candidate], context: ScoringContext) -> list[float]: ...


def _recency(candidate: Candidate, context: ScoringContext, half_life: float | None) -> float:
    """1 at the anchor, halving every ``half_life`` before it (default: a tenth of the history)."""
    if half_life is None:
        lo, hi = context.position_range or (candidate.valid_from, context.anchor)
        half_life = max((max(hi, context.anchor) - lo) / 10.0, 1e-9)
    age = max(context.anchor - candidate.valid_from, 0.0)
    return float(0.5 ** (age / half_life))


def _check_weights(**weights: float) -> None:
    for name, value in weights.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ConfigError(f"{name} must be a non-negative number; got {value!r}")


class RRFScorer:
    """Reciprocal rank fusion: sum over sides of ``weight / (k + rank)`` (ranks from 1)."""

    def __init__(
        self,
        k: int = 60,
        *,
        vector_weight: float = 1.0,
        bm25_weight: float = 1.0,
        recency_weight: float = 0.0,
        recency_half_life: float | None = None,
    ) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ConfigError(f"RRF k must be a positive int; got {k!r}")
        _check_weights(vector_weight=vector_weight, bm25_weight=bm25_weight, recency_weight=recency_weight)
        self.k = k
        self.vector_weight = vector_weight
        self.bm25_weight = bm25_weight
        self.recency_weight = recency_weight
        self.recency_half_life = recency_half_life

    def explain_batch(self, candidates: Sequence[Candidate], context: ScoringContext) -> list[dict[str, float]]:
        out = []
        for c in candidates:
            parts: dict[str, float] = {}
            if c.vector_rank is not None:
                parts["rrf_vector"] = self.vector_weight / (self.k + c.vector_rank)
            if c.bm25_rank is not None:
                parts["rrf_bm25"] = self.bm25_weight / (self.k + c.bm25_rank)
            if self.recency_weight:
                parts["recency"] = self.recency_weight * _recency(c, context, self.recency_half_life)
            out.append(parts)
        return out

    def score_batch(self, candidates: Sequence[Candidate], context: ScoringContext) -> list[float]:
        return [sum(parts.values()) for parts in self.explain_batch(candidates, context)]

    def __repr__(self) -> str:
        return f"RRFScorer(k={self.k}, recency_weight={self.recency_weight})"


class LinearScorer:
    """Weighted sum of the cosine similarity (mapped to [0, 1]) and min-max-normalised BM25."""

    def __init__(
        self,
        *,
        vector_weight: float = 0.7,
        bm25_weight: float = 0.3,
        recency_weight: float = 0.0,
        recency_half_life: float | None = None,
    ) -> None:
        _check_weights(vector_weight=vector_weight, bm25_weight=bm25_weight, recency_weight=recency_weight)
        self.vector_weight = vector_weight
        self.bm25_weight = bm25_weight
        self.recency_weight = recency_weight
        self.recency_half_life = recency_half_life

    def explain_batch(self, candidates: Sequence[Candidate], context: ScoringContext) -> list[dict[str, float]]:
        bm25 = [c.bm25 for c in candidates if c.bm25 is not None]
        lo, hi = (min(bm25), max(bm25)) if bm25 else (0.0, 0.0)
        out = []
        for c in candidates:
            parts: dict[str, float] = {}
            if c.vector_similarity is not None:
                parts["linear_vector"] = self.vector_weight * (c.vector_similarity + 1.0) / 2.0
            if c.bm25 is not None:
                parts["linear_bm25"] = self.bm25_weight * ((c.bm25 - lo) / (hi - lo) if hi > lo else 1.0)
            if self.recency_weight:
                parts["recency"] = self.recency_weight * _recency(c, context, self.recency_half_life)
            out.append(parts)
        return out

    def score_batch(self, candidates: Sequence[Candidate], context: ScoringContext) -> list[float]:
        return [sum(parts.values()) for parts in self.explain_batch(candidates, context)]

    def __repr__(self) -> str:
        return (
            f"LinearScorer(vector_weight={self.vector_weight}, bm25_weight={self.bm25_weight}, "
            f"recency_weight={self.recency_weight})"
        )
