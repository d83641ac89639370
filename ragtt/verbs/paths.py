"""Paths a server's client names: confined to the folders the server may read.

On the CLI and in a notebook a path is the user's own. Over REST, MCP and the Jupyter server
extension it is a path on the server's machine, named by whoever can reach the server: an
``Arg`` declared with ``server_path=True`` is resolved there (relative to the project folder,
symlinks and ``..`` followed) and must lie inside one of ``server_roots``: the project folder,
and the folders listed in ``$RAGTT_SERVE_ROOTS`` (separated like ``$PATH``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt.errors import ConfigError

if TYPE_CHECKING:
    from ragtt.verbs.model import Verb

__all__ = ["ROOTS_ENV", "confine_args", "confined_path", "server_roots"]

ROOTS_ENV = "RAGTT_SERVE_ROOTS"


def server_roots(project: str | Path) -> list[Path]:
    """The folders a server over ``project`` reads its clients' paths from."""
    extra = [Path(p).expanduser() for p in os.environ.get(ROOTS_ENV, "").split(os.pathsep) if p.strip()]
    return [Path(project).expanduser(), *extra]


def confined_path(path: str | Path, roots: Sequence[Path], *, what: str = "the path") -> Path:
    """``path`` resolved (relative to the first root), if it lies inside one of ``roots``;
    else a ConfigError that names the roots and how to add one."""
    if not str(path).strip():
        raise ConfigError(f"{what} is empty")
    resolved_roots = [r.resolve() for r in roots]
    target = Path(path).expanduser()
    if not target.is_absolute():
        target = resolved_roots[0] / target
    target = target.resolve()
    if any(target.is_relative_to(root) for root in resolved_roots):
        return target
    listed = ", ".join(str(r) for r in resolved_roots)
    raise ConfigError(
        f"{what} {str(path)!r} is outside the folders this server reads ({listed}); put it in the project "
        f"folder, or start the server with {ROOTS_ENV} naming its folder"
    )


def confine_args(verb: Verb, values: dict[str, Any], project: str | Path) -> dict[str, Any]:
    """``values`` with each of ``verb``'s ``server_path`` args confined (``confined_path``)."""
    roots: list[Path] | None = None
    out = dict(values)
    for arg in verb.args:
        value = out.get(arg.name)
        if not arg.server_path or value is None:
            continue
        roots = roots or server_roots(project)
        out[arg.name] = str(confined_path(value, roots, what=f"{verb.name}'s {arg.name}"))
    return out
