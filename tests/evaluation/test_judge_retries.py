"""A judge's passing failures (rate limit, timeout, 5xx, lost connection) are tried again with
a doubling wait, and one that lasts is a ``ServiceError`` (exit 1), not bad input; a model
litellm cannot call at all stays a ``ConfigError`` (exit 2). Every failure is raised by
litellm itself, from ``mock_response``: no network."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import litellm
import pytest

import ragtt
from ragtt.cli import main
from ragtt.evaluation import judge as judge_module
from ragtt.events import types as ev
from tests.evaluation.test_sample_matrix import ROWS, sample_project

MODEL = "openai/gpt-4o-mini"
COMPLETION = litellm.completion  # litellm's own, before any test wraps it
VERDICT = '{"faithfulness": 0.75, "correctness": 0.5}'


def rate_limit() -> Exception:
    return litellm.RateLimitError(message="slow down", llm_provider="openai", model=MODEL)


TRANSIENT: dict[str, Callable[[], Exception]] = {
    "rate limit": rate_limit,
    "timeout": lambda: litellm.Timeout(message="timed out", model=MODEL, llm_provider="openai"),
    "connection": lambda: litellm.APIConnectionError(message="connection reset", llm_provider="openai", model=MODEL),
    "500": lambda: litellm.InternalServerError(message="oops", llm_provider="openai", model=MODEL),
    "503": lambda: litellm.ServiceUnavailableError(message="overloaded", llm_provider="openai", model=MODEL),
    "other exception": lambda: RuntimeError("upstream went away"),  # litellm makes it a 500 MockException
}
LASTING: dict[str, Callable[[], Exception]] = {
    "refused key": lambda: litellm.AuthenticationError(message="bad key", llm_provider="openai", model=MODEL),
    "unknown model": lambda: litellm.NotFoundError(message="no such model", model=MODEL, llm_provider="openai"),
}


class Calls:
    """litellm's own ``completion``, answering each call with the next of ``replies`` (an
    exception it raises, or the reply's text) through ``mock_response``; the last one repeats."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, replies: list[Callable[[], Exception] | str]) -> None:
        self.replies = replies
        self.models: list[str] = []
        self.waits: list[float] = []

        def completion(**kwargs: Any) -> Any:
            self.models.append(kwargs["model"])
            reply = self.replies[min(len(self.models), len(self.replies)) - 1]
            return COMPLETION(**kwargs, mock_response=reply if isinstance(reply, str) else reply())

        monkeypatch.setattr(litellm, "completion", completion)
        monkeypatch.setattr(judge_module, "sleep", self.waits.append)


def judged_project(tmp_path: Path) -> tuple[Path, Path]:
    """The sample project, and a question to judge in its folder (where a server reads question sets)."""
    folder = tmp_path / "proj"
    sample_project(folder).close()
    questions = folder / "qs.jsonl"
    questions.write_text('{"question": "How long is the refund window?", "reference": "30 days"}\n', encoding="utf-8")
    return folder, questions


def verdict(judge: ragtt.LiteLLMJudge) -> judge_module.Verdict:
    return judge.verdict("Which Python?", "3.9", [], "3.9 or later", ["faithfulness", "correctness"])


@pytest.mark.parametrize("error", TRANSIENT.values(), ids=TRANSIENT.keys())
def test_a_passing_failure_is_tried_again_after_a_doubling_wait(
    error: Callable[[], Exception], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = Calls(monkeypatch, [error, error, VERDICT])
    got = verdict(ragtt.LiteLLMJudge(MODEL))
    assert got.scores == {"faithfulness": 0.75, "correctness": 0.5}
    assert (len(calls.models), calls.waits) == (3, [1.0, 2.0])


def test_a_failure_that_lasts_is_a_service_error_naming_the_model_after_bounded_tries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = Calls(monkeypatch, [rate_limit])
    with pytest.raises(ragtt.ServiceError) as raised:
        verdict(ragtt.LiteLLMJudge(MODEL, retries=2, backoff_s=0.5))
    assert not isinstance(raised.value, ragtt.ConfigError)
    message = str(raised.value)
    assert message.startswith(f"the judge {MODEL!r} still failed after 3 tries: litellm.RateLimitError")
    assert "kept in the log" in message and "evaluating again resumes" in message
    assert (len(calls.models), calls.waits) == (3, [0.5, 1.0])


@pytest.mark.parametrize("error", LASTING.values(), ids=LASTING.keys())
def test_a_model_that_cannot_be_called_is_a_config_error_at_once(
    error: Callable[[], Exception], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = Calls(monkeypatch, [error])
    with pytest.raises(ragtt.ConfigError, match=f"the judge {MODEL!r} cannot be called"):
        verdict(ragtt.LiteLLMJudge(MODEL))
    assert (len(calls.models), calls.waits) == (1, [])


def test_retries_are_no_part_of_the_judges_identity() -> None:
    assert ragtt.LiteLLMJudge(MODEL, retries=0).identity == ragtt.LiteLLMJudge(MODEL).identity
    with pytest.raises(ragtt.ConfigError, match="retries"):
        ragtt.LiteLLMJudge(MODEL, retries=-1)
    with pytest.raises(ragtt.ConfigError, match="backoff_s"):
        ragtt.LiteLLMJudge(MODEL, backoff_s=float("nan"))


def test_an_evaluation_stopped_by_a_lasting_failure_keeps_its_versions_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with sample_project(tmp_path / "proj") as proj:
        # the first version's two cells are judged, then the model keeps refusing
        calls = Calls(monkeypatch, [VERDICT, VERDICT, rate_limit])
        with pytest.raises(ragtt.ServiceError, match="still failed after 2 tries"):
            proj.evaluate(ROWS, mode="bm25", judge=ragtt.LiteLLMJudge(MODEL, retries=1))
        assert len(calls.models) == 4
        assert len(proj.events.query(types=ev.EVALUATION_CELLS)) == 1
        assert len(proj.events.query(types=ev.JUDGE_VERDICT)) == 2
        calls = Calls(monkeypatch, [VERDICT])
        matrix = proj.evaluate(ROWS, mode="bm25", judge=ragtt.LiteLLMJudge(MODEL))
        assert (matrix.computed_versions, matrix.reused_versions) == (2, 1)
        assert len(calls.models) == 4  # two versions x two questions: the first version is not judged again
        assert matrix.cells["faithfulness"] == [[0.75] * 3, [0.75] * 3]


def test_the_cli_exits_1_with_one_line_when_the_judge_keeps_failing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, questions = judged_project(tmp_path)
    calls = Calls(monkeypatch, [rate_limit])
    args = ["--project", str(folder), "--embedder", "hash", "eval", str(questions), "--judge", MODEL, "--mode", "bm25"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"the judge {MODEL!r} still failed after 4 tries" in err
    assert len(calls.models) == 4 and calls.waits == [1.0, 2.0, 4.0]


def test_rest_answers_503_naming_the_model_when_the_judge_keeps_failing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fastapi.testclient import TestClient

    from ragtt.serve import create_app

    folder, questions = judged_project(tmp_path)
    Calls(monkeypatch, [rate_limit])
    with TestClient(create_app(folder, embedder=ragtt.HashEmbedder())) as client:
        body = {"dataset": str(questions), "at": ["latest"], "judge": MODEL, "mode": "bm25"}
        answer = client.post("/evaluate", json=body)
    assert answer.status_code == 503, answer.text
    assert answer.json()["error"] == "ServiceError" and MODEL in answer.json()["detail"]
