"""Context assembly: retrieved assertions rendered for a prompt, within a token budget.

Assertions are added best first while they fit; the first that does not fit ends the
context (``truncated=True``), so what is included is always a prefix of the ranking.
``coverage`` describes only what was rendered. Tokens are estimated as ceil(chars / 4)
unless a ``token_counter`` (e.g. a tokenizer's ``len(encode(text))``) is given.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ragtt.errors import ValidationError
from ragtt.temporal.results import AssembledContext, RetrievalQuery, RetrievedAssertion

if TYPE_CHECKING:
    from ragtt.temporal.store import AssertionStore

__all__ = ["FORMATTERS", "assemble_context", "estimate_tokens"]

FORMATTERS = ("prose", "structured", "json")


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _window(a: RetrievedAssertion) -> str:
    return f"{a.valid_from:g} to {'now' if a.valid_until is None else f'{a.valid_until:g}'}"


def _sources(a: RetrievedAssertion) -> str:
    return ", ".join(c.source_ref for c in a.citations)


def _prose(a: RetrievedAssertion) -> str:
    return f"- {a.content} (valid {_window(a)}; confidence {a.confidence:.2f}; source: {_sources(a)})"


def _structured(a: RetrievedAssertion) -> str:
    lines = [f"[{a.id}] type={a.type} valid={_window(a)} confidence={a.confidence:.2f}"]
    if a.entity_id:
        lines.append(f"  entity: {a.entity_id} ({a.entity_type or 'untyped'})")
    lines.append(f"  claim: {a.content}")
    for c in a.citations:
        quote = f': "{c.excerpt}"' if c.excerpt else ""
        lines.append(f"  cite: {c.source_ref}{quote}")
    return "\n".join(lines)


def _record(a: RetrievedAssertion) -> dict[str, Any]:
    return {
        "id": a.id,
        "type": a.type,
        "content": a.content,
        "valid_from": a.valid_from,
        "valid_until": a.valid_until,
        "confidence": a.confidence,
        "entity_id": a.entity_id,
        "sources": [c.source_ref for c in a.citations],
        "score": round(a.score, 6),
    }


def _render(formatter: str, header: str, items: list[RetrievedAssertion]) -> str:
    if formatter == "json":
        return json.dumps({"as_of": header, "assertions": [_record(a) for a in items]}, ensure_ascii=False)
    body = "\n".join((_prose if formatter == "prose" else _structured)(a) for a in items)
    title = f"Facts valid as of {header}:" if formatter == "prose" else f"# assertions as of {header}"
    return f"{title}\n{body}" if items else title


def assemble_context(
    store: AssertionStore,
    query: RetrievalQuery,
    token_budget: int,
    formatter: str = "prose",
    *,
    token_counter: Callable[[str], int] | None = None,
) -> AssembledContext:
    if formatter not in FORMATTERS:
        raise ValidationError(f"formatter must be one of {FORMATTERS}; got {formatter!r}")
    if isinstance(token_budget, bool) or not isinstance(token_budget, int) or token_budget < 1:
        raise ValidationError(f"token_budget must be a positive int; got {token_budget!r}")
    count = token_counter or estimate_tokens
    result = store.retrieve(query)
    header = f"{query.temporal_anchor:g}"
    included: list[RetrievedAssertion] = []
    text = _render(formatter, header, included)
    # one pass adding best-first; re-rendering keeps the json form valid at every size
    for item in result.results:
        candidate = _render(formatter, header, [*included, item])
        if count(candidate) > token_budget:
            break
        included.append(item)
        text = candidate
    if count(text) > token_budget:  # not even the header fits
        text = ""
    truncated = len(included) < len(result.results)
    positions = [a.valid_from for a in included]
    coverage = {
        "namespace": query.namespace,
        "anchor": query.temporal_anchor,
        "included": len(included),
        "retrieved": len(result.results),
        "assertion_ids": [a.id for a in included],
        "citations": sum(len(a.citations) for a in included),
        "position_range": (min(positions), max(positions)) if positions else None,
        "formatter": formatter,
        "token_budget": token_budget,
    }
    return AssembledContext(text, truncated, coverage, tuple(included), count(text) if text else 0)
