"""Answer generation: litellm when a model is configured, else an offline extractive answer.

A generator takes the query and the retrieved chunks and returns a ``Generation``. The
extractive default quotes the sentences of the retrieved chunks that share the most words
with the query, and says plainly that no model wrote it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ragtt.results import RetrievedChunk

__all__ = ["EXTRACTIVE_LABEL", "ExtractiveGenerator", "Generation", "Generator", "LiteLLMGenerator", "build_messages"]

EXTRACTIVE_LABEL = "[extractive answer: no generation model configured; quoted from the retrieved chunks]"
# A sentence ends at . ! ? before whitespace (not inside "a.b" like e-mail addresses) or at a
# blank line; Markdown headings and list bullets are not answers on their own.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n")
_STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "have",
    "how", "i", "if", "in", "is", "it", "many", "much", "of", "on", "or", "the", "to", "what",
    "when", "where", "which", "who", "why", "will", "with", "you", "your", "my", "me", "we", "our",
    "long",
})


@dataclass(frozen=True)
class Generation:
    answer: str
    model: str
    usage: dict[str, Any] = field(default_factory=dict)


class Generator(Protocol):
    model_id: str

    def generate(self, query: str, chunks: list[RetrievedChunk]) -> Generation: ...


class ExtractiveGenerator:
    """Offline, deterministic: the best-matching sentences of the retrieved chunks."""

    model_id = "extractive"

    def __init__(self, max_sentences: int = 3) -> None:
        self.max_sentences = max_sentences

    def generate(self, query: str, chunks: list[RetrievedChunk]) -> Generation:
        wanted = _stems(query)
        candidates: list[tuple[float, int, int, str]] = []
        for chunk in chunks:
            for position, raw in enumerate(_SENTENCE_END.split(chunk.text)):
                sentence = " ".join(line for line in raw.splitlines() if not line.lstrip().startswith("#"))
                sentence = " ".join(sentence.split())
                if len(sentence) >= 12:
                    score = len(wanted & _stems(sentence)) / len(wanted) if wanted else 0.0
                    candidates.append((score, chunk.rank, position, sentence))
        best = sorted(candidates, key=lambda c: (-c[0], c[1], c[2]))[: self.max_sentences]
        best = [c for c in best if c[0] > 0] or best[:1]
        if not best:
            return Generation(f"{EXTRACTIVE_LABEL}\nNo retrieved text to quote.", self.model_id)
        quoted = [f"{sentence} [{rank}]" for _, rank, _, sentence in sorted(best, key=lambda c: (c[1], c[2]))]
        return Generation(EXTRACTIVE_LABEL + "\n" + "\n".join(quoted), self.model_id)


def _stems(text: str) -> set[str]:
    """Content words, crudely stemmed, so "refund" meets "refunded" and "days" meets "day"."""
    from ragtt.index.retrieve import tokens

    out = set()
    for token in tokens(text):
        if token in _STOPWORDS:
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if len(token) > len(suffix) + 2 and token.endswith(suffix):
                token = token[: -len(suffix)]
                break
        out.add(token)
    return out


def build_messages(query: str, chunks: list[RetrievedChunk]) -> list[dict[str, str]]:
    context = "\n\n".join(f"[{c.rank}] ({c.source})\n{c.text}" for c in chunks)
    return [
        {"role": "system", "content": "Answer from the numbered context only and cite it as [n]. "
                                      "Say so when the context does not contain the answer."},
        {"role": "user", "content": f"Context:\n{context}\n\nQuestion: {query}"},
    ]


class LiteLLMGenerator:
    """Any chat model litellm can call; extra kwargs (``temperature``, ``mock_response``...) pass through."""

    def __init__(self, model: str, **completion_kwargs: Any) -> None:
        self.model_id = model
        self.kwargs = completion_kwargs

    def generate(self, query: str, chunks: list[RetrievedChunk]) -> Generation:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        response = litellm.completion(model=self.model_id, messages=build_messages(query, chunks), **self.kwargs)
        answer = response.choices[0].message.content or ""
        usage = getattr(response, "usage", None)
        usage_dict = {k: getattr(usage, k, None) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
        return Generation(answer, self.model_id, {k: v for k, v in usage_dict.items() if v is not None})

    def __repr__(self) -> str:
        return f"LiteLLMGenerator({self.model_id!r})"
