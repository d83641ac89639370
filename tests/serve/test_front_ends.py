"""The CLI, the %ragtt magics, the REST API and the MCP tools, each derived from the verb table
and compared: the same verbs, the same argument names, and (CLI and magics) the same help."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

import pytest
from mcp import Client

import ragtt
from ragtt.cli import build_parser
from ragtt.serve import create_app
from ragtt.serve_mcp import create_server
from ragtt.verbs import VERBS, Verb
from ragtt.verbs.cli import groups
from ragtt_nb.magics import parser_for
from tests.serve.conftest import run_in_own_loop

GLOBAL = {"project", "embedder", "events_uri", "index_uri", "json"}
# What each front end adds of its own (files to read or write; display). Pinned here, so an
# option hand-added to one front end fails this test until someone decides it belongs there.
CLI_ONLY = {
    "diff": {"html"},
    "events": {"out"},
    "eval": {"out"},
    "test capture": {"queries_file"},
    "compare-configs": {"queries_file"},
}
MAGIC_ONLY = {"diff": {"table"}, "drift": {"show_query", "table", "color_by"}, "events": {"last"}}
OWN_SECTIONS = ("global options", "only in the CLI", "only in notebooks")
GROUPS = groups(list(VERBS.values()))


def expected(verbs: list[Verb], front: str) -> set[str]:
    return {a.name for v in verbs for a in v.args if front in a.fronts}


def dests(parser: argparse.ArgumentParser) -> set[str]:
    return {a.dest for a in parser._actions if not isinstance(a, argparse._HelpAction)}


def cli_parser(cli: str) -> argparse.ArgumentParser:
    parser = build_parser()
    for word in cli.split():
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return parser


@pytest.fixture(scope="module")
def openapi(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    app = create_app(tmp_path_factory.mktemp("rest") / "p", embedder=ragtt.HashEmbedder())
    return app.openapi()


@pytest.fixture(scope="module")
def mcp_tools(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The tools as the SDK's own client lists them, from the server in this process."""
    server, worker = create_server(tmp_path_factory.mktemp("mcp") / "p", embedder=ragtt.HashEmbedder())
    found: dict[str, dict[str, Any]] = {}

    async def listing() -> None:
        async with asyncio.timeout(60), Client(server) as client:
            found.update({t.name: t.input_schema for t in (await client.list_tools()).tools})

    try:
        run_in_own_loop(listing, 90, "listing the MCP tools")
    finally:
        worker.close()
    return found


def rest_fields(openapi: dict[str, Any], method: str, path: str) -> set[str]:
    operation = openapi["paths"][path][method.lower()]
    names = {p["name"] for p in operation.get("parameters", [])}
    if "requestBody" in operation:
        ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        names |= set(openapi["components"]["schemas"][ref.rsplit("/", 1)[-1]]["properties"])
    return names


@pytest.mark.parametrize("cli", sorted(GROUPS))
def test_cli_and_magic_take_the_tables_arguments(cli: str) -> None:
    verbs = GROUPS[cli]
    assert dests(cli_parser(cli)) - GLOBAL - CLI_ONLY.get(cli, set()) == expected(verbs, "cli")
    assert dests(parser_for(cli)) - MAGIC_ONLY.get(cli, set()) == expected(verbs, "magic")


@pytest.mark.parametrize("name", sorted(VERBS))
def test_rest_and_mcp_take_the_tables_arguments(
    name: str, openapi: dict[str, Any], mcp_tools: dict[str, dict[str, Any]]
) -> None:
    verb = VERBS[name]
    assert verb.route is not None, f"{name} has no REST route"
    assert rest_fields(openapi, *verb.route) == expected([verb], "rest")
    if verb.html_route is not None:
        assert rest_fields(openapi, "GET", verb.html_route) == expected([verb], "rest")
    assert set(mcp_tools[name].get("properties", {})) == expected([verb], "mcp")


def test_every_front_end_has_every_verb(openapi: dict[str, Any], mcp_tools: dict[str, dict[str, Any]]) -> None:
    assert set(mcp_tools) == set(VERBS)
    routes = {path for path in openapi["paths"]}
    assert {v.route[1] for v in VERBS.values() if v.route} <= routes
    assert {"snapshot_diff", "regression_run", "regression_capture", "compare_configs"} <= set(VERBS)
    assert {"snapshot-diff", "test run", "test capture", "compare-configs"} <= set(GROUPS)
    assert VERBS["compare_configs"].route == ("POST", "/compare-configs")


def sections(help_text: str, prog: str) -> list[str]:
    """The help's sections without the usage (it lists every option of that front end) and
    the front end's own groups; the prog name is made the same."""
    parts = help_text.replace(prog, "PROG").split("\n\n")
    return [p.strip("\n") for p in parts[1:] if not p.startswith(OWN_SECTIONS)]


@pytest.mark.parametrize("cli", sorted(GROUPS))
def test_magic_help_is_the_cli_help(cli: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    ours, theirs = cli_parser(cli).format_help(), parser_for(cli).format_help()
    assert sections(ours, f"ragtt {cli}") == sections(theirs, f"%ragtt {cli}")
    assert any(part.startswith(("options:", "positional arguments:")) for part in sections(ours, cli))


def test_a_hand_added_option_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the comparisons above catch: an option added to one front end only."""
    parser = cli_parser("query")
    parser.add_argument("--rerank", action="store_true")
    assert dests(parser) - GLOBAL != expected(GROUPS["query"], "cli")
