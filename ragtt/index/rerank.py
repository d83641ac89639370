"""Rerankers: re-order a candidate pool; the reranker's score becomes the final score."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt.errors import ConfigError

if TYPE_CHECKING:
    from ragtt.index.retrieve import Hit

__all__ = ["rerank", "reranker_version"]


def reranker_version(name: str) -> str:
    """What to record beside the name, so a replay can refuse a different model."""
    if name == "none":
        return ""
    if name == "lexical-overlap-v1":
        return "1"
    path = _cross_encoder_path(name)
    config = path / "config.json"
    from ragtt._hashing import sha256_hex

    return sha256_hex(config.read_bytes())[:16] if config.exists() else "unknown"


def rerank(name: str, query: str, hits: list[Hit]) -> list[Hit]:
    from ragtt.index.retrieve import lexical_overlap

    if name == "lexical-overlap-v1":
        scores = [lexical_overlap(query, h.row["text"]) for h in hits]
    elif name.startswith("cross-encoder/"):
        model = _cross_encoder(str(_cross_encoder_path(name)))
        scores = [float(s) for s in model.predict([(query, h.row["text"]) for h in hits])] if hits else []
    else:
        raise ConfigError(f"unknown reranker {name!r}")
    for hit, score in zip(hits, scores, strict=True):
        hit.scores["rerank"] = score
        hit.score = score
    # Ties keep the first stage's order, which is itself deterministic.
    order = {h.chunk_id: i for i, h in enumerate(hits)}
    return sorted(hits, key=lambda h: (-h.score, order[h.chunk_id]))


def _cross_encoder_path(name: str) -> Path:
    path = Path(name.removeprefix("cross-encoder/")).expanduser()
    if not path.is_dir():
        raise ConfigError(
            f"reranker {name!r}: {path} is not a local model folder; no PyPI package ships "
            "cross-encoder weights, so point it at a folder you downloaded"
        )
    return path


@cache
def _cross_encoder(path: str) -> Any:
    from sentence_transformers import CrossEncoder

    return CrossEncoder(path, device="cpu")
