"""The verb table's model: ``Arg``, ``Verb``, the registry ``VERBS`` and ``verb()``.

Nothing here imports a verb's implementation, lancedb, polars, pydantic or FastAPI: the area
modules (``ragtt.verbs.ingest`` ...) import this one, declare their verbs and register them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from ragtt.errors import RagttError

if TYPE_CHECKING:
    from ragtt.errors import ProjectDamagedError
    from ragtt.index.embedders import Embedder
    from ragtt.project import Project

__all__ = ["MODES", "VERBS", "Arg", "At", "Verb", "VerbUsageError", "utc", "verb"]

At = int | str  # a version number, a snapshot label or an ISO datetime (Project.resolve_version)
MODES = ("vector", "bm25", "hybrid")


def utc(when: datetime | None) -> datetime | None:
    """A datetime argument as the verbs pass it on: a naive one (``2021-05-11``) means UTC."""
    return when.replace(tzinfo=UTC) if when is not None and when.tzinfo is None else when


class VerbUsageError(RagttError, TypeError):
    """A verb was called with arguments it does not take (or without one it needs)."""


@dataclass(frozen=True)
class Arg:
    """One argument of a verb. ``name`` is the keyword in Python, JSON bodies and MCP tools."""

    name: str
    type: Any  # str, int, float, bool, datetime, At, list[str], list[int], dict[str, str]
    help: str
    default: Any = None
    required: bool = False
    flags: tuple[str, ...] = ()  # CLI spellings, first is canonical; () = positional
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    fronts: frozenset[str] = frozenset({"cli", "rest", "mcp", "magic"})  # where it exists
    words: bool = False  # CLI and magics: a positional text that takes every remaining word, joined by spaces
    # A file or folder on the machine that runs the verb: remote front ends keep it inside one
    # folder (ragtt/server_paths.py).
    server_path: bool = False


def _no_failure(result: Any) -> int:
    return 0


@dataclass(frozen=True, kw_only=True)
class Verb:
    """One verb, declared with keywords. ``result`` is the type of what ``to_json`` returns (a
    TypedDict, ``list[...]`` of one, or ``... | None``): REST documents it as the route's
    response schema and MCP as the tool's output schema; ``tests/serve/test_front_ends.py``
    fails for a verb without one and checks real calls against it."""

    name: str
    help: str
    args: tuple[Arg, ...]
    call: Callable[[Project, dict[str, Any]], Any]
    to_json: Callable[[Any], Any]
    to_text: Callable[[Any], str]
    result: Any = None
    route: tuple[Literal["GET", "POST"], str] | None = None
    html: Callable[[Any], str] | None = None
    html_route: str | None = None
    writes_index: bool = False  # serialized by servers: one writer at a time
    # Whether a call may change anything: the project (an event logged, a version, a file) or
    # a file it names (backup's folder, a captured suite). Read-only servers run only the verbs
    # that declare False; a verb that says nothing counts as writing, so a new one is refused
    # until its author says otherwise (tests/core/test_verb_writes.py checks every declaration).
    writes: bool = True
    creates: bool = False  # may create the project (only ingest)
    cli_name: str | None = None
    exit_code: Callable[[Any], int] = _no_failure  # the CLI's exit status for a result
    # The text with the project still open (versions named by their snapshot labels); else to_text.
    to_text_in: Callable[[Any, Project], str] | None = None
    # A verb that needs no project (compare_configs makes its own): how a front end with none
    # open calls it, with the embedder it would open projects with (None: ragtt's default).
    alone: Callable[[Embedder | None, dict[str, Any]], Any] | None = None
    # A result for damage found while opening the project (verify: damage is a finding).
    on_damage: Callable[[ProjectDamagedError], Any] | None = None

    @property
    def cli(self) -> str:
        return self.cli_name or self.name.replace("_", "-")

    def __post_init__(self) -> None:
        if (self.writes_index or self.creates) and not self.writes:
            raise ValueError(f"verb {self.name!r} writes the index (writes_index or creates) but declares writes=False")

    def run(self, proj: Project, values: dict[str, Any]) -> Any:
        """Call the verb with ``values`` (missing optional args take their defaults)."""
        return self.call(proj, self.complete(values))

    def run_alone(self, embedder: Embedder | None, values: dict[str, Any]) -> Any:
        """Call a verb that needs no project (``alone`` is set) with ``values``."""
        if self.alone is None:
            raise VerbUsageError(f"{self.name} needs a project")
        return self.alone(embedder, self.complete(values))

    def complete(self, values: dict[str, Any]) -> dict[str, Any]:
        """``values`` with every arg, defaults filled in; unknown and missing args are usage errors."""
        known = {a.name for a in self.args}
        unknown = sorted(set(values) - known)
        if unknown:
            raise VerbUsageError(f"{self.name} takes no argument {unknown[0]!r}; its arguments are {sorted(known)}")
        full = {a.name: values.get(a.name, a.default) for a in self.args}
        missing = [a.name for a in self.args if a.required and full[a.name] is None]
        if missing:
            raise VerbUsageError(f"{self.name} needs {missing[0]!r}")
        return full


VERBS: dict[str, Verb] = {}


def verb(v: Verb) -> Verb:
    """Register ``v`` in ``VERBS`` (in import order: the order of front ends' listings)."""
    if v.name in VERBS:
        raise ValueError(f"verb {v.name!r} is declared twice")
    VERBS[v.name] = v
    return v
