"""Pydantic models from the verb table: what REST bodies and MCP tool inputs validate against."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from ragtt.verbs import Arg, Verb

__all__ = ["annotation", "body_model"]


def annotation(arg: Arg) -> Any:
    """``arg``'s type with its help, range and choices, as pydantic validates it."""
    kind: Any = Literal[arg.choices] if arg.choices is not None else arg.type
    if not arg.required:
        kind = kind | None
    return Annotated[kind, Field(description=arg.help, ge=arg.minimum, le=arg.maximum)]


def body_model(verb: Verb, front: str, *, exclude: frozenset[str] = frozenset()) -> type[BaseModel]:
    """One model per verb; unknown fields are rejected so a misspelt one is a 422 that names it."""
    fields: dict[str, Any] = {
        a.name: (annotation(a), ... if a.required else a.default)
        for a in verb.args
        if front in a.fronts and a.name not in exclude
    }
    name = "".join(part.title() for part in verb.name.split("_")) + "Body"
    return create_model(name, __config__=ConfigDict(extra="forbid"), __doc__=verb.help, **fields)
