"""argparse from the verb table: what ``ragtt VERB`` and ``%ragtt VERB`` will be built from.

``add_arguments(parser, verbs)`` declares the args of one or more verbs that share a
sub-command (``replay`` holds ``replay`` and ``replay_as_of``); ``pick(namespace, verbs)``
returns the verb to run and its values. Nothing here opens a project or prints.
"""

from __future__ import annotations

import argparse
import typing
from collections.abc import Sequence
from typing import Any

from ragtt.verbs import Verb, VerbUsageError, cli_type

__all__ = ["add_arguments", "pick"]


def _is_bool(kind: Any) -> bool:
    return kind is bool or kind == bool | None


def add_arguments(parser: argparse.ArgumentParser, verbs: Sequence[Verb]) -> None:
    """Every CLI arg of ``verbs`` on ``parser``, once each (verbs sharing a sub-command share args)."""
    seen: dict[str, bool] = {}  # name -> required by every verb that has it
    for verb in verbs:
        for arg in verb.args:
            if "cli" in arg.fronts:
                seen[arg.name] = seen.get(arg.name, True) and arg.required
    for name in seen:
        if any(name not in {a.name for a in v.args} for v in verbs):
            seen[name] = False  # only some verbs need it: pick() checks it
    added: set[str] = set()
    for verb in verbs:
        for arg in verb.args:
            if "cli" not in arg.fronts or arg.name in added:
                continue
            added.add(arg.name)
            required = seen[arg.name]
            kwargs: dict[str, Any] = {"help": arg.help}
            if _is_bool(arg.type):
                kwargs["action"] = "store_true" if arg.default is False else argparse.BooleanOptionalAction
                kwargs["default"] = arg.default
            else:
                kwargs["type"] = cli_type(arg)
                if arg.choices is not None:
                    kwargs["metavar"] = "{" + ",".join(arg.choices) + "}"
                if typing.get_origin(arg.type) is list:
                    if arg.flags:
                        kwargs["action"] = "append"
                    else:
                        kwargs["nargs"] = "+" if required else "*"
                elif not arg.flags and not required:
                    kwargs["nargs"] = "?"
            if arg.flags:  # a repeatable flag is checked by pick(), so a front end may fill it from a file
                strict = required and not _is_bool(arg.type) and kwargs.get("action") != "append"
                parser.add_argument(*arg.flags, dest=arg.name, required=strict, **kwargs)
            else:
                parser.add_argument(arg.name, **kwargs)


def pick(namespace: argparse.Namespace, verbs: Sequence[Verb]) -> tuple[Verb, dict[str, Any]]:
    """The first of ``verbs`` whose required args were all given, with the values given for it."""
    given = {k: v for k, v in vars(namespace).items() if v is not None and v != []}
    for verb in verbs:
        if all(a.name in given for a in verb.args if a.required):
            return verb, {a.name: given[a.name] for a in verb.args if a.name in given}
    needs = "; or ".join(
        " ".join(a.flags[0] if a.flags else a.name.upper() for a in v.args if a.required) for v in verbs
    )
    raise VerbUsageError(f"{verbs[0].cli} needs {needs}")
