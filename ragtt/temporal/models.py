"""The records the store writes: episodes, assertions, citations and links.

Each is a frozen dataclass that validates itself on construction, so a bad record fails
where it is built, with every problem listed (``ValidationError.errors``). Positions are
floats on one axis (UNIX seconds by default); a ``datetime`` is converted to UNIX seconds.
Assertions and their citations read back from the store are rebuilt with ``stored``,
without validating them again.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from ragtt._hashing import stable_json, time_ordered_id
from ragtt.errors import ValidationError
from ragtt.values import shorten, unicode_problem

__all__ = [
    "Assertion",
    "Citation",
    "Episode",
    "Link",
    "MissingExcerptWarning",
    "stored",
    "to_position",
]

PositionLike = float | int | datetime


class MissingExcerptWarning(UserWarning):
    """A citation names its source but quotes nothing from it."""


def to_position(value: PositionLike, name: str = "position") -> float:
    """A finite float position; datetimes become UNIX seconds (naive ones are taken as UTC)."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.timestamp()
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationError(f"{name} must be a number or datetime; got {type(value).__name__} {value!r}")
    result = float(value)
    if not math.isfinite(result):
        raise ValidationError(f"{name} must be finite; got {value!r} (use None for an open end)")
    return result


def _text(errors: list[str], name: str, value: object, *, empty_ok: bool = False) -> None:
    if not isinstance(value, str):
        errors.append(f"{name} must be a str; got {type(value).__name__}")
    elif not empty_ok and not value.strip():
        errors.append(f"{name} must not be empty")
    elif (problem := unicode_problem(value)) is not None:
        errors.append(f"{name} {problem}")


def _optional_text(errors: list[str], name: str, value: object) -> None:
    if value is not None:
        _text(errors, name, value)


def _position(errors: list[str], name: str, value: object, *, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    try:
        return to_position(value, name)  # type: ignore[arg-type]
    except ValidationError as exc:
        errors.append(str(exc))
        return None


def _mapping(errors: list[str], name: str, value: object) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        errors.append(f"{name} must be a mapping or None; got {type(value).__name__}")
        return None
    try:
        return json.loads(stable_json(dict(value)))
    except (TypeError, ValueError) as exc:
        errors.append(f"{name} must be JSON-serialisable: {exc}")
        return None


def _raise(kind: str, ident: object, errors: list[str]) -> None:
    if errors:
        raise ValidationError(f"invalid {kind} {ident!r}: " + "; ".join(errors), errors)


def _window(valid_from: float, valid_until: float | None) -> str:
    return f"[{valid_from:g}, {'open' if valid_until is None else f'{valid_until:g}'})"


class _Record:
    """``to_dict()`` for the record dataclasses below: every field, nested records as dicts."""

    def to_dict(self) -> dict[str, Any]:
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}  # type: ignore[arg-type]


def _plain(value: Any) -> Any:
    if isinstance(value, tuple | list):  # citations: a tuple of Citation
        return [v.to_dict() if isinstance(v, _Record) else v for v in value]
    return value


_R = TypeVar("_R", bound=_Record)


def stored(cls: type[_R], **values: Any) -> _R:
    """A record of ``cls`` from the values the store wrote for one, every field given. The
    store validated and normalised them on the way in, so they are not validated again:
    that took longer than SQLite took to read them (5 us an assertion with its citation,
    half the time a hybrid retrieve spent loading its ten results). Rows written around
    the store (other tools, hand-written SQL) are trusted as they are."""
    record = object.__new__(cls)
    record.__dict__.update(values)
    return record


@dataclass(frozen=True, repr=False)
class Episode(_Record):
    """Something that happened at ``position`` (a message, a document, an observation)."""

    id: str
    namespace: str
    position: float
    occurred_at: str
    type: str
    content: str
    metadata: Mapping[str, Any] | None = None
    extensions: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        errors: list[str] = []
        _text(errors, "id", self.id)
        _text(errors, "namespace", self.namespace)
        _text(errors, "type", self.type)
        _text(errors, "content", self.content, empty_ok=True)
        object.__setattr__(self, "position", _position(errors, "position", self.position))
        occurred = self.occurred_at
        if isinstance(occurred, datetime):
            occurred = (occurred if occurred.tzinfo else occurred.replace(tzinfo=UTC)).isoformat()
        elif isinstance(occurred, int | float) and not isinstance(occurred, bool):
            occurred = datetime.fromtimestamp(float(occurred), UTC).isoformat()
        elif not isinstance(occurred, str) or not occurred:
            errors.append(f"occurred_at must be an ISO-8601 str, datetime or UNIX seconds; got {occurred!r}")
        object.__setattr__(self, "occurred_at", occurred)
        object.__setattr__(self, "metadata", _mapping(errors, "metadata", self.metadata))
        object.__setattr__(self, "extensions", _mapping(errors, "extensions", self.extensions))
        _raise("episode", self.id, errors)

    def __repr__(self) -> str:
        return (
            f"Episode(id={self.id!r}, type={self.type!r}, position={self.position:g}, "
            f"content={shorten(self.content, 60)!r})"
        )


@dataclass(frozen=True, repr=False)
class Citation(_Record):
    """Where a claim comes from: an episode, a reference into the source and the quoted excerpt."""

    id: str
    episode_id: str
    source_ref: str
    excerpt: str | None = None
    excerpt_start: int | None = None
    excerpt_end: int | None = None
    metadata: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        errors: list[str] = []
        _text(errors, "id", self.id)
        _text(errors, "episode_id", self.episode_id)
        _text(errors, "source_ref", self.source_ref)
        _optional_text(errors, "excerpt", self.excerpt)
        for name in ("excerpt_start", "excerpt_end"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                errors.append(f"{name} must be a non-negative int or None; got {value!r}")
        start, end = self.excerpt_start, self.excerpt_end
        if (start is None) != (end is None):
            errors.append("excerpt_start and excerpt_end must be given together")
        elif isinstance(start, int) and isinstance(end, int) and end < start:
            errors.append(f"excerpt_end ({end}) must not be before excerpt_start ({start})")
        object.__setattr__(self, "metadata", _mapping(errors, "metadata", self.metadata))
        _raise("citation", self.id, errors)

    @classmethod
    def from_chunk(
        cls, chunk: Any, *, episode_id: str, id: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> Citation:
        """Cite a retrieved chunk (``ragtt.RetrievedChunk`` or anything shaped like one).

        ``source_ref`` is the chunk id, the excerpt its text; the source, character span and
        page regions go into ``metadata`` so a viewer can draw the boxes on the page.
        """
        charspan = getattr(chunk, "charspan", None)
        regions = [list(region) for region in (getattr(chunk, "regions", None) or [])]
        meta: dict[str, Any] = {
            "source": getattr(chunk, "source", None),
            "doc_id": getattr(chunk, "doc_id", None),
            "charspan": list(charspan) if charspan is not None else None,
            "regions": regions,
        }
        meta.update(metadata or {})
        start, end = (int(charspan[0]), int(charspan[1])) if charspan is not None else (None, None)
        return cls(
            id=id or time_ordered_id(),
            episode_id=episode_id,
            source_ref=str(chunk.chunk_id),
            excerpt=chunk.text,
            excerpt_start=start,
            excerpt_end=end,
            metadata=meta,
        )

    def __repr__(self) -> str:
        excerpt = "None" if self.excerpt is None else repr(shorten(self.excerpt, 40))
        return f"Citation(id={self.id!r}, source_ref={self.source_ref!r}, excerpt={excerpt})"


@dataclass(frozen=True, repr=False)
class Assertion(_Record):
    """A typed claim, valid on the half-open window ``[valid_from, valid_until)``."""

    id: str
    namespace: str
    type: str
    content: str
    valid_from: float
    confidence: float
    source_episode_id: str
    citations: tuple[Citation, ...]
    valid_until: float | None = None
    supersedes_id: str | None = None
    entity_id: str | None = None
    entity_type: str | None = None
    metadata: Mapping[str, Any] | None = None
    extensions: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        errors: list[str] = []
        for name in ("id", "namespace", "type", "content", "source_episode_id"):
            _text(errors, name, getattr(self, name))
        for name in ("supersedes_id", "entity_id", "entity_type"):
            _optional_text(errors, name, getattr(self, name))
        start = _position(errors, "valid_from", self.valid_from)
        end = _position(errors, "valid_until", self.valid_until, optional=True)
        object.__setattr__(self, "valid_from", start)
        object.__setattr__(self, "valid_until", end)
        if start is not None and end is not None and end <= start:
            errors.append(f"valid_until ({end:g}) must be after valid_from ({start:g})")
        conf = self.confidence
        if isinstance(conf, bool) or not isinstance(conf, int | float) or not 0.0 <= float(conf) <= 1.0:
            errors.append(f"confidence must be a number in [0, 1]; got {conf!r}")
        else:
            object.__setattr__(self, "confidence", float(conf))
        if self.supersedes_id is not None and self.supersedes_id == self.id:
            errors.append("an assertion cannot supersede itself")
        cites = self.citations
        if isinstance(cites, Citation):
            cites = (cites,)
        if not isinstance(cites, Iterable) or isinstance(cites, str | bytes | Mapping):
            errors.append(f"citations must be a list of Citation; got {type(cites).__name__}")
            cites = ()
        cites = tuple(cites)
        if not cites:
            errors.append("at least one citation is required (Citation(id, episode_id, source_ref, excerpt))")
        bad = [type(c).__name__ for c in cites if not isinstance(c, Citation)]
        if bad:
            errors.append(f"citations must be Citation objects; got {', '.join(bad)}")
        ids = [c.id for c in cites if isinstance(c, Citation)]
        if len(set(ids)) != len(ids):
            errors.append("citation ids must be unique within an assertion")
        object.__setattr__(self, "citations", cites)
        object.__setattr__(self, "metadata", _mapping(errors, "metadata", self.metadata))
        object.__setattr__(self, "extensions", _mapping(errors, "extensions", self.extensions))
        _raise("assertion", self.id, errors)

    def is_valid_at(self, position: PositionLike) -> bool:
        """True when ``valid_from <= position < valid_until`` (half-open)."""
        at = to_position(position)
        return self.valid_from <= at and (self.valid_until is None or at < self.valid_until)

    def __repr__(self) -> str:
        return (
            f"Assertion(id={self.id!r}, type={self.type!r}, valid={_window(self.valid_from, self.valid_until)}, "
            f"content={shorten(self.content, 60)!r})"
        )


@dataclass(frozen=True, repr=False)
class Link(_Record):
    """A typed, time-bounded edge between two assertions."""

    id: str
    namespace: str
    from_id: str
    to_id: str
    link_type: str
    valid_from: float
    valid_until: float | None = None
    metadata: Mapping[str, Any] | None = field(default=None)

    def __post_init__(self) -> None:
        errors: list[str] = []
        for name in ("id", "namespace", "from_id", "to_id", "link_type"):
            _text(errors, name, getattr(self, name))
        start = _position(errors, "valid_from", self.valid_from)
        end = _position(errors, "valid_until", self.valid_until, optional=True)
        object.__setattr__(self, "valid_from", start)
        object.__setattr__(self, "valid_until", end)
        if start is not None and end is not None and end <= start:
            errors.append(f"valid_until ({end:g}) must be after valid_from ({start:g})")
        if self.from_id == self.to_id:
            errors.append("a link cannot join an assertion to itself")
        object.__setattr__(self, "metadata", _mapping(errors, "metadata", self.metadata))
        _raise("link", self.id, errors)

    def is_valid_at(self, position: PositionLike) -> bool:
        at = to_position(position)
        return self.valid_from <= at and (self.valid_until is None or at < self.valid_until)

    def __repr__(self) -> str:
        return (
            f"Link({self.from_id!r} -[{self.link_type}]-> {self.to_id!r}, "
            f"valid={_window(self.valid_from, self.valid_until)})"
        )
