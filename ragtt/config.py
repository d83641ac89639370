"""``PipelineConfig``: every knob that changes what a query retrieves or answers."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ragtt._hashing import sha256_hex, stable_json
from ragtt.errors import ConfigError

__all__ = ["CHUNK_STRATEGIES", "EMBEDDER_BACKENDS", "INGEST_ENGINES", "RETRIEVAL_MODES", "PipelineConfig"]

RETRIEVAL_MODES = ("vector", "bm25", "hybrid")
CHUNK_STRATEGIES = ("recursive", "markdown", "sentence", "fixed", "structural")
# "onnx" is the default precision's alias (ragtt.index.embedders.DEFAULT_ONNX_PRECISION)
EMBEDDER_BACKENDS = ("onnx", "onnx-int8-v3", "onnx-int8-v2", "onnx-int8", "onnx-fp32", "torch")
INGEST_ENGINES = ("local", "ray")  # where an ingest's per-document work runs (ragtt.ingest.pipeline)
_RERANKERS = ("none", "lexical-overlap-v1", "cross-encoder/<local path>")


@dataclass(frozen=True)
class PipelineConfig:
    """How documents are chunked and embedded, and how queries retrieve and answer.

    >>> PipelineConfig(retrieval_mode="hybrid", top_k=8).config_id  # doctest: +SKIP
    'c2f0…'

    ``ann_min_rows``: maintenance builds an ANN index on the vectors (IVF-PQ) once the table
    holds this many rows (0: never); a search on a version that has it probes the index,
    over-fetches and reranks on exact distances (``ragtt.index.retrieve``), smaller versions
    stay an exact scan.
    """

    embedder_model: str = "all-MiniLM-L6-v2"
    embedder_backend: str = "onnx"
    model: str | None = None
    top_k: int = 4
    chunk_size: int = 800
    chunk_overlap: int = 120
    chunk_strategy: str = "recursive"
    retrieval_mode: str = "vector"
    hybrid_alpha: float = 0.5
    reranker: str = "none"
    candidate_pool: int = 0
    auto_snapshot_every: int = 0
    table_name: str = "chunks"
    ann_min_rows: int = 100_000

    def __post_init__(self) -> None:
        _check_int("top_k", self.top_k, minimum=1)
        _check_int("chunk_size", self.chunk_size, minimum=0)
        _check_int("chunk_overlap", self.chunk_overlap, minimum=0)
        if self.chunk_size == 0:  # one chunk per block: the structural strategy's, with nothing to overlap
            if self.chunk_strategy != "structural" or self.chunk_overlap != 0:
                raise ConfigError(
                    "chunk_size=0 means one chunk per block, which only chunk_strategy='structural' offers, "
                    f"with chunk_overlap=0; got chunk_strategy={self.chunk_strategy!r}, "
                    f"chunk_overlap={self.chunk_overlap}"
                )
        elif self.chunk_size < 16:
            raise ConfigError(
                f"chunk_size must be at least 16 (or 0: one chunk per block, structural only); got {self.chunk_size}"
            )
        elif self.chunk_overlap >= self.chunk_size:
            raise ConfigError(
                f"chunk_overlap must be smaller than chunk_size; got chunk_overlap="
                f"{self.chunk_overlap} with chunk_size={self.chunk_size}"
            )
        _check_choice("chunk_strategy", self.chunk_strategy, CHUNK_STRATEGIES)
        _check_choice("retrieval_mode", self.retrieval_mode, RETRIEVAL_MODES)
        if isinstance(self.hybrid_alpha, bool) or not isinstance(self.hybrid_alpha, int | float):
            raise ConfigError(f"hybrid_alpha must be a number in [0, 1]; got {self.hybrid_alpha!r}")
        if not 0.0 <= float(self.hybrid_alpha) <= 1.0:
            raise ConfigError(f"hybrid_alpha must be in [0, 1]; got {self.hybrid_alpha!r}")
        if self.reranker not in ("none", "lexical-overlap-v1") and not (
            isinstance(self.reranker, str)
            and self.reranker.startswith("cross-encoder/")
            and len(self.reranker) > len("cross-encoder/")
        ):
            raise ConfigError(
                f"reranker must be one of {', '.join(repr(r) for r in _RERANKERS)}; got {self.reranker!r}"
            )
        _check_int("candidate_pool", self.candidate_pool, minimum=0)
        _check_int("auto_snapshot_every", self.auto_snapshot_every, minimum=0)
        _check_int("ann_min_rows", self.ann_min_rows, minimum=0)
        if 0 < self.ann_min_rows < 256:
            raise ConfigError(
                f"ann_min_rows must be 0 (never) or at least 256 (PQ trains on 256 rows); got {self.ann_min_rows}"
            )
        if not isinstance(self.embedder_model, str) or not self.embedder_model:
            raise ConfigError(f"embedder_model must be a non-empty string; got {self.embedder_model!r}")
        _check_choice("embedder_backend", self.embedder_backend, EMBEDDER_BACKENDS)
        if self.model is not None and (not isinstance(self.model, str) or not self.model):
            raise ConfigError(f"model must be None (offline extractive) or a litellm model name; got {self.model!r}")
        if not isinstance(self.table_name, str) or not self.table_name.replace("_", "").isalnum():
            raise ConfigError(f"table_name must be letters, digits and underscores; got {self.table_name!r}")

    @property
    def config_id(self) -> str:
        """Content hash of the config: equal configs share it across processes and machines."""
        return sha256_hex(stable_json(self.to_dict()))[:16]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PipelineConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown PipelineConfig field(s) {unknown}; known fields: {sorted(known)}")
        return cls(**data)

    def replace(self, **changes: Any) -> PipelineConfig:
        known = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise TypeError(f"unknown PipelineConfig field(s) {unknown}; known fields: {sorted(known)}")
        return dataclasses.replace(self, **changes)

    def resolved_candidate_pool(self, top_k: int) -> int:
        """The candidate pool actually searched: ``candidate_pool``, or auto = max(4*k, 20)."""
        return max(self.candidate_pool, top_k) if self.candidate_pool else max(4 * top_k, 20)


# Past these a search is no longer a retrieval (and the index's 64-bit limits overflow).
MAX_TOP_K = 10_000
_MAX = {"top_k": MAX_TOP_K, "candidate_pool": 10 * MAX_TOP_K, "chunk_size": 1_000_000, "chunk_overlap": 999_999}


def _check_int(name: str, value: object, *, minimum: int) -> None:
    maximum = _MAX.get(name, 2**31 - 1)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{name} must be a whole number from {minimum} to {maximum}; got {value!r}")
    if value < minimum:
        raise ConfigError(f"{name} must be at least {minimum}; got {value!r}")
    if value > maximum:
        raise ConfigError(f"{name} must be at most {maximum}; got {value!r}")


def _check_choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
