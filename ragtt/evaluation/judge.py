"""An LLM judge for ``faithfulness`` and ``correctness``, through litellm (imported on first use).

One call per cell: the question, the retrieved chunks, the answer and the reference answer
go in; one JSON object comes back, ``{"faithfulness": 0..1, "correctness": 0..1}``. The
prompt, the model and the raw reply are logged with the cell (``judge.verdict``), so a
re-evaluation reads the verdict back and never calls the model again. A reply that does not
parse leaves those metrics unparseable, with the raw text kept, never a silent NaN.

A call that fails for a passing reason (a rate limit, a timeout, a server error, a lost
connection) is tried again, ``retries`` times: after the wait the server's ``Retry-After``
asks for, else a doubling wait from ``backoff_s``, stretched by up to a quarter at random
(judges started together do not retry together); no wait is longer than ``MAX_WAIT_S``.
One that still fails is a ``ServiceError`` (the input is fine: ``ragtt eval`` exits 1). A
model litellm cannot call at all (an unknown name, a missing or refused key, a bad request)
is a ``ConfigError`` at once. A failure with no answer from the model behind it (litellm's
wrapping of an error of its own, or of a reply it could not read) is a ``ServiceError`` at
once: trying it again would fail the same way. Each names the model.

The retries are ours alone. litellm's OpenAI-compatible clients retry by themselves
(``max_retries``, 2 by default: three requests for each of our tries, each waiting on its
own), so each call passes ``max_retries=0`` unless the judge was given ``max_retries`` or
``num_retries``. litellm's ``num_retries`` is not used: it retries every error, an unknown
model's too, waits only with ``retry_strategy="exponential_backoff_retry"``, and clears the
process-wide ``litellm.num_retries`` when a call fails.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC
from email.utils import parsedate_to_datetime
from random import uniform
from time import sleep, time
from typing import TYPE_CHECKING, Any, Literal

from ragtt._hashing import sha256_hex
from ragtt.errors import ConfigError, ServiceError
from ragtt.values import first_line

if TYPE_CHECKING:
    from ragtt.results import RetrievedChunk

__all__ = ["MAX_WAIT_S", "LiteLLMJudge", "Verdict", "as_judge"]

INSTRUCTIONS = (
    "You grade one answer of a retrieval-augmented system. Reply with ONE JSON object and nothing else: "
    '{"faithfulness": F, "correctness": C}. F is the share (0 to 1) of the answer\'s claims that the '
    "numbered context supports. C is how fully and correctly (0 to 1) the answer gives the reference "
    "answer; null when no reference answer is given."
)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
MAX_WAIT_S = 60.0  # the longest wait before a try, whatever the backoff or a Retry-After asks
_JITTER = 0.25  # a doubling wait is stretched by up to this share of it, at random
_PASSING_STATUS = {408, 409, 429}  # with every 5xx: what the OpenAI client itself retries
# The packages whose errors carry a call's failure (litellm wraps httpx's and openai's); any
# other error in an exception's chain is a bug or a reply that could not be read.
_CALL_PACKAGES = {"litellm", "openai", "httpx", "httpcore"}
_OWN_RETRIES = ("max_retries", "num_retries")  # litellm's: the judge's own retries are off unless one is given


@dataclass(frozen=True)
class Verdict:
    """One judge call: what was sent, what came back, and the scores parsed from it (None: unparseable)."""

    model: str
    messages: list[dict[str, str]]
    raw: str
    scores: dict[str, float] | None


class LiteLLMJudge:
    """A judge on any chat model litellm can call; extra kwargs (``temperature``,
    ``mock_response``...) pass through to ``litellm.completion``. A rate limit, a timeout,
    a server error or a lost connection is tried again ``retries`` times, after the wait the
    server asks for (``Retry-After``), else after about ``backoff_s`` seconds, then twice
    that, and so on; never more than ``MAX_WAIT_S`` at a time. The defaults wait over a
    minute in all before giving up: longer than a per-minute rate limit lasts."""

    def __init__(self, model: str, *, retries: int = 5, backoff_s: float = 2.0, **completion_kwargs: Any) -> None:
        if not isinstance(model, str) or not model:
            raise ConfigError(f"a judge's model is a litellm model name; got {model!r}")
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ConfigError(f"a judge's retries is a whole number, 0 or more; got {retries!r}")
        if isinstance(backoff_s, bool) or not isinstance(backoff_s, int | float) or not backoff_s >= 0:
            raise ConfigError(f"a judge's backoff_s is a number of seconds, 0 or more; got {backoff_s!r}")
        self.model_id = model
        self.retries = retries
        self.backoff_s = float(backoff_s)
        self.kwargs = completion_kwargs

    def __repr__(self) -> str:
        return f"LiteLLMJudge({self.model_id!r})"

    @property
    def identity(self) -> str:
        """The model and a hash of its settings: evaluations with another judge are other
        evaluations. Not the retries (ours or litellm's): they change no verdict."""
        settings = {k: v for k, v in self.kwargs.items() if k not in _OWN_RETRIES}
        return f"{self.model_id}#{sha256_hex(json.dumps(settings, sort_keys=True, default=repr))[:12]}"

    def verdict(
        self, question: str, answer: str, chunks: Sequence[RetrievedChunk], reference: str | None, wanted: Sequence[str]
    ) -> Verdict:
        from ragtt._lazy import import_litellm

        litellm = import_litellm()
        from openai import APIError  # litellm's errors (bad model, auth, network, limits) all derive from it

        messages = prompt(question, answer, chunks, reference)
        given = any(k in self.kwargs for k in _OWN_RETRIES)
        kwargs = self.kwargs if given else {**self.kwargs, "max_retries": 0}
        for attempt in range(self.retries + 1):
            try:
                response = litellm.completion(model=self.model_id, messages=messages, **kwargs)
                break
            except APIError as exc:
                kind = _failure(exc)
                if kind == "refused":
                    raise ConfigError(
                        f"the judge {self.model_id!r} cannot be called: {first_line(exc)}; {_RESUMES}"
                    ) from exc
                if kind == "broken":
                    raise ServiceError(
                        f"the judge {self.model_id!r} failed with no answer from the model, so it is not tried "
                        f"again: {first_line(exc)}; {_RESUMES}"
                    ) from exc
                if attempt == self.retries:
                    tries = f"{attempt + 1} tries" if attempt else "1 try"
                    raise ServiceError(
                        f"the judge {self.model_id!r} still failed after {tries}: {first_line(exc)}; {_RESUMES}"
                    ) from exc
                sleep(_wait(exc, self.backoff_s * 2**attempt))
        raw = str(response.choices[0].message.content or "")
        return Verdict(self.model_id, messages, raw, parse(raw, wanted))


_RESUMES = (
    "the versions evaluated before this one are kept in the log with their verdicts, "
    "and evaluating again resumes from this one"
)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and the exceptions it was raised from or while handling, outermost first."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__


def _failure(exc: BaseException) -> Literal["passing", "refused", "broken"]:
    """What a litellm error is, read from its whole chain, not from the class litellm chose
    (litellm makes an ``InternalServerError`` of a refused connection and of a reply it could
    not parse alike, and an ``APIConnectionError`` of any error it does not know):

    * ``passing``: the connection was lost or timed out, or the model's server answered a
      rate limit, a timeout, a conflict or a server error (408, 409, 429, 5xx); or litellm
      raised one of those of its own (``mock_response``'s), but never a bare 500, which is
      what litellm makes of any exception it does not know;
    * ``refused``: the server or litellm refused the call as made (any other 4xx: an unknown
      model, a refused key, a bad request), or the OpenAI client would not send it (a
      missing key);
    * ``broken``: anything else: a reply that could not be read, or a bug, wrapped by litellm.
    """
    import httpx
    import openai

    links = list(_chain(exc))
    if any(isinstance(link, httpx.TransportError | ConnectionError | TimeoutError) for link in links):
        return "passing"
    answered = [link.response.status_code for link in links if isinstance(link, httpx.HTTPStatusError)]
    if answered:
        return _by_status(answered[0], sent=True)
    if any(isinstance(link, openai.OpenAIError) and not isinstance(link, openai.APIError) for link in links):
        return "refused"  # the OpenAI client's own refusal to send, before any request
    if any(type(link).__module__.partition(".")[0] not in _CALL_PACKAGES for link in links):
        return "broken"
    status = getattr(exc, "status_code", None)
    return _by_status(status, sent=False) if isinstance(status, int) else "broken"


def _by_status(status: int, *, sent: bool) -> Literal["passing", "refused", "broken"]:
    if status in _PASSING_STATUS or (status >= 500 and (sent or status != 500)):
        return "passing"
    return "refused" if 400 <= status < 500 else "broken"


def _wait(exc: BaseException, backoff_s: float) -> float:
    """Seconds before the next try: what the server asked for, else ``backoff_s`` stretched
    by up to ``_JITTER`` of it at random; at most ``MAX_WAIT_S`` either way."""
    asked = _retry_after(exc)
    if asked is not None:
        return min(MAX_WAIT_S, asked)
    return min(MAX_WAIT_S, backoff_s * uniform(1.0, 1.0 + _JITTER))


def _retry_after(exc: BaseException) -> float | None:
    """The wait a server's answer in ``exc``'s chain asks for, in seconds; None when none does."""
    import httpx

    for link in _chain(exc):
        response = getattr(link, "response", None)
        if isinstance(response, httpx.Response):
            asked = _asked(response.headers)
            if asked is not None:
                return asked
    return None


def _asked(headers: Any) -> float | None:
    """``retry-after-ms`` (OpenAI's), else ``Retry-After`` as seconds or an HTTP date."""
    ms = _number(headers.get("retry-after-ms"))
    if ms is not None:
        return max(0.0, ms / 1000)
    value = headers.get("retry-after")
    seconds = _number(value)
    if seconds is None and value is not None:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp() - time()
    return None if seconds is None else max(0.0, seconds)


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text is not None else math.nan
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def as_judge(judge: Any) -> LiteLLMJudge | None:
    if judge is None or isinstance(judge, LiteLLMJudge):
        return judge
    if isinstance(judge, str):
        return LiteLLMJudge(judge)
    raise ConfigError(f"judge must be a litellm model name or a LiteLLMJudge; got {type(judge).__name__}")


def prompt(question: str, answer: str, chunks: Sequence[RetrievedChunk], reference: str | None) -> list[dict[str, str]]:
    context = "\n\n".join(f"[{c.rank}] ({c.source})\n{c.text}" for c in chunks) or "(nothing was retrieved)"
    parts = [f"Context:\n{context}", f"Question: {question}", f"Answer: {answer}"]
    parts.append(f"Reference answer: {reference}" if reference else "Reference answer: (none given)")
    return [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": "\n\n".join(parts)}]


def parse(raw: str, wanted: Sequence[str]) -> dict[str, float] | None:
    """The ``wanted`` scores from a reply, each a number in [0, 1]; None when any is missing or bad."""
    found = _OBJECT.search(raw)
    if found is None:
        return None
    try:
        data = json.loads(found.group(0))
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    scores = {}
    for name in wanted:
        value = data.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            return None
        scores[name] = float(value)
    return scores
