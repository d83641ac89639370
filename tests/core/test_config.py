from __future__ import annotations

import dataclasses

import pytest

from ragtt import ConfigError, PipelineConfig


def test_defaults_match_the_contract() -> None:
    c = PipelineConfig()
    assert (c.embedder_model, c.model, c.top_k, c.chunk_size, c.chunk_overlap, c.chunk_strategy) == (
        "all-MiniLM-L6-v2",
        None,
        4,
        800,
        120,
        "recursive",
    )
    assert (c.retrieval_mode, c.hybrid_alpha, c.reranker, c.candidate_pool, c.auto_snapshot_every, c.table_name) == (
        "vector",
        0.5,
        "none",
        0,
        0,
        "chunks",
    )


def test_frozen_and_config_id_is_a_stable_content_hash() -> None:
    c = PipelineConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.top_k = 5  # type: ignore[misc]
    assert PipelineConfig().config_id == c.config_id
    assert PipelineConfig(top_k=5).config_id != c.config_id
    # Stable across processes and releases of Python: pinned.
    assert len(c.config_id) == 16 and c.config_id == PipelineConfig.from_dict(c.to_dict()).config_id


@pytest.mark.parametrize(
    ("field", "value", "mentions"),
    [
        ("retrieval_mode", "dense", "'vector', 'bm25', 'hybrid'"),
        ("reranker", "cohere", "lexical-overlap-v1"),
        ("chunk_strategy", "words", "recursive"),
        ("top_k", 0, "must be at least 1"),
        ("hybrid_alpha", 1.5, "[0, 1]"),
        ("chunk_overlap", 900, "chunk_overlap"),
        ("candidate_pool", -1, "candidate_pool"),
        ("table_name", "my table;", "table_name"),
    ],
)
def test_invalid_values_name_the_field_and_the_allowed_values(field: str, value: object, mentions: str) -> None:
    with pytest.raises(ConfigError) as info:
        PipelineConfig(**{field: value})
    assert field in str(info.value) and mentions in str(info.value)


def test_cross_encoder_reranker_takes_a_path() -> None:
    assert PipelineConfig(reranker="cross-encoder/models/ms-marco").reranker.startswith("cross-encoder/")
    with pytest.raises(ConfigError):
        PipelineConfig(reranker="cross-encoder/")
