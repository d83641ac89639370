"""A judge's verdict leaves the host's environment as it found it (litellm is imported with
its cost map read locally, in a scoped environment)."""

from __future__ import annotations

import os

import pytest

from ragtt.evaluation.judge import LiteLLMJudge


def test_a_judge_verdict_leaves_the_environment_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
    judge = LiteLLMJudge("gpt-4o-mini", mock_response='{"faithfulness": 1, "relevance": 0.5}')
    verdict = judge.verdict("Which Python?", "3.9", [], None, ["faithfulness", "relevance"])
    assert verdict.raw.startswith("{") and "LITELLM_LOCAL_MODEL_COST_MAP" not in os.environ
