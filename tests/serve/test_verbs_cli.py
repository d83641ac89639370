"""The argparse the lead will generate the CLI from takes today's command lines."""

from __future__ import annotations

import argparse

import pytest

from ragtt.cli import build_parser
from ragtt.verbs import VERBS, Verb, VerbUsageError
from ragtt.verbs.cli import add_arguments, pick

# Options that are the CLI front end's own (output files, global options), not a verb's.
# The global options say which project (and which stores) to open, not what to do: each front
# end has its own, as the table's docstring says.
FRONT_END_ONLY = {
    "--project",
    "--events-uri",
    "--index-uri",
    "--embedder",
    "--json",
    "--help",
    "-h",
    "--html",
    "--out",
    "--queries-file",
    "-o",
}


def groups() -> dict[str, list[Verb]]:
    found: dict[str, list[Verb]] = {}
    for verb in VERBS.values():
        found.setdefault(verb.cli, []).append(verb)
    return found


def generated(cli: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"ragtt {cli}", exit_on_error=False)
    add_arguments(parser, groups()[cli])
    return parser


def current(cli: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = build_parser()
    for word in cli.split():
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return parser


@pytest.mark.parametrize("cli", sorted(groups()))
def test_every_flag_of_todays_cli_is_in_the_table(cli: str) -> None:
    today = {flag for action in current(cli)._actions for flag in action.option_strings} - FRONT_END_ONLY
    table = {flag for action in generated(cli)._actions for flag in action.option_strings}
    assert today <= table, f"ragtt {cli}: the table lacks {sorted(today - table)}"


@pytest.mark.parametrize(
    ("line", "name", "values"),
    [
        ("query refund --top-k 3 --no-generate", "query", {"text": "refund", "top_k": 3, "generate": False}),
        ("replay --query-id Q1", "replay", {"query_id": "Q1", "generate": False}),
        ("replay --text refund --as-of r1", "replay_as_of", {"text": "refund", "at": "r1", "generate": False}),
        (
            "replay --text refund --at 3 --mode bm25",
            "replay_as_of",
            {"text": "refund", "at": "3", "mode": "bm25", "generate": False},
        ),
        ("diff --left L --right R", "diff", {"left": "L", "right": "R"}),
        ("drift a b --threshold 0.5", "drift", {"a": "a", "b": "b", "threshold": 0.5}),
        (
            "bisect Q --predicate source:x --versions 3",
            "bisect",
            {"query": "Q", "predicate": "source:x", "versions": [3]},
        ),
        ("ingest docs/ --no-prune", "ingest", {"paths": ["docs/"], "prune": False, "follow_symlinks": False}),
        (
            "ingest docs/ --engine ray --ray-address 10.0.0.5:6379",
            "ingest",
            {"paths": ["docs/"], "follow_symlinks": False, "engine": "ray", "ray_address": "10.0.0.5:6379"},
        ),
        ("test capture --name g --query a --query b", "regression_capture", {"name": "g", "queries": ["a", "b"]}),
    ],
)
def test_todays_command_lines_pick_the_verb_and_values(line: str, name: str, values: dict[str, object]) -> None:
    words = line.split()
    cli = " ".join(words[:2]) if words[0] == "test" else words[0]
    rest = words[len(cli.split()) :]
    verb, got = pick(generated(cli).parse_args(rest), groups()[cli])
    assert verb.name == name and got == values


def test_pick_says_what_each_verb_needs() -> None:
    with pytest.raises(VerbUsageError, match="--query-id; or --text --at"):
        pick(generated("replay").parse_args([]), groups()["replay"])
    with pytest.raises(argparse.ArgumentError):
        generated("query").parse_args(["x", "--top-k", "0"])
