"""A judge's passing failures (rate limit, timeout, 5xx, lost connection) are tried again after
the wait the server asks for, else a doubling wait with jitter, each wait capped, and one that
lasts is a ``ServiceError`` (exit 1), not bad input; a model litellm cannot call at all stays a
``ConfigError`` (exit 2); a failure with no answer from the model behind it (litellm's wrapping
of a bug or of a reply it could not read) is a ``ServiceError`` at once. Every failure is raised
by litellm itself: from ``mock_response``, or from a real chat-completions server on loopback
that the real OpenAI client talks to (no network). No test sleeps: the judge's ``sleep`` is
recorded, and litellm's own retries, which would sleep, are off."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import httpx
import litellm
import pytest

import ragtt
from ragtt.cli import main
from ragtt.evaluation import judge as judge_module
from ragtt.evaluation.judge import MAX_WAIT_S
from ragtt.events import types as ev
from tests.evaluation.test_sample_matrix import ROWS, sample_project

MODEL = "openai/gpt-4o-mini"
COMPLETION = litellm.completion  # litellm's own, before any test wraps it
VERDICT = '{"faithfulness": 0.75, "correctness": 0.5}'
SCORES = {"faithfulness": 0.75, "correctness": 0.5}


def rate_limit() -> Exception:
    return litellm.RateLimitError(message="slow down", llm_provider="openai", model=MODEL)


def asking(retry_after: str) -> Callable[[], Exception]:
    """A rate limit whose answer carries ``Retry-After: retry_after``."""
    answer = httpx.Response(429, headers={"retry-after": retry_after}, request=httpx.Request("POST", "http://x"))
    return lambda: litellm.RateLimitError(message="slow down", llm_provider="openai", model=MODEL, response=answer)


PASSING: dict[str, Callable[[], Exception]] = {
    "rate limit": rate_limit,
    "timeout": lambda: litellm.Timeout(message="timed out", model=MODEL, llm_provider="openai"),
    "503": lambda: litellm.ServiceUnavailableError(message="overloaded", llm_provider="openai", model=MODEL),
}
# What litellm makes of an exception it does not know (a bug, a reply it could not read): a
# bare 500 or an APIConnectionError with no server's answer and no lost connection behind it.
BROKEN: dict[str, Callable[[], Exception]] = {
    "other exception": lambda: RuntimeError(
        "a bug"
    ),  # litellm makes it a 500 MockException, then an InternalServerError
    "bare 500": lambda: litellm.InternalServerError(message="oops", llm_provider="openai", model=MODEL),
    "wrapped error": lambda: litellm.APIConnectionError(
        message="KeyError 'choices'", llm_provider="openai", model=MODEL
    ),
}
LASTING: dict[str, Callable[[], Exception]] = {
    "refused key": lambda: litellm.AuthenticationError(message="bad key", llm_provider="openai", model=MODEL),
    "unknown model": lambda: litellm.NotFoundError(message="no such model", model=MODEL, llm_provider="openai"),
}


class Calls:
    """litellm's own ``completion``, answering each call with the next of ``replies`` (an
    exception it raises, or the reply's text) through ``mock_response``; the last one repeats.
    The judge's waits are recorded, not slept; its jitter is at its shortest (none), or its longest."""

    def __init__(
        self, monkeypatch: pytest.MonkeyPatch, replies: list[Callable[[], Exception] | str], longest: bool = False
    ) -> None:
        self.replies = replies
        self.models: list[str] = []
        self.kwargs: list[dict[str, Any]] = []
        self.waits: list[float] = []

        def completion(**kwargs: Any) -> Any:
            self.models.append(kwargs["model"])
            self.kwargs.append(kwargs)
            reply = self.replies[min(len(self.models), len(self.replies)) - 1]
            return COMPLETION(**kwargs, mock_response=reply if isinstance(reply, str) else reply())

        monkeypatch.setattr(litellm, "completion", completion)
        monkeypatch.setattr(judge_module, "sleep", self.waits.append)
        monkeypatch.setattr(judge_module, "uniform", lambda low, high: high if longest else low)


def judged_project(tmp_path: Path) -> tuple[Path, Path]:
    """The sample project, and a question to judge in its folder (where a server reads question sets)."""
    folder = tmp_path / "proj"
    sample_project(folder).close()
    questions = folder / "qs.jsonl"
    questions.write_text('{"question": "How long is the refund window?", "reference": "30 days"}\n', encoding="utf-8")
    return folder, questions


def verdict(judge: ragtt.LiteLLMJudge) -> judge_module.Verdict:
    return judge.verdict("Which Python?", "3.9", [], "3.9 or later", ["faithfulness", "correctness"])


@pytest.mark.parametrize("error", PASSING.values(), ids=PASSING.keys())
def test_a_passing_failure_is_tried_again_after_a_doubling_wait(
    error: Callable[[], Exception], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = Calls(monkeypatch, [error, error, VERDICT])
    got = verdict(ragtt.LiteLLMJudge(MODEL, backoff_s=1))
    assert got.scores == SCORES
    assert (len(calls.models), calls.waits) == (3, [1.0, 2.0])


def test_each_wait_is_jittered_and_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = Calls(monkeypatch, [rate_limit], longest=True)
    with pytest.raises(ragtt.ServiceError, match="still failed after 6 tries"):
        verdict(ragtt.LiteLLMJudge(MODEL, retries=5, backoff_s=10))
    assert calls.waits == [12.5, 25.0, 50.0, MAX_WAIT_S, MAX_WAIT_S]


def test_the_default_waits_outlast_a_per_minute_rate_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = Calls(monkeypatch, [rate_limit])  # the jitter at its shortest
    with pytest.raises(ragtt.ServiceError):
        verdict(ragtt.LiteLLMJudge(MODEL))
    assert sum(calls.waits) > 60 and max(calls.waits) <= MAX_WAIT_S


@pytest.mark.parametrize(
    ("retry_after", "wait"),
    [("7", 7.0), ("0.5", 0.5), ("3600", MAX_WAIT_S), ("-3", 0.0), ("soon", 4.0)],
    ids=["seconds", "fraction", "capped", "negative", "unreadable: the backoff"],
)
def test_a_retry_after_is_honoured_up_to_the_cap(
    retry_after: str, wait: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = Calls(monkeypatch, [asking(retry_after), VERDICT])
    assert verdict(ragtt.LiteLLMJudge(MODEL, backoff_s=4)).scores == SCORES
    assert calls.waits == [wait]


def test_a_retry_after_may_be_an_http_date(monkeypatch: pytest.MonkeyPatch) -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    earlier = format_datetime(datetime.now(UTC) - timedelta(seconds=30), usegmt=True)
    calls = Calls(monkeypatch, [asking(later), asking(earlier), VERDICT])
    assert verdict(ragtt.LiteLLMJudge(MODEL)).scores == SCORES
    (until_later, until_earlier) = calls.waits
    assert 25 < until_later <= 30 and until_earlier == 0.0


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


@pytest.mark.parametrize("error", BROKEN.values(), ids=BROKEN.keys())
def test_a_failure_with_no_answer_behind_it_is_a_service_error_at_once(
    error: Callable[[], Exception], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = Calls(monkeypatch, [error, VERDICT])
    with pytest.raises(ragtt.ServiceError, match=f"the judge {MODEL!r} failed with no answer from the model") as raised:
        verdict(ragtt.LiteLLMJudge(MODEL))
    assert not isinstance(raised.value, ragtt.ConfigError)
    assert (len(calls.models), calls.waits) == (1, [])


@pytest.mark.parametrize("error", LASTING.values(), ids=LASTING.keys())
def test_a_model_that_cannot_be_called_is_a_config_error_at_once(
    error: Callable[[], Exception], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = Calls(monkeypatch, [error])
    with pytest.raises(ragtt.ConfigError, match=f"the judge {MODEL!r} cannot be called"):
        verdict(ragtt.LiteLLMJudge(MODEL))
    assert (len(calls.models), calls.waits) == (1, [])


def test_litellms_own_retries_are_off_unless_given(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = Calls(monkeypatch, [VERDICT])
    verdict(ragtt.LiteLLMJudge(MODEL))
    verdict(ragtt.LiteLLMJudge(MODEL, max_retries=4))
    verdict(ragtt.LiteLLMJudge(MODEL, num_retries=1))
    assert [(k.get("max_retries"), k.get("num_retries")) for k in calls.kwargs] == [(0, None), (4, None), (None, 1)]


def test_bad_arguments_are_config_errors_and_retries_are_no_part_of_the_identity() -> None:
    identity = ragtt.LiteLLMJudge(MODEL).identity
    assert ragtt.LiteLLMJudge(MODEL, retries=0, backoff_s=9).identity == identity
    assert ragtt.LiteLLMJudge(MODEL, max_retries=3, num_retries=2).identity == identity
    assert ragtt.LiteLLMJudge(MODEL, temperature=0.5).identity != identity
    for bad in ({"retries": -1}, {"retries": 1.5}, {"backoff_s": float("nan")}, {"backoff_s": True}):
        with pytest.raises(ragtt.ConfigError, match=next(iter(bad))):
            ragtt.LiteLLMJudge(MODEL, **bad)
    for model in (None, "", 3):
        with pytest.raises(ragtt.ConfigError, match="a judge's model is a litellm model name"):
            ragtt.LiteLLMJudge(model)  # type: ignore[arg-type]


def test_a_judge_that_is_no_model_name_is_a_config_error(tmp_path: Path) -> None:
    with sample_project(tmp_path / "proj") as proj, pytest.raises(ragtt.ConfigError, match="judge must be a litellm"):
        proj.evaluate(ROWS, mode="bm25", judge=3)


# -- a real chat-completions server on loopback, through litellm and the OpenAI client --------


class Server:
    """A chat-completions endpoint on 127.0.0.1 answering each request with the next of
    ``replies``: (status, headers, body), or "drop" to close the connection unanswered. The last
    one repeats; ``requests`` counts what reached it."""

    def __init__(self) -> None:
        self.replies: list[tuple[int, dict[str, str], str] | str] = []
        self.requests = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                outer.requests += 1
                reply = outer.replies[min(outer.requests, len(outer.replies)) - 1]
                if reply == "drop":
                    self.close_connection = True
                    self.connection.close()
                    return
                status, headers, body = reply
                self.send_response(status)
                for name, value in {"content-type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(body.encode())))
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args: object) -> None:
                pass

        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.http.server_address[1]}/v1"

    def judge(self, **kwargs: Any) -> ragtt.LiteLLMJudge:
        return ragtt.LiteLLMJudge(MODEL, api_base=self.base, api_key="sk-test", **kwargs)


def error(status: int, **headers: str) -> tuple[int, dict[str, str], str]:
    return status, headers, json.dumps({"error": {"message": f"status {status}", "type": "test"}})


ANSWER = (
    200,
    {},
    json.dumps(
        {
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": VERDICT}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    ),
)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    found = Server()
    thread = threading.Thread(target=found.http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield found
    found.http.shutdown()
    found.http.server_close()
    thread.join(timeout=10)


def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    recorded: list[float] = []
    monkeypatch.setattr(judge_module, "sleep", recorded.append)
    monkeypatch.setattr(judge_module, "uniform", lambda low, high: low)
    return recorded


def test_a_servers_rate_limit_is_one_request_per_try_and_its_retry_after_is_honoured(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The OpenAI client would try each call three times on its own (and sleep between): with
    the judge's ``max_retries=0`` each of the judge's tries is one request."""
    slept = waits(monkeypatch)
    server.replies = [error(429, **{"retry-after": "7"}), error(429, **{"retry-after": "3600"}), ANSWER]
    assert verdict(server.judge()).scores == SCORES
    assert (server.requests, slept) == (3, [7.0, MAX_WAIT_S])
    server.requests, server.replies = 0, [error(429, **{"retry-after-ms": "1500", "retry-after": "2"}), ANSWER]
    assert verdict(server.judge()).scores == SCORES
    assert (server.requests, slept[2:]) == (2, [1.5])


@pytest.mark.parametrize(
    "failure",
    [error(500), error(503), error(529), "drop"],
    ids=["500", "503", "529 overloaded", "connection dropped"],
)
def test_a_servers_passing_failure_is_tried_again(
    failure: tuple[int, dict[str, str], str] | str, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept = waits(monkeypatch)
    server.replies = [failure, failure, ANSWER]
    assert verdict(server.judge(backoff_s=1)).scores == SCORES
    assert (server.requests, slept) == (3, [1.0, 2.0])


def test_a_connection_refused_is_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    slept = waits(monkeypatch)
    judge = ragtt.LiteLLMJudge(MODEL, api_base="http://127.0.0.1:9/v1", api_key="sk-test", retries=2, backoff_s=1)
    with pytest.raises(ragtt.ServiceError, match="still failed after 3 tries"):
        verdict(judge)
    assert slept == [1.0, 2.0]


@pytest.mark.parametrize(
    "reply",
    [(200, {}, "not json at all"), (200, {}, '{"choices": 5}')],
    ids=["not json", "not a completion"],
)
def test_a_reply_that_cannot_be_read_is_not_tried_again(
    reply: tuple[int, dict[str, str], str], server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """litellm calls it an InternalServerError (a 500), as it does a real server error: the
    chain behind it tells them apart."""
    slept = waits(monkeypatch)
    server.replies = [reply, ANSWER]
    with pytest.raises(ragtt.ServiceError, match="failed with no answer from the model"):
        verdict(server.judge())
    assert (server.requests, slept) == (1, [])


@pytest.mark.parametrize("status", [400, 401, 404])
def test_a_servers_refusal_is_a_config_error_after_one_request(
    status: int, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept = waits(monkeypatch)
    server.replies = [error(status, **{"retry-after": "1"})]
    with pytest.raises(ragtt.ConfigError, match=f"the judge {MODEL!r} cannot be called"):
        verdict(server.judge())
    assert (server.requests, slept) == (1, [])


def test_a_missing_key_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The OpenAI client refuses to send without a key; litellm calls that a 500."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    slept = waits(monkeypatch)
    with pytest.raises(ragtt.ConfigError, match="cannot be called"):
        verdict(ragtt.LiteLLMJudge(MODEL, api_base="http://127.0.0.1:9/v1"))
    assert slept == []


def test_a_given_max_retries_is_litellms_to_use(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    slept = waits(monkeypatch)
    server.replies = [error(429, **{"retry-after-ms": "1"})]  # the OpenAI client's own wait: 1 ms
    with pytest.raises(ragtt.ServiceError, match="still failed after 1 try"):
        verdict(server.judge(retries=0, max_retries=2))
    assert (server.requests, slept) == (3, [])


# -- through an evaluation, the CLI and REST --------------------------------------------------


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
    assert err.count("\n") == 1 and f"the judge {MODEL!r} still failed after 6 tries" in err
    assert len(calls.models) == 6 and calls.waits == [2.0, 4.0, 8.0, 16.0, 32.0]


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
