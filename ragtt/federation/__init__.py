"""Federation: several member projects queried as one, fused by weighted reciprocal-rank
fusion, with a log of its own so every fused run replays exactly.

``federation`` (the ``Federation`` facade), ``runs`` (search, fuse, log one run), ``fusion``
(the formula), ``store`` (the folder, its marker and log), ``results`` (what runs return).
"""

from __future__ import annotations

from ragtt.federation.federation import Federation
from ragtt.federation.results import (
    FederatedChunk,
    FederatedResult,
    FederationDiff,
    FederationInfo,
    MemberDiff,
    MemberRun,
)

__all__ = [
    "FederatedChunk",
    "FederatedResult",
    "Federation",
    "FederationDiff",
    "FederationInfo",
    "MemberDiff",
    "MemberRun",
]
