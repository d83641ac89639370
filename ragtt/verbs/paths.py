"""A verb's path arguments confined, before a remote front end runs it (``ragtt.server_paths``
holds the rule; this applies it to every ``Arg(server_path=True)`` of a verb)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt.server_paths import confine_path

if TYPE_CHECKING:
    from ragtt.verbs.model import Verb

__all__ = ["confine_paths"]


def confine_paths(verb: Verb, values: dict[str, Any], root: Path) -> dict[str, Any]:
    """``values`` with every path argument of ``verb`` confined to ``root``."""
    confined = dict(values)
    for arg in verb.args:
        value = confined.get(arg.name)
        if not arg.server_path or value is None:
            continue
        what = f"{verb.name}: {arg.name}"
        if isinstance(value, list):
            confined[arg.name] = [confine_path(v, root, what) for v in value]
        elif isinstance(value, dict):  # {name: path}
            confined[arg.name] = {k: confine_path(v, root, f"{what} {k!r}") for k, v in value.items()}
        else:
            confined[arg.name] = confine_path(value, root, what)
    return confined
