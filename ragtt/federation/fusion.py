"""Weighted reciprocal-rank fusion of the members' ranked lists, duplicates merged by text.

A text's fused score is ``sum over members m of w_m / (k + r_m)``, where ``r_m`` is the best
rank (from 1) at which member ``m`` returned a chunk with that text, ``w_m`` the member's
weight and ``k`` = ``RRF_K`` (60). Chunks with the same text (SHA-256 of it) are one fused
item, named by its best-ranked copy; every copy is kept in ``contributions``. Ties are broken
by the best rank, then the member's place in the federation, then the chunk id, so the order
is the same on every run. The sums are taken in member order: a replay's scores are the same
floats, not merely close ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragtt._hashing import sha256_hex
from ragtt.errors import ConfigError
from ragtt.index.retrieve import RRF_K

__all__ = ["FUSIONS", "Contribution", "Fused", "check_fusion", "check_weights", "fuse"]

FUSIONS = ("rrf",)


@dataclass(frozen=True)
class Contribution:
    """One member's chunk merged into a fused item: its rank and score in that member's list."""

    member: str
    chunk_id: str
    source: str
    rank: int
    score: float


@dataclass
class Fused:
    text_hash: str
    score: float = 0.0
    contributions: list[Contribution] = field(default_factory=list)

    @property
    def best(self) -> Contribution:
        return self.contributions[0]


def check_fusion(fusion: object) -> str:
    if fusion not in FUSIONS:
        raise ConfigError(f"fusion must be one of {', '.join(FUSIONS)} (reciprocal-rank fusion); got {fusion!r}")
    return str(fusion)


def check_weights(weights: Mapping[str, Any] | None, members: Sequence[str]) -> dict[str, float]:
    """Every member's weight (1.0 unless given): a finite number above zero per known member."""
    if weights is None:
        return dict.fromkeys(members, 1.0)
    if not isinstance(weights, Mapping):
        raise ConfigError(f"weights must be a dict of member name -> number; got {type(weights).__name__}")
    unknown = sorted(set(weights) - set(members))
    if unknown:
        raise ConfigError(f"weights name {unknown[0]!r}, which is not a member; the members are {list(members)}")
    out = {}
    for name in members:
        value = weights.get(name, 1.0)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
            raise ConfigError(f"the weight of member {name!r} must be a finite number above 0; got {value!r}")
        out[name] = float(value)
    return out


def fuse(
    lists: Sequence[tuple[str, Sequence[Any]]], weights: Mapping[str, float], top_k: int, k: int = RRF_K
) -> list[Fused]:
    """The fused top ``top_k`` of ``lists`` ((member, its chunks ranked from 1), in member
    order); chunks need ``chunk_id``, ``source``, ``text``, ``rank`` and ``score``."""
    fused: dict[str, Fused] = {}
    places = {member: place for place, (member, _) in enumerate(lists)}
    for member, chunks in lists:
        counted: set[str] = set()
        for chunk in chunks:
            key = sha256_hex(chunk.text)
            item = fused.setdefault(key, Fused(key))
            item.contributions.append(Contribution(member, chunk.chunk_id, chunk.source, chunk.rank, chunk.score))
            if key not in counted:  # a member counts once per text, at its best rank
                counted.add(key)
                item.score += weights[member] / (k + chunk.rank)
    for item in fused.values():
        item.contributions.sort(key=lambda c: (c.rank, places[c.member], c.chunk_id))
    ranked = sorted(fused.values(), key=lambda f: (-f.score, f.best.rank, places[f.best.member], f.best.chunk_id))
    return ranked[:top_k]
