"""Issue 30.12 on Flask's config settings: bad input to the assertion store is an error that
names what it concerns, never a silent empty answer; and structural chunking one block a chunk."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragtt
from ragtt.errors import ConfigError, ValidationError
from ragtt.index.embedders import HashEmbedder
from ragtt.ingest.chunk import build_chunks
from ragtt.temporal import Assertion, AssertionStore, Citation, Episode, RetrievalQuery
from tests.conftest import corpus

NS = "flask"
RELEASE = "2026-02-18_flask-3.1.3"


class NoVector:
    """An embedder that indexes fine but returns nothing for one text (a failing remote model)."""

    def __init__(self, silent_on: str) -> None:
        self.inner, self.silent_on = HashEmbedder(64), silent_on
        self.dim, self.model_id = 64, "flaky-remote-v1"

    def embed(self, texts: list[str]) -> Any:
        if texts == [self.silent_on]:
            return np.zeros((0, self.dim), dtype=np.float32)  # an empty batch: no vector at all
        return self.inner.embed(texts)


def _settings() -> dict[str, str]:
    text = (corpus("evolving", "flask", RELEASE) / "docs" / "config.rst").read_text("utf-8")
    parts = re.split(r"^\.\. py:data:: (\w+)\s*$", text, flags=re.M)
    return {parts[i]: " ".join(parts[i + 1].split()) for i in range(1, len(parts), 2)}


def _store(path: Path, embedder: Any) -> AssertionStore:
    store = AssertionStore.open(path, embedder=embedder)
    store.init_namespace(NS, 64)
    episode = Episode("flask-3.1.3", NS, 1.0, "2026-02-18T00:00:00+00:00", "release", "Flask 3.1.3 config.rst")
    claims = [
        Assertion(
            name,
            NS,
            "config",
            f"{name}: {text}",
            1.0,
            0.9,
            episode.id,
            (Citation(f"c-{name}", episode.id, name, text[:80]),),
        )
        for name, text in list(_settings().items())[:12]
    ]
    store.write_episode_bundle(episode, claims)
    return store


def test_a_query_the_embedder_gives_no_vector_is_an_error_naming_both(tmp_path: Path) -> None:
    question = "How long are static files cached?"
    with _store(tmp_path / "a.db", NoVector(question)) as store:
        assert store.retrieve(RetrievalQuery(NS, 1.0, "SECRET_KEY")).results  # other queries work
        for strategy in ("hybrid", "vector"):  # hybrid answered from full text alone, silently
            with pytest.raises(ValidationError) as err:
                store.retrieve(RetrievalQuery(NS, 1.0, question, strategy=strategy))
            assert "'flaky-remote-v1' returned no vector" in str(err.value) and repr(question) in str(err.value)
        assert store.retrieve(RetrievalQuery(NS, 1.0, question, strategy="bm25")) is not None  # needs no vector


def test_an_empty_embedding_is_refused_naming_the_assertion_and_the_embedder(tmp_path: Path) -> None:
    with _store(tmp_path / "b.db", HashEmbedder(64)) as store:
        with pytest.raises(ValidationError) as err:
            store.index_assertion("SECRET_KEY", embedding=[])
        message = str(err.value)
        assert "assertion 'SECRET_KEY'" in message and "ragtt-hash-v1-64" in message and "0 numbers" in message
        with pytest.raises(ValidationError, match=r"assertion 'SECRET_KEY'.*a 64-dimension vector"):
            store.index_assertion("SECRET_KEY", embedding=[0.5] * 8)


def test_structural_chunk_size_zero_is_one_chunk_per_block(tmp_path: Path) -> None:
    readme = (corpus("evolving", "flask", RELEASE) / "README.md").read_text("utf-8")
    blocks = [b.strip() for b in re.split(r"\n[ \t]*\n", readme) if b.strip()]
    merged = build_chunks(readme, None, 800, 0, "structural")
    one_each = build_chunks(readme, None, 0, 0, "structural")
    assert len(merged) < len(one_each)
    assert all(readme[c.char_start : c.char_end] == c.text for c in one_each)
    prose = [c.text for c in one_each if "```" not in c.text]
    assert prose and all(re.search(r"\n[ \t]*\n", t) is None for t in prose)  # no chunk holds two blocks
    assert set(prose) <= set(blocks) and "".join(readme.split()) == "".join("".join(c.text for c in one_each).split())
    config = ragtt.PipelineConfig(chunk_strategy="structural", chunk_size=0, chunk_overlap=0)
    with ragtt.Project.open(tmp_path / "p", config=config, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest(corpus("evolving", "flask", RELEASE) / "README.md")
        assert proj.chunks().height == len(one_each)
    for bad in ({"chunk_size": 0}, {"chunk_size": 0, "chunk_strategy": "structural", "chunk_overlap": 40}):
        with pytest.raises(ConfigError, match="one chunk per block"):
            ragtt.PipelineConfig(**bad)
