"""``ragtt mcp``: the verbs as MCP tools over stdio (``pip install 'ragtt[mcp]'``).

Each verb of the table (``ragtt.verbs``) is one tool with the same name and argument names;
its input schema is the JSON schema of the verb's pydantic model, the same one the REST
bodies validate against, and its output schema that of the verb's ``result`` type. A tool
returns the verb's JSON as text and as structured content (wrapped as ``{"result": ...}``
unless the result is an object: ``ragtt.verbs.schema.wraps_result``);
a bad argument or a ragtt error is a tool error whose text says what was wrong.

Every call runs on one worker thread that holds the one open Project (SQLite connections
belong to the thread that uses them), so calls run one at a time, as a stdio client sends them.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp.types as types
from mcp.server import Server
from pydantic import BaseModel, ValidationError

from ragtt import __version__
from ragtt.errors import EmbedderChangedError, RagttError
from ragtt.server_paths import files_root as files_root_for
from ragtt.verbs import VERBS, Verb, dumps
from ragtt.verbs.paths import confine_paths
from ragtt.verbs.schema import body_model, output_schema, wraps_result

if TYPE_CHECKING:
    from ragtt.index.embedders import Embedder
    from ragtt.project import Project

__all__ = ["create_server", "run_stdio"]


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


class _Worker:
    """The one thread that opens and uses the Project.

    A re-embed by another process makes the open Project stale (EmbedderChangedError): the
    worker then opens it afresh, with the project's new embedder unless the server was given
    one (a mismatch is then the caller's error to see), and runs the call once more."""

    def __init__(self, path: Path, embedder: Embedder | None, files_root: str | Path | None = None) -> None:
        self.path = path
        self.embedder = embedder
        self.files_root = files_root_for(path, files_root)  # where callers' path arguments must stay
        self._given = embedder is not None
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragtt-mcp")
        self.project: Project | None = None

    def _run(self, verb: Verb, values: dict[str, Any]) -> Any:
        try:
            return self._call(verb, values)
        except EmbedderChangedError:
            self._close_project()
            if not self._given:
                self.embedder = None
            return self._call(verb, values)

    def _call(self, verb: Verb, values: dict[str, Any]) -> Any:
        if self.project is None:
            from ragtt.project import Project

            self.project = Project.open(self.path, embedder=self.embedder, progress=False, create=verb.creates)
            self.embedder = self.project.embedder  # loaded once, not once per reopen
        return json.loads(dumps(verb.to_json(verb.run(self.project, confine_paths(verb, values, self.files_root)))))

    def _close_project(self) -> None:
        if self.project is not None:
            self.project.close()
            self.project = None

    async def run(self, verb: Verb, values: dict[str, Any]) -> Any:
        return await asyncio.wrap_future(self.pool.submit(self._run, verb, values))

    def close(self) -> None:
        self.pool.submit(self._close_project).result()
        self.pool.shutdown()


def create_server(
    project_path: str | Path, *, embedder: Embedder | None = None, files_root: str | Path | None = None
) -> tuple[Server[Any], _Worker]:
    """The MCP server over ``project_path`` and the worker to close when it stops. Path
    arguments stay inside ``files_root`` (default ``$RAGTT_FILES_ROOT``, else the project's folder)."""
    worker = _Worker(Path(project_path).expanduser(), embedder, files_root)
    models: dict[str, type[BaseModel]] = {name: body_model(verb, "mcp") for name, verb in VERBS.items()}
    tools = [
        types.Tool(
            name=name,
            description=VERBS[name].help,
            input_schema=model.model_json_schema(),
            output_schema=output_schema(VERBS[name]),
        )
        for name, model in models.items()
    ]

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        verb = VERBS.get(params.name)
        if verb is None:
            return _error(f"no tool {params.name!r}; the tools are {', '.join(VERBS)}")
        try:
            values = models[verb.name].model_validate(params.arguments or {}).model_dump()
        except ValidationError as exc:
            return _error(f"{verb.name}: {exc}")
        try:
            data = await worker.run(verb, values)
        except RagttError as exc:
            return _error(f"{verb.name}: {exc}")
        structured = {"result": data} if wraps_result(verb) else data
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=dumps(data))], structured_content=structured
        )

    server: Server[Any] = Server("ragtt", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)
    return server, worker


def run_stdio(project_path: str | Path, *, embedder: Embedder | None = None) -> None:
    """Serve MCP on stdin/stdout until the client closes them."""
    import anyio
    from mcp.server.stdio import stdio_server

    from ragtt.tuning import tune_process

    tune_process()  # the server's process is ragtt's own (create_server alone tunes nothing)
    server, worker = create_server(project_path, embedder=embedder)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        worker.close()
