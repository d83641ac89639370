from __future__ import annotations

import hashlib
import json
import pickle
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pytest

import ragtt
from ragtt.events.cache import EmbeddingCache


class CountingEmbedder:
    def __init__(self) -> None:
        self.inner = ragtt.HashEmbedder(64)
        self.model_id = "counting-64"
        self.dim = 64
        self.calls: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.extend(texts)
        return self.inner.embed(texts)


def test_hash_embedder_is_deterministic_across_processes() -> None:
    code = "import json, ragtt; print(json.dumps(ragtt.HashEmbedder(32).embed(['time travel'])[0].tolist()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    here = ragtt.HashEmbedder(32).embed(["time travel"])[0]
    assert np.array_equal(np.array(json.loads(out), dtype=np.float32), here)
    assert here.dtype == np.float32 and np.isclose(np.linalg.norm(here), 1.0)
    sims = ragtt.HashEmbedder().embed(["refund window days", "refund days", "uptime of the sync service"])
    assert sims[0] @ sims[1] > sims[0] @ sims[2]


def _hashed_one_feature_at_a_time(text: str, dim: int) -> np.ndarray:
    """The HashEmbedder's definition, written out: every word, then each word's character
    trigrams, each adding its signed weight to its blake2b bucket in float32, in order."""
    words = re.findall(r"\w+", unicodedata.normalize("NFKC", text).casefold())
    features = [("w:" + w, 1.0) for w in words]
    for w in words:
        features += [("c:" + f"<{w}>"[i : i + 3], 0.3) for i in range(len(w))]
    out = np.zeros(dim, dtype=np.float32)
    for feature, weight in features:
        value = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
        out[value % dim] += np.float32(weight if value >> 63 else -weight)
    norm = float(np.linalg.norm(out))
    return out / norm if norm else out


def test_hash_embedder_vectors_do_not_depend_on_what_it_saw_before(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = ["Time travel, time travel!", "", "  ", "Straße ﬁle Ünïcode", "x y x y x", "a" * 40, "refund 30 days"]
    for dim in (8, 37, 256):
        expected = np.stack([_hashed_one_feature_at_a_time(t, dim) for t in texts])
        fresh = ragtt.HashEmbedder(dim)
        assert np.array_equal(fresh.embed(texts), expected)  # words first seen
        assert np.array_equal(fresh.embed(texts[::-1])[::-1], expected)  # words remembered
        shipped = pickle.dumps(fresh)  # to a Ray worker, say: the settings, not the memo
        assert len(shipped) < 500 and np.array_equal(pickle.loads(shipped).embed(texts), expected)
    monkeypatch.setattr(ragtt.HashEmbedder, "_WORD_MEMO", 2)  # the memo is emptied as it fills
    assert np.array_equal(
        ragtt.HashEmbedder(37).embed(texts), np.stack([_hashed_one_feature_at_a_time(t, 37) for t in texts])
    )


def test_cache_embeds_each_text_once_ever(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    cache = EmbeddingCache(tmp_path / "e.db")
    vectors, computed, reused = cache.embed(embedder, ["a", "b", "a"])
    assert (computed, reused) == (2, 0) and embedder.calls == ["a", "b"]
    assert np.array_equal(vectors[0], vectors[2])
    cache.close()
    cache = EmbeddingCache(tmp_path / "e.db")  # persisted
    again, computed, reused = cache.embed(embedder, ["b", "c", "a"])
    assert (computed, reused) == (1, 2) and embedder.calls == ["a", "b", "c"]
    assert np.array_equal(again[0], vectors[1])
    cache.close()


def test_project_accepts_any_object_with_the_protocol(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    with ragtt.Project.open(tmp_path / "p", embedder=embedder, progress=False) as proj:
        proj.ingest_texts({"a.md": "alpha beta gamma", "b.md": "delta epsilon"})
        proj.query("alpha", generate=False)
        proj.query("alpha", generate=False)
    assert embedder.calls.count("alpha") == 1


def test_bad_embedder_and_mismatched_embedder_fail_clearly(tmp_path: Path) -> None:
    with pytest.raises(ragtt.ConfigError, match="model_id"):
        ragtt.Project.open(tmp_path / "p", embedder=object())  # type: ignore[arg-type]
    with ragtt.Project.open(tmp_path / "q", embedder=ragtt.HashEmbedder(64), progress=False) as proj:
        proj.ingest_texts({"a.md": "text"})
    with pytest.raises(ragtt.ConfigError, match="reembed"):
        ragtt.Project.open(tmp_path / "q", embedder=ragtt.HashEmbedder(128))
    # Opening without an embedder rebuilds the one the project was built with.
    with ragtt.Project.open(tmp_path / "q", progress=False) as proj:
        assert proj.embedder.model_id == ragtt.HashEmbedder(64).model_id


@pytest.mark.slow
def test_default_embedder_loads_offline() -> None:
    embedder = ragtt.SentenceTransformerEmbedder()
    vectors = embedder.embed(["How many days for a refund?", "Refunds within 30 days", "TLS 1.3 encryption"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


def test_litellm_embedder_adapts_the_response(monkeypatch: pytest.MonkeyPatch) -> None:
    import litellm

    calls: list[dict[str, object]] = []

    def fake_embedding(**kwargs: object) -> object:  # the shape litellm.embedding returns
        calls.append(kwargs)
        texts = kwargs["input"]
        assert isinstance(texts, list)
        return type("Response", (), {"data": [{"embedding": [float(len(t)), 1.0, 0.0]} for t in texts]})()

    monkeypatch.setattr(litellm, "embedding", fake_embedding)
    embedder = ragtt.LiteLLMEmbedder("text-embedding-3-small", api_base="http://127.0.0.1:9")
    vectors = embedder.embed(["ab", "abcd"])
    assert embedder.model_id == "litellm/text-embedding-3-small" and embedder.dim == 3
    assert vectors.dtype == np.float32 and vectors[:, 0].tolist() == [2.0, 4.0]
    assert calls[0]["model"] == "text-embedding-3-small" and calls[0]["api_base"] == "http://127.0.0.1:9"


def test_missing_cross_encoder_folder_fails_when_the_project_opens(tmp_path: Path) -> None:
    config = ragtt.PipelineConfig(reranker=f"cross-encoder/{tmp_path / 'no-such-model'}")
    with pytest.raises(ragtt.ConfigError, match="not a local model folder"):
        ragtt.Project.open(tmp_path / "p", config=config, embedder=ragtt.HashEmbedder())
