"""An LLM judge for ``faithfulness`` and ``correctness``, through litellm (imported on first use).

One call per cell: the question, the retrieved chunks, the answer and the reference answer
go in; one JSON object comes back, ``{"faithfulness": 0..1, "correctness": 0..1}``. The
prompt, the model and the raw reply are logged with the cell (``judge.verdict``), so a
re-evaluation reads the verdict back and never calls the model again. A reply that does not
parse leaves those metrics unparseable, with the raw text kept, never a silent NaN.

A call that fails for a passing reason (a rate limit, a timeout, a server error, a lost
connection) is tried again, ``retries`` times with a doubling wait; one that still fails is a
``ServiceError`` (the input is fine: ``ragtt eval`` exits 1). A model litellm cannot call at
all (an unknown name, a missing or refused key) is a ``ConfigError`` at once. Either names the
model. The retries are ours, not litellm's ``num_retries``: that one retries every error,
an unknown model's too, waits only with ``retry_strategy="exponential_backoff_retry"``, and
clears the process-wide ``litellm.num_retries`` when a call fails.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from time import sleep
from typing import TYPE_CHECKING, Any

from ragtt._hashing import sha256_hex
from ragtt.errors import ConfigError, ServiceError
from ragtt.values import first_line

if TYPE_CHECKING:
    from ragtt.results import RetrievedChunk

__all__ = ["LiteLLMJudge", "Verdict", "as_judge"]

INSTRUCTIONS = (
    "You grade one answer of a retrieval-augmented system. Reply with ONE JSON object and nothing else: "
    '{"faithfulness": F, "correctness": C}. F is the share (0 to 1) of the answer\'s claims that the '
    "numbered context supports. C is how fully and correctly (0 to 1) the answer gives the reference "
    "answer; null when no reference answer is given."
)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_TRANSIENT_STATUS = {408, 409, 429}  # with every 5xx: what the OpenAI client itself retries


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
    a server error or a lost connection is tried again ``retries`` times, after
    ``backoff_s`` seconds, then twice that, and so on."""

    def __init__(self, model: str, *, retries: int = 3, backoff_s: float = 1.0, **completion_kwargs: Any) -> None:
        if not isinstance(model, str) or not model:
            raise TypeError(f"a judge model is a litellm model name; got {model!r}")
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ConfigError(f"a judge's retries is a whole number, 0 or more; got {retries!r}")
        if isinstance(backoff_s, bool) or not isinstance(backoff_s, int | float) or not backoff_s >= 0:
            raise ConfigError(f"a judge's backoff_s is a number of seconds, 0 or more; got {backoff_s!r}")
        self.model_id = model
        self.retries = retries
        self.backoff_s = float(backoff_s)
        self.kwargs = completion_kwargs  # (not the retries: they change no verdict, so not the identity)

    def __repr__(self) -> str:
        return f"LiteLLMJudge({self.model_id!r})"

    @property
    def identity(self) -> str:
        """The model and a hash of its settings: evaluations with another judge are other evaluations."""
        return f"{self.model_id}#{sha256_hex(json.dumps(self.kwargs, sort_keys=True, default=repr))[:12]}"

    def verdict(
        self, question: str, answer: str, chunks: Sequence[RetrievedChunk], reference: str | None, wanted: Sequence[str]
    ) -> Verdict:
        from ragtt._lazy import import_litellm

        litellm = import_litellm()
        from openai import APIError  # litellm's errors (bad model, auth, network, limits) all derive from it

        messages = prompt(question, answer, chunks, reference)
        for attempt in range(self.retries + 1):
            try:
                response = litellm.completion(model=self.model_id, messages=messages, **self.kwargs)
                break
            except APIError as exc:
                if not _transient(exc):
                    raise ConfigError(
                        f"the judge {self.model_id!r} cannot be called: {first_line(exc)}; {_RESUMES}"
                    ) from exc
                if attempt == self.retries:
                    tries = f"{attempt + 1} tries" if attempt else "1 try"
                    raise ServiceError(
                        f"the judge {self.model_id!r} still failed after {tries}: {first_line(exc)}; {_RESUMES}"
                    ) from exc
                sleep(self.backoff_s * 2**attempt)
        raw = str(response.choices[0].message.content or "")
        return Verdict(self.model_id, messages, raw, parse(raw, wanted))


_RESUMES = (
    "the versions evaluated before this one are kept in the log with their verdicts, "
    "and evaluating again resumes from this one"
)


def _transient(exc: Exception) -> bool:
    """Whether a litellm error may pass by itself: a lost connection or a timeout, a rate
    limit, a conflict or a server error. Not an unknown model, a refused key or a bad request."""
    from openai import APIConnectionError

    if isinstance(exc, APIConnectionError):  # (a timeout is one)
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status in _TRANSIENT_STATUS or status >= 500)


def as_judge(judge: Any) -> LiteLLMJudge | None:
    if judge is None or isinstance(judge, LiteLLMJudge):
        return judge
    if isinstance(judge, str):
        return LiteLLMJudge(judge)
    raise TypeError(f"judge must be a litellm model name or a LiteLLMJudge; got {type(judge).__name__}")


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
