"""An LLM judge for ``faithfulness`` and ``correctness``, through litellm (imported on first use).

One call per cell: the question, the retrieved chunks, the answer and the reference answer
go in; one JSON object comes back, ``{"faithfulness": 0..1, "correctness": 0..1}``. The
prompt, the model and the raw reply are logged with the cell (``judge.verdict``), so a
re-evaluation reads the verdict back and never calls the model again. A reply that does not
parse leaves those metrics unparseable, with the raw text kept, never a silent NaN. A call
that fails (an unknown model, a refused key, the network) is a ``ConfigError`` naming the model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragtt._hashing import sha256_hex
from ragtt.errors import ConfigError
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


@dataclass(frozen=True)
class Verdict:
    """One judge call: what was sent, what came back, and the scores parsed from it (None: unparseable)."""

    model: str
    messages: list[dict[str, str]]
    raw: str
    scores: dict[str, float] | None


class LiteLLMJudge:
    """A judge on any chat model litellm can call; extra kwargs (``temperature``,
    ``mock_response``...) pass through to ``litellm.completion``."""

    def __init__(self, model: str, **completion_kwargs: Any) -> None:
        if not isinstance(model, str) or not model:
            raise TypeError(f"a judge model is a litellm model name; got {model!r}")
        self.model_id = model
        self.kwargs = completion_kwargs

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
        try:
            response = litellm.completion(model=self.model_id, messages=messages, **self.kwargs)
        except APIError as exc:
            reason = first_line(exc)
            raise ConfigError(
                f"the judge {self.model_id!r} could not be called: {reason}; the versions evaluated before "
                "this one are logged, and evaluating again resumes from it"
            ) from exc
        raw = str(response.choices[0].message.content or "")
        return Verdict(self.model_id, messages, raw, parse(raw, wanted))


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
