"""Pydantic models and JSON schemas from the verb table: what REST bodies and MCP tool inputs
validate against, and what REST responses and MCP tool outputs are documented as."""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, create_model
from typing_extensions import is_typeddict

from ragtt.verbs import Arg, Verb

__all__ = ["annotation", "body_model", "output_schema", "result_schema", "wraps_result"]


def annotation(arg: Arg) -> Any:
    """``arg``'s type with its help, range and choices, as pydantic validates it. A list also
    takes one item (``"at": "latest"`` is ``["latest"]``), as its repeatable flag does on the
    command line: a client that sends the one value it means gets it, not a 422."""
    kind: Any = Literal[arg.choices] if arg.choices is not None else arg.type
    if get_origin(kind) is list:
        (item,) = get_args(kind)
        kind = Annotated[kind | item, AfterValidator(_as_list)]
    if not arg.required:
        kind = kind | None
    return Annotated[kind, Field(description=arg.help, ge=arg.minimum, le=arg.maximum)]


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def body_model(verb: Verb, front: str, *, exclude: frozenset[str] = frozenset()) -> type[BaseModel]:
    """One model per verb; unknown fields are rejected so a misspelt one is a 422 that names it."""
    fields: dict[str, Any] = {
        a.name: (annotation(a), ... if a.required else a.default)
        for a in verb.args
        if front in a.fronts and a.name not in exclude
    }
    name = "".join(part.title() for part in verb.name.split("_")) + "Body"
    return create_model(name, __config__=ConfigDict(extra="forbid"), __doc__=verb.help, **fields)


@functools.cache
def _schema(kind: Any) -> dict[str, Any]:
    return TypeAdapter(kind).json_schema(mode="serialization")


def result_schema(verb: Verb) -> dict[str, Any]:
    """The JSON schema of what ``verb.to_json`` returns (self-contained: its ``$defs`` inside)."""
    if verb.result is None:
        raise TypeError(f"verb {verb.name!r} declares no result type (result=...; see ragtt.verbs.results)")
    return _schema(verb.result)


def wraps_result(verb: Verb) -> bool:
    """Whether MCP wraps the verb's JSON as ``{"result": ...}``: a tool's structured content is
    an object, so every result but a TypedDict (a list, a value that may be null) is wrapped."""
    return not is_typeddict(verb.result)


def output_schema(verb: Verb) -> dict[str, Any] | None:
    """The MCP tool's output schema: the result's, wrapped as ``wraps_result`` says (None for a
    verb that declares no result: the tool then lists none, which the front-end test fails)."""
    if verb.result is None:
        return None
    schema = dict(result_schema(verb))
    if not wraps_result(verb):
        return schema
    defs = schema.pop("$defs", None)
    wrapped: dict[str, Any] = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
    return wrapped if defs is None else {**wrapped, "$defs": defs}
