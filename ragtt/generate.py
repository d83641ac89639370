"""Answer generation: litellm when a model is configured, else an offline extractive answer.

A generator takes the query and the retrieved chunks and returns a ``Generation``. The
extractive default quotes the sentences of the retrieved chunks that share the most words
with the query, and says plainly that no model wrote it.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
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
    """Offline and deterministic: the best-matching passages of the retrieved chunks.

    Each retrieved chunk is cut into sentences; a sentence scores the query's content words it
    contains, each weighted by how rare it is among all retrieved sentences (an identifier
    such as ``SEND_FILE_MAX_AGE_DEFAULT`` outweighs "default"). The best sentences are quoted
    with what follows them in their chunk, up to ``passage_chars``, because the answer often
    comes right after the line that names the subject.
    """

    model_id = "extractive"

    def __init__(self, max_passages: int = 2, passage_chars: int = 480) -> None:
        self.max_passages = max_passages
        self.passage_chars = passage_chars

    def generate(self, query: str, chunks: list[RetrievedChunk]) -> Generation:
        wanted = _stems(query)
        sentences = {c.rank: [t for t in map(_clean, _SENTENCE_END.split(c.text)) if len(t) >= 12] for c in chunks}
        units = [(rank, i, _stems(text) & wanted) for rank, seq in sentences.items() for i, text in enumerate(seq)]
        if not units:
            return Generation(f"{EXTRACTIVE_LABEL}\nNo retrieved text to quote.", self.model_id)
        df = Counter(stem for _, _, found in units for stem in found)
        weight = {stem: math.log(1 + len(units) / n) for stem, n in df.items()}
        ranked = sorted(((sum(weight[s] for s in found), rank, i) for rank, i, found in units),
                        key=lambda u: (-u[0], u[1], u[2]))
        chosen: dict[int, set[int]] = {}
        for picks, (score, rank, i) in enumerate(ranked):
            if picks == self.max_passages or (picks and score <= 0):
                break
            taken = chosen.setdefault(rank, set())
            seq, j, size = sentences[rank], i, 0
            while j < len(seq) and (j == i or size + 1 + len(seq[j]) <= self.passage_chars):
                size += len(seq[j]) + 1
                taken.add(j)
                j += 1
        quoted = []
        for rank in sorted(chosen):  # contiguous runs of chosen sentences, in reading order
            run: list[str] = []
            for k, text in enumerate(sentences[rank]):
                if k in chosen[rank]:
                    run.append(text)
                elif run:
                    quoted.append(f"{' '.join(run)} [{rank}]")
                    run = []
            if run:
                quoted.append(f"{' '.join(run)} [{rank}]")
        return Generation(EXTRACTIVE_LABEL + "\n" + "\n".join(quoted), self.model_id)


def _clean(raw: str) -> str:
    """One sentence on one line, without Markdown heading lines (not answers on their own)."""
    return " ".join(" ".join(line for line in raw.splitlines() if not line.lstrip().startswith("#")).split())


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
