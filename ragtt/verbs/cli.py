"""argparse from the verb table: what ``ragtt VERB`` and ``%ragtt VERB`` are built from.

``describe(verbs)`` is a sub-command's help, description and epilog; ``add_arguments(parser,
verbs)`` declares the args of one or more verbs that share a sub-command (``replay`` holds
``replay`` and ``replay_as_of``); ``parse(parser, words, verbs)`` parses a command line and
returns the verb to run and its values (``pick`` does the choosing). Both front ends call the
same three, so ``%ragtt help VERB`` and ``ragtt VERB --help`` say the same. Nothing here opens
a project or prints.

How args become options: ``add_argument(*arg.flags or (arg.name,), ...)``; no flags means
positional (``words``: it takes every remaining word, joined); ``list`` types become
``nargs="+"`` (positional) or ``action="append"`` (flag; ``list[int]`` flags also take
``3,7,12``); a ``bool`` with default False is ``store_true``, one with default True is
``BooleanOptionalAction`` (``--generate/--no-generate``); ``dict`` types take a JSON object;
``choices``, ``minimum``/``maximum`` are checked by ``cli_type``. Verbs that share a ``cli``
name (``replay`` and ``replay_as_of``) share one sub-parser, and ``pick`` runs the first whose
required args were all given (an arg only the other verb takes is an error). Bare words left
over fill the first verb's required flags in order (``diff L R``, ``replay ID``). The global
options (``--project``, ``--json`` ...) and output options (``ragtt.cli.OWN_OPTIONS``) belong to
each front end, not to a verb.
"""

from __future__ import annotations

import argparse
import json
import typing
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from ragtt.verbs.model import Arg, Verb, VerbUsageError

__all__ = [
    "HelpFormatter",
    "add_arguments",
    "add_store_options",
    "cli_type",
    "describe",
    "fill",
    "groups",
    "parse",
    "pick",
]


def cli_type(arg: Arg) -> Callable[[str], Any]:
    """The argparse ``type=`` for ``arg``: its range and choices, checked with a message that says what came."""
    base = typing.get_args(arg.type)[0] if typing.get_origin(arg.type) is list else arg.type

    def convert(text: str) -> Any:
        if typing.get_origin(base) is dict:
            try:
                value: Any = json.loads(text)
            except json.JSONDecodeError as exc:
                raise argparse.ArgumentTypeError(f"expected a JSON object; got {text!r} ({exc})") from None
            if not isinstance(value, dict):
                raise argparse.ArgumentTypeError(f"expected a JSON object, {{...}}; got {text!r}")
            return value
        if base is int:
            digits = text.removeprefix("-")
            if not (digits.isascii() and digits.isdigit()):  # '²' is a digit to Python, not to a user
                raise argparse.ArgumentTypeError(f"expected a whole number; got {text!r}")
            value = int(text)
        elif base is float:
            try:
                value = float(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"expected a number; got {text!r}") from None
        elif base is datetime:
            try:
                value = datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"expected an ISO datetime, e.g. 2026-03-01T12:00Z; got {text!r}"
                ) from None
        else:
            value = text
        low = arg.minimum if arg.minimum is not None else float("-inf")
        high = arg.maximum if arg.maximum is not None else float("inf")
        if base in (int, float) and value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low:g}; got {text!r}")
        if base in (int, float) and not low <= value <= high:  # NaN fails this too
            raise argparse.ArgumentTypeError(f"expected a number from {low:g} to {high:g}; got {text!r}")
        if arg.choices is not None and value not in arg.choices:
            raise argparse.ArgumentTypeError(f"expected one of {', '.join(arg.choices)}; got {text!r}")
        return value

    return convert


def _is_bool(kind: Any) -> bool:
    return kind is bool or kind == bool | None


class _Words(argparse.Action):
    """A positional text typed without quotes: its words joined by spaces."""

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any, option_string: Any = None) -> None:
        setattr(namespace, self.dest, " ".join(values) if values else None)


class HelpFormatter(argparse.HelpFormatter):
    """Help text at one column whatever else a front end adds, so a verb's help reads the
    same in ``ragtt VERB --help`` and ``%ragtt help VERB``."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, width)
        self._action_max_length = max_help_position


def groups(verbs: Sequence[Verb]) -> dict[str, list[Verb]]:
    """The verbs by sub-command (``cli``), in table order: ``replay`` holds two."""
    found: dict[str, list[Verb]] = {}
    for verb in verbs:
        found.setdefault(verb.cli, []).append(verb)
    return found


def _spelling(arg: Arg) -> str:
    return arg.flags[0] if arg.flags else arg.name.upper()


def _variadic(arg: Arg) -> bool:
    return typing.get_origin(arg.type) is list or arg.words


def _fillable(verbs: Sequence[Verb]) -> list[Arg]:
    """The first verb's required single-value flags, in table order: bare words left over
    fill them (``diff L R``, ``replay ID``); none where a positional takes every word."""
    args = [a for a in verbs[0].args if "cli" in a.fronts]
    if any(_variadic(a) and not a.flags for a in args):
        return []
    return [a for a in args if a.flags and a.required and not _is_bool(a.type) and not _variadic(a)]


def describe(verbs: Sequence[Verb]) -> dict[str, str]:
    """``help``, ``description`` and ``epilog`` of the sub-command that runs ``verbs``."""
    if len(verbs) == 1:
        text = verbs[0].help
    else:
        text = "; or ".join(f"{v.help} ({', '.join(_spelling(a) for a in v.args if a.required)})" for v in verbs)
    fillable = _fillable(verbs)
    epilog = ""
    if fillable:
        names = " ".join(a.name.upper() for a in fillable)
        epilog = f"{names} may also come as bare words, in this order."
    return {"help": text, "description": text, "epilog": epilog}


def add_arguments(parser: argparse.ArgumentParser, verbs: Sequence[Verb]) -> None:
    """Every CLI arg of ``verbs`` on ``parser``, once each (verbs sharing a sub-command share args).

    Required flags are checked by ``pick``, not argparse: a bare word may fill them, and a
    front end may fill a repeatable one from a file.
    """
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
                item = typing.get_args(arg.type)[0] if typing.get_origin(arg.type) is list else None
                if item is int and arg.flags:  # --versions 3,7,12 (and repeatable)
                    kwargs["action"] = "extend"
                    kwargs["type"] = _comma_separated(cli_type(arg))
                elif item is not None:
                    if arg.flags:
                        kwargs["action"] = "append"
                    else:
                        kwargs["nargs"] = "+" if required else "*"
                elif arg.words and not arg.flags:
                    kwargs["nargs"] = "+" if required else "*"
                    kwargs["action"] = _Words
                elif not arg.flags and not required:
                    kwargs["nargs"] = "?"
            if arg.flags:
                parser.add_argument(*arg.flags, dest=arg.name, **kwargs)
            else:
                parser.add_argument(arg.name, **kwargs)


def _comma_separated(convert: Callable[[str], Any]) -> Callable[[str], list[Any]]:
    def split(text: str) -> list[Any]:
        return [convert(part.strip()) for part in text.split(",")]

    return split


def add_store_options(parser: Any) -> list[argparse.Action]:
    """``--events-uri`` and ``--index-uri`` on a parser or argument group: where a project's
    stores live, when not in its folder."""
    events = parser.add_argument(
        "--events-uri",
        default=None,
        metavar="URI",
        help="event log in Postgres (postgresql://...; default: $RAGTT_EVENTS_URI, else the project's events.db)",
    )
    index = parser.add_argument(
        "--index-uri",
        default=None,
        metavar="URI",
        help="index on object storage (s3://bucket/prefix; credentials from the AWS_* environment; "
        "default: $RAGTT_INDEX_URI, else the project's lancedb/)",
    )
    return [events, index]


def parse(
    parser: argparse.ArgumentParser, words: Sequence[str], verbs: Sequence[Verb]
) -> tuple[argparse.Namespace, Verb, dict[str, Any]]:
    """Parse ``words``; bare words argparse leaves over fill the required flags not given, in
    table order (``diff L R`` is ``diff --left L --right R``). Returns the namespace (for the
    front end's own options), the verb and its values."""
    namespace, extra = parser.parse_known_args(list(words))
    verb, values = fill(parser, namespace, extra, verbs)
    return namespace, verb, values


def fill(
    parser: argparse.ArgumentParser, namespace: argparse.Namespace, extra: Sequence[str], verbs: Sequence[Verb]
) -> tuple[Verb, dict[str, Any]]:
    """``parse`` after ``parse_known_args``: the leftover ``extra`` words fill the open flags."""
    open_slots = [a for a in _fillable(verbs) if getattr(namespace, a.name, None) in (None, [])]
    if any(word.startswith("-") and word != "-" for word in extra) or len(extra) > len(open_slots):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    for word, arg in zip(extra, open_slots, strict=False):
        try:
            value = cli_type(arg)(word)
        except argparse.ArgumentTypeError as exc:
            parser.error(f"argument {arg.flags[0]}: {exc}")
        setattr(namespace, arg.name, [value] if typing.get_origin(arg.type) is list else value)
    try:
        return pick(namespace, verbs)
    except VerbUsageError as exc:
        if not extra:
            raise
        # the user never typed the flag a bare word filled (`replay --text two words`): say so
        taken = ", ".join(f"{word!r} as {arg.flags[0]}" for word, arg in zip(extra, open_slots, strict=False))
        raise VerbUsageError(
            f"{exc} (a word without a flag was taken: {taken}; quote a text of several words)"
        ) from None


def pick(namespace: argparse.Namespace, verbs: Sequence[Verb]) -> tuple[Verb, dict[str, Any]]:
    """The first of ``verbs`` whose required args were all given, with the values given for it."""
    given = {k: v for k, v in vars(namespace).items() if v is not None and v != []}
    for verb in verbs:
        if all(a.name in given for a in verb.args if a.required):
            names = {a.name for a in verb.args}
            stray = [
                a
                for other in verbs
                for a in other.args
                if a.name not in names and a.name in given and given[a.name] != a.default
            ]
            if stray:
                raise VerbUsageError(f"{verb.cli} with {_needs(verb)} takes no {_spelling(stray[0])}")
            return verb, {a.name: given[a.name] for a in verb.args if a.name in given}
    raise VerbUsageError(f"{verbs[0].cli} needs {'; or '.join(_needs(v) for v in verbs)}")


def _needs(verb: Verb) -> str:
    return " ".join(_spelling(a) for a in verb.args if a.required)
