"""The argparse the CLI and the magics are generated from (``ragtt.verbs.cli``) takes the
command lines users type."""

from __future__ import annotations

import argparse

import pytest

from ragtt.verbs import VERBS, Verb, VerbUsageError
from ragtt.verbs.cli import add_arguments, parse, pick
from ragtt.verbs.cli import groups as verb_groups


def groups() -> dict[str, list[Verb]]:
    return verb_groups(list(VERBS.values()))


def generated(cli: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"ragtt {cli}", exit_on_error=False)
    add_arguments(parser, groups()[cli])
    return parser


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


@pytest.mark.parametrize(
    ("line", "name", "values"),
    [
        ("diff L R", "diff", {"left": "L", "right": "R"}),
        ("replay Q1", "replay", {"query_id": "Q1", "generate": False}),
        ("bisect Q source:x", "bisect", {"query": "Q", "predicate": "source:x"}),
        ("query how many days", "query", {"text": "how many days", "generate": True}),
        (
            "bisect Q --predicate source:x --versions 3,7 --versions 9",
            "bisect",
            {"query": "Q", "predicate": "source:x", "versions": [3, 7, 9]},
        ),
    ],
)
def test_bare_words_fill_the_required_flags_in_order(line: str, name: str, values: dict[str, object]) -> None:
    cli, *words = line.split()
    _, verb, got = parse(generated(cli), words, groups()[cli])
    assert verb.name == name and got == values


def test_stray_words_and_args_of_the_other_verb_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse(generated("diff"), ["L", "R", "extra"], groups()["diff"])
    assert "unrecognized arguments: L R extra" in capsys.readouterr().err
    with pytest.raises(VerbUsageError, match="replay with --query-id takes no --top-k"):
        parse(generated("replay"), ["--query-id", "Q", "--top-k", "3"], groups()["replay"])
    # a text of two words, unquoted: its second word filled --query-id, which the user never typed
    with pytest.raises(
        VerbUsageError, match=r"takes no --text \(a word without a flag was taken: 'version' as --query-id"
    ):
        parse(generated("replay"), ["--text", "python", "version", "--at", "3"], groups()["replay"])
