"""The query object and the results people read: retrieval results, assembled context, paths."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from ragtt._html import STYLE
from ragtt.errors import ValidationError
from ragtt.results import iso_utc
from ragtt.temporal.fts import QUERY_TEXT_MODES
from ragtt.temporal.models import Assertion, Citation, Link, _window, to_position
from ragtt.values import shorten, unicode_problem

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "STRATEGIES",
    "AssembledContext",
    "ConnectedAssertion",
    "RetrievalQuery",
    "RetrievalResult",
    "RetrievedAssertion",
]

STRATEGIES = ("hybrid", "vector", "bm25")
MODES = ("snapshot", "trajectory")


def _names(value: object, name: str, errors: list[str]) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = (value,)
    items = tuple(value) if isinstance(value, Sequence | set | frozenset) else None
    if items is None or not all(isinstance(v, str) for v in items):
        errors.append(f"{name} must be a list of str or None; got {value!r}")
        return None
    return tuple(sorted(set(items)))


@dataclass(frozen=True, eq=False)
class RetrievalQuery:
    """What to retrieve, as of ``temporal_anchor`` (valid there: ``valid_from <= t < valid_until``)."""

    namespace: str
    temporal_anchor: float
    query_text: str | None = None
    query_embedding: NDArray[np.float32] | None = None
    strategy: str = "hybrid"
    query_text_mode: str = "terms"
    limit: int = 10
    candidate_limit: int | None = None
    min_confidence: float | None = None
    assertion_types: tuple[str, ...] | None = None
    entity_types: tuple[str, ...] | None = None
    expand_links: bool = False
    max_depth: int | None = None
    mode: str = "snapshot"
    include_superseded: bool = False

    def __post_init__(self) -> None:
        errors: list[str] = []
        if not isinstance(self.namespace, str) or not self.namespace:
            errors.append(f"namespace must be a non-empty str; got {self.namespace!r}")
        try:
            object.__setattr__(self, "temporal_anchor", to_position(self.temporal_anchor, "temporal_anchor"))
        except ValidationError as exc:
            errors.append(str(exc))
        if self.query_text is not None and not isinstance(self.query_text, str):
            errors.append(f"query_text must be a str or None; got {type(self.query_text).__name__}")
        elif self.query_text is not None and (problem := unicode_problem(self.query_text)) is not None:
            errors.append(f"query_text {problem}")
        if self.query_embedding is not None:
            vector = np.asarray(self.query_embedding, dtype=np.float32).reshape(-1)
            if not vector.size or not np.isfinite(vector).all():
                errors.append("query_embedding must be a non-empty vector of finite numbers")
            object.__setattr__(self, "query_embedding", vector)
        for name, value, allowed in (
            ("strategy", self.strategy, STRATEGIES),
            ("mode", self.mode, MODES),
            ("query_text_mode", self.query_text_mode, QUERY_TEXT_MODES),
        ):
            if value not in allowed:
                errors.append(f"{name} must be one of {allowed}; got {value!r}")
        for name in ("limit", "candidate_limit", "max_depth"):
            value = getattr(self, name)
            if value is None and name != "limit":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < (0 if name == "max_depth" else 1):
                errors.append(f"{name} must be a positive int; got {value!r}")
        conf = self.min_confidence
        if conf is not None and (isinstance(conf, bool) or not isinstance(conf, int | float) or not 0 <= conf <= 1):
            errors.append(f"min_confidence must be in [0, 1] or None; got {conf!r}")
        object.__setattr__(self, "assertion_types", _names(self.assertion_types, "assertion_types", errors))
        object.__setattr__(self, "entity_types", _names(self.entity_types, "entity_types", errors))
        if errors:
            raise ValidationError("invalid RetrievalQuery: " + "; ".join(errors), errors)

    def to_dict(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "temporal_anchor": self.temporal_anchor,
            "query_text": self.query_text,
            "query_embedding": None if self.query_embedding is None else self.query_embedding.tolist(),
            "strategy": self.strategy,
            "query_text_mode": self.query_text_mode,
            "limit": self.limit,
            "candidate_limit": self.candidate_limit,
            "min_confidence": self.min_confidence,
            "assertion_types": self.assertion_types,
            "entity_types": self.entity_types,
            "expand_links": self.expand_links,
            "max_depth": self.max_depth,
            "mode": self.mode,
            "include_superseded": self.include_superseded,
        }

    def __repr__(self) -> str:
        return (
            f"RetrievalQuery(namespace={self.namespace!r}, anchor={self.temporal_anchor:g}, "
            f"text={self.query_text!r}, strategy={self.strategy!r}, limit={self.limit})"
        )


@dataclass(frozen=True, repr=False)
class RetrievedAssertion:
    """An assertion as retrieved: its fields, its score and where the score came from."""

    id: str
    namespace: str
    type: str
    content: str
    valid_from: float
    valid_until: float | None
    confidence: float
    source_episode_id: str
    citations: tuple[Citation, ...]
    supersedes_id: str | None
    entity_id: str | None
    entity_type: str | None
    metadata: Mapping[str, Any] | None
    score: float
    score_components: Mapping[str, float]
    supersession_chain: list[Assertion] | None = None
    link_depth: int | None = None
    linked_from: str | None = None
    extensions: Mapping[str, Any] | None = None

    @classmethod
    def build(
        cls,
        assertion: Assertion,
        score: float,
        components: Mapping[str, float],
        **extra: Any,
    ) -> RetrievedAssertion:
        fields = assertion.__dict__.copy()
        return cls(**fields, score=score, score_components=dict(components), **extra)

    @property
    def assertion(self) -> Assertion:
        names = Assertion.__dataclass_fields__
        return Assertion(**{k: v for k, v in self.__dict__.items() if k in names})

    def to_dict(self) -> dict[str, Any]:
        out = self.assertion.to_dict()
        out.update(
            score=self.score,
            score_components=dict(self.score_components),
            supersession_chain=None
            if self.supersession_chain is None
            else [a.to_dict() for a in self.supersession_chain],
            link_depth=self.link_depth,
            linked_from=self.linked_from,
        )
        return out

    def __repr__(self) -> str:
        return (
            f"RetrievedAssertion(id={self.id!r}, score={self.score:.4f}, "
            f"valid={_window(self.valid_from, self.valid_until)}, content={shorten(self.content, 60)!r})"
        )


def _html_window(valid_from: float, valid_until: float | None) -> str:
    """The validity window for people: positions that read as UNIX seconds (1973 to 2286)
    as ISO UTC; other positions (release numbers, steps) as numbers."""

    def show(position: float | None) -> str:
        if position is None:
            return "open"
        return iso_utc(datetime.fromtimestamp(position, UTC)) if 1e8 <= position < 1e10 else f"{position:g}"

    return f"[{show(valid_from)}, {show(valid_until)})"


def _cell(value: object) -> str:
    return f"<td>{html.escape('' if value is None else str(value))}</td>"


@dataclass(frozen=True, repr=False)
class RetrievalResult:
    """Ranked results (best first) and what the retrieval did (``meta``)."""

    results: list[RetrievedAssertion]
    meta: Mapping[str, Any]

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self) -> Any:
        return iter(self.results)

    def __getitem__(self, index: int) -> RetrievedAssertion:
        return self.results[index]

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self.results]

    def to_dict(self) -> dict[str, Any]:
        return {"results": [r.to_dict() for r in self.results], "meta": dict(self.meta)}

    def __repr__(self) -> str:
        m = self.meta
        return (
            f"RetrievalResult({len(self.results)} results, namespace={m.get('namespace')!r}, "
            f"anchor={m.get('anchor')}, strategy={m.get('strategy')!r}, took_ms={m.get('took_ms')})"
        )

    def _repr_html_(self) -> str:
        m = self.meta
        head = (
            f"<p><b>{len(self.results)} assertions</b> in {html.escape(str(m.get('namespace')))} "
            f"as of {html.escape(str(m.get('anchor')))} ({html.escape(str(m.get('strategy')))}, "
            f"{html.escape(str(m.get('took_ms')))} ms)</p>"
        )
        rows = "".join(
            "<tr>"
            + _cell(f"{r.score:.4f}")
            + _cell(r.id)
            + _cell(r.type)
            + _cell(_html_window(r.valid_from, r.valid_until))
            + _cell(r.content)
            + "</tr>"
            for r in self.results
        )
        warnings = "".join(f"<li>{html.escape(str(w))}</li>" for w in m.get("warnings", ()))
        return (
            f"{STYLE}<div class='ragtt-r ragtt-retrieval tex2jax_ignore mathjax_ignore'>{head}<table class='ragtt-t'>"
            f"<tr><th>score</th><th>id</th><th>type</th><th>valid</th><th>content</th></tr>{rows}</table>"
            + (f"<ul class='ragtt-warnings'>{warnings}</ul>" if warnings else "")
            + "</div>"
        )


@dataclass(frozen=True, repr=False)
class ConnectedAssertion:
    """An assertion reached from a start through valid links: ``path`` is the links walked."""

    assertion: Assertion
    depth: int
    path: tuple[Link, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "assertion": self.assertion.to_dict(),
            "depth": self.depth,
            "path": [link.to_dict() for link in self.path],
        }

    def __repr__(self) -> str:
        via = self.path[-1].link_type if self.path else "-"
        return f"ConnectedAssertion(id={self.assertion.id!r}, depth={self.depth}, via={via!r})"


@dataclass(frozen=True, repr=False)
class AssembledContext:
    """Context text for a prompt, within a token budget, and what it covers."""

    text: str
    truncated: bool
    coverage: Mapping[str, Any]
    assertions: tuple[RetrievedAssertion, ...] = field(default=())
    token_count: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "truncated": self.truncated,
            "coverage": dict(self.coverage),
            "assertions": [a.id for a in self.assertions],
            "token_count": self.token_count,
        }

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return (
            f"AssembledContext({len(self.assertions)} assertions, {self.token_count} tokens, "
            f"truncated={self.truncated})"
        )

    def _repr_html_(self) -> str:
        state = "truncated to the budget" if self.truncated else "complete"
        return (
            f"<div class='ragtt-context'><p><b>{len(self.assertions)} assertions</b>, "
            f"{self.token_count} tokens, {state}</p><pre>{html.escape(self.text)}</pre></div>"
        )
