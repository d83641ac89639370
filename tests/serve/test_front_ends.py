"""The CLI, the %ragtt magics, the REST API and the MCP tools, each derived from the verb table
and compared: the same verbs, the same argument names, (CLI and magics) the same help, and
(REST and MCP) the same result types: every verb declares one, every route documents it, every
tool lists it as its output schema, and real calls return JSON that validates against it."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import mcp.types as types
import pytest
from fastapi.testclient import TestClient
from mcp import Client

import ragtt
from ragtt.cli import build_parser
from ragtt.serve import create_app
from ragtt.serve_mcp import create_server
from ragtt.verbs import VERBS, Arg, Verb
from ragtt.verbs.cli import groups
from ragtt.verbs.render import as_dict, as_text
from ragtt.verbs.schema import output_schema, result_schema, wraps_result
from ragtt_nb.magics import parser_for
from tests.serve.conftest import TEXTS, call_every_verb, run_in_own_loop

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
MAGIC_ONLY = {"diff": {"table"}, "eval": {"table"}, "drift": {"show_query", "table", "color_by"}, "events": {"last"}}
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


def list_tools(project: Path) -> dict[str, types.Tool]:
    """The tools as the SDK's own client lists them, from the server in this process."""
    server, worker = create_server(project, embedder=ragtt.HashEmbedder())
    found: dict[str, types.Tool] = {}

    async def listing() -> None:
        async with asyncio.timeout(60), Client(server) as client:
            found.update({t.name: t for t in (await client.list_tools()).tools})

    try:
        run_in_own_loop(listing, 90, "listing the MCP tools")
    finally:
        worker.close()
    return found


@pytest.fixture(scope="module")
def mcp_tools(tmp_path_factory: pytest.TempPathFactory) -> dict[str, types.Tool]:
    return list_tools(tmp_path_factory.mktemp("mcp") / "p")


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
    name: str, openapi: dict[str, Any], mcp_tools: dict[str, types.Tool]
) -> None:
    verb = VERBS[name]
    assert verb.route is not None, f"{name} has no REST route"
    assert rest_fields(openapi, *verb.route) == expected([verb], "rest")
    if verb.html_route is not None:
        assert rest_fields(openapi, "GET", verb.html_route) == expected([verb], "rest")
    assert set(mcp_tools[name].input_schema.get("properties", {})) == expected([verb], "mcp")


def test_every_front_end_has_every_verb(openapi: dict[str, Any], mcp_tools: dict[str, types.Tool]) -> None:
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


# Results: what each verb returns, declared once (``Verb.result``) and published by REST and MCP.


def missing_response_schemas(openapi: dict[str, Any]) -> list[str]:
    """Every operation whose 200 response documents no schema."""
    missing = []
    for path, operations in openapi["paths"].items():
        for method, operation in operations.items():
            content = operation.get("responses", {}).get("200", {}).get("content", {})
            if not content or not all(media.get("schema") for media in content.values()):
                missing.append(f"{method.upper()} {path}")
    return missing


def missing_output_schemas(tools: dict[str, types.Tool]) -> list[str]:
    return sorted(name for name, tool in tools.items() if (tool.output_schema or {}).get("type") != "object")


@pytest.mark.parametrize("name", sorted(VERBS))
def test_every_verb_declares_a_result_type(name: str) -> None:
    verb = VERBS[name]
    assert verb.result is not None, f"{name} declares no result type: add result=... (ragtt.verbs.results)"
    schema = result_schema(verb)
    assert schema.get("type") in ("object", "array") or "anyOf" in schema


def test_every_route_has_a_response_schema(openapi: dict[str, Any]) -> None:
    assert missing_response_schemas(openapi) == []
    for verb in VERBS.values():
        assert verb.route is not None
        method, path = verb.route
        documented = openapi["paths"][path][method.lower()]["responses"]["200"]["content"]["application/json"]
        assert documented["schema"], f"{verb.name}: {documented}"


def test_every_mcp_tool_lists_an_output_schema(mcp_tools: dict[str, types.Tool]) -> None:
    assert missing_output_schemas(mcp_tools) == []
    for name, tool in mcp_tools.items():
        assert tool.output_schema == output_schema(VERBS[name])


def test_a_verb_without_a_result_type_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the checks above catch: a verb declared without ``result=``."""
    bare = Verb(
        name="hand_added",
        help="a verb someone forgot to type",
        args=(Arg("query_id", str, "a run", required=True),),
        call=lambda p, a: p.verify(),
        to_json=as_dict,
        to_text=as_text,
        route=("GET", "/hand-added/{query_id}"),
    )
    monkeypatch.setitem(VERBS, bare.name, bare)
    with pytest.raises(TypeError, match="hand_added"):
        result_schema(bare)
    app = create_app(tmp_path / "rest", embedder=ragtt.HashEmbedder())
    assert missing_response_schemas(app.openapi()) == ["GET /hand-added/{query_id}"]
    assert missing_output_schemas(list_tools(tmp_path / "mcp")) == ["hand_added"]


def published(openapi: dict[str, Any], verb: Verb) -> dict[str, Any]:
    """The response schema REST publishes for ``verb``, with the components its $refs point into."""
    method, path = verb.route or ("", "")
    schema = openapi["paths"][path][method.lower()]["responses"]["200"]["content"]["application/json"]["schema"]
    return {**schema, "components": openapi["components"]}


@pytest.fixture(scope="module")
def rest_results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, list[Any]]]:
    """Every verb called over REST on a small history (two versions, snapshots, runs)."""
    home = tmp_path_factory.mktemp("results")
    found: dict[str, list[Any]] = {}

    def call(verb: str, **values: Any) -> Any:
        method, path = VERBS[verb].route or ("", "")
        for key in [k for k in values if "{" + k + "}" in path]:
            path = path.replace("{" + key + "}", str(values.pop(key)))
        response = client.post(path, json=values) if method == "POST" else client.get(path, params=values)
        assert response.status_code == 200, (verb, response.text)
        found.setdefault(verb, []).append(response.json())
        return response.json()

    # the verbs' files (a suite, a backup) go beside the project: the server may use that folder
    with TestClient(create_app(home / "p", embedder=ragtt.HashEmbedder(), files_root=home)) as client:
        call_every_verb(call, home)
        yield found


def test_every_verb_is_called_for_its_result(rest_results: dict[str, list[Any]]) -> None:
    assert set(rest_results) == set(VERBS)
    assert None in rest_results["snapshot"]  # the unchanged if_changed snapshot: null, as declared


@pytest.mark.parametrize("name", sorted(VERBS))
def test_real_results_validate_against_the_declared_schemas(
    name: str, rest_results: dict[str, list[Any]], openapi: dict[str, Any]
) -> None:
    for data in rest_results[name]:
        jsonschema.validate(data, result_schema(VERBS[name]))
        jsonschema.validate(data, published(openapi, VERBS[name]))


def closed(schema: Any) -> Any:
    """``schema`` with every object that lists its properties closed to others."""
    if isinstance(schema, dict):
        out = {k: closed(v) for k, v in schema.items()}
        if "properties" in schema and isinstance(schema["properties"], dict):
            out["additionalProperties"] = False
        return out
    return [closed(v) for v in schema] if isinstance(schema, list) else schema


@pytest.mark.parametrize("name", sorted(VERBS))
def test_the_declared_types_name_every_key_a_result_has(name: str, rest_results: dict[str, list[Any]]) -> None:
    """The schemas allow keys they do not name (a client keeps working when a result grows), so
    this is where a key added to a result but not to ragtt/verbs/results.py shows."""
    for data in rest_results[name]:
        jsonschema.validate(data, closed(result_schema(VERBS[name])))


def test_a_result_that_breaks_its_type_fails_validation(rest_results: dict[str, list[Any]]) -> None:
    query = dict(rest_results["query"][0], index_version="latest")
    with pytest.raises(jsonschema.ValidationError, match="latest"):
        jsonschema.validate(query, result_schema(VERBS["query"]))
    grown = dict(rest_results["verify"][0], new_key=1)
    jsonschema.validate(grown, result_schema(VERBS["verify"]))
    with pytest.raises(jsonschema.ValidationError, match="new_key"):
        jsonschema.validate(grown, closed(result_schema(VERBS["verify"])))


def test_mcp_results_validate_against_the_listed_output_schemas(tmp_path: Path) -> None:
    """The SDK's client checks structured content against a tool's output schema on every call."""
    server, worker = create_server(tmp_path / "p", embedder=ragtt.HashEmbedder(), files_root=tmp_path)
    checked: dict[str, Any] = {}

    async def session() -> None:
        async with asyncio.timeout(120), Client(server) as client:
            schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}

            async def call(name: str, **values: Any) -> Any:
                result = await client.call_tool(name, values)  # raises if it breaks the schema
                assert not result.is_error, result.content
                assert result.structured_content is not None
                jsonschema.validate(result.structured_content, schemas[name])
                checked[name] = result.structured_content
                return result.structured_content["result"] if wraps_result(VERBS[name]) else result.structured_content

            await call("ingest", texts=TEXTS)
            await call("snapshot", label="first")
            assert await call("snapshot", label="x-{version}", if_changed=True) is None
            now = (await call("query", text="refunds", generate=False))["query_id"]
            await call("replay", query_id=now)
            await call("diff", left=now, right=now)
            assert len(await call("trace", query_id=now)) > 1
            await call("snapshots")
            await call("verify")

    try:
        run_in_own_loop(session, 150, "calling the MCP tools")
    finally:
        worker.close()
    assert set(checked) == {"ingest", "snapshot", "query", "replay", "diff", "trace", "snapshots", "verify"}
