"""The REST API, generated from the verb table (``ragtt.verbs``): one route per verb, whose
response schema in ``/openapi.json`` is the verb's declared result type (``Verb.result``).

Each worker thread opens its own ``Project`` (SQLite connections belong to one thread) and
keeps it; all of them share one embedder. Verbs that write the index run one at a time
behind a lock, on top of the project's own crash-safe write path; readers run concurrently,
on a bounded pool of worker threads (``threads``, default ``default_threads()``): the searches
run in Lance's own native thread pool without the GIL, so Python threads beyond a few per core
only contend for it, and each one more is one more Project to open cold. A burst of requests
waits its turn in order instead, which keeps the slowest request close to the typical one.
"""

from __future__ import annotations

import contextlib
import hmac
import inspect
import io
import ipaddress
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi import Path as PathParam
from fastapi import Query as QueryParam
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from ragtt import __version__
from ragtt.errors import ConfigError, RagttError
from ragtt.serve import docs, ui
from ragtt.verbs import VERBS, Verb, dumps
from ragtt.verbs.http import Projects, default_threads, error_body, status_for
from ragtt.verbs.schema import annotation, body_model

if TYPE_CHECKING:
    from ragtt.index.embedders import Embedder

__all__ = ["check_host", "create_app", "default_threads", "serve"]

ARROW = "application/vnd.apache.arrow.stream"
PARQUET = ("application/vnd.apache.parquet", "application/x-parquet")
# Served HTML never runs script: document text is escaped already, this is the second wall.
HTML_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


_BEARER = HTTPBearer(auto_error=False)


def _token_check(token: str | None) -> Callable[..., None]:
    def check(creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)]) -> None:
        if token is None:
            return
        if creds is None or not hmac.compare_digest(creds.credentials.encode(), token.encode()):
            raise HTTPException(
                401,
                "this server needs 'Authorization: Bearer <token>' (the --token it was started with)",
                headers={"WWW-Authenticate": "Bearer"},
            )

    return check


def _respond(result: Any, verb: Verb, request: Request) -> Response:
    accept = request.headers.get("accept", "")
    if hasattr(result, "write_ipc_stream") and (ARROW in accept or any(p in accept for p in PARQUET)):
        buf = io.BytesIO()
        if ARROW in accept:
            result.write_ipc_stream(buf)
            return Response(buf.getvalue(), media_type=ARROW)
        result.write_parquet(buf)
        return Response(buf.getvalue(), media_type=PARQUET[0])
    return Response(dumps(verb.to_json(result)), media_type="application/json")


def _endpoint(
    verb: Verb, pool: Projects, path: str, render: Callable[[Any, Request], Response], method: str
) -> Callable[..., Response]:
    """A FastAPI endpoint whose signature FastAPI reads to validate and document the verb."""
    in_path = set(re.findall(r"{(\w+)}", path))
    params = [inspect.Parameter("request", inspect.Parameter.KEYWORD_ONLY, annotation=Request)]
    if method == "POST":
        params.append(inspect.Parameter("body", inspect.Parameter.KEYWORD_ONLY, annotation=body_model(verb, "rest")))
    else:
        for arg in verb.args:
            if "rest" not in arg.fronts:
                continue
            if arg.name in in_path:  # a path segment is text; the verb resolves versions and labels
                kind: Any = Annotated[str, PathParam(description=arg.help)]
                default: Any = inspect.Parameter.empty
            else:
                kind = Annotated[annotation(arg), QueryParam(description=arg.help)]
                default = inspect.Parameter.empty if arg.required else arg.default
            params.append(inspect.Parameter(arg.name, inspect.Parameter.KEYWORD_ONLY, annotation=kind, default=default))

    def endpoint(request: Request, body: Any = None, **values: Any) -> Response:
        if body is not None:
            values = body.model_dump()
        return render(pool.run(verb, values), request)

    endpoint.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    endpoint.__name__ = verb.name
    endpoint.__doc__ = verb.help
    return endpoint


def create_app(
    project_path: str | Path,
    *,
    token: str | None = None,
    embedder: Embedder | None = None,
    threads: int | None = None,
    files_root: str | Path | None = None,
) -> FastAPI:
    """The FastAPI app over the project in ``project_path`` (created by the first ingest).

    With ``token``, every route but ``/health`` and the docs needs ``Authorization: Bearer <token>``.
    ``threads`` bounds the requests served at once (default ``default_threads()``). Path
    arguments (a backup's folder, files to ingest) stay inside ``files_root`` (default
    ``$RAGTT_FILES_ROOT``, else the project's folder; ragtt/server_paths.py).
    """
    pool = Projects(Path(project_path).expanduser(), embedder, files_root)

    workers = default_threads() if threads is None else threads
    if workers < 1:
        raise ConfigError(f"a server needs at least one worker thread; got threads={workers}")

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        import anyio.to_thread

        # FastAPI runs each sync endpoint on anyio's thread pool (40 threads unless told)
        anyio.to_thread.current_default_thread_limiter().total_tokens = workers
        yield
        pool.close()

    app = FastAPI(
        title="ragtt",
        version=__version__,
        lifespan=lifespan,
        description="Time-travel debugging for RAG: every verb of the ragtt verb table.",
        docs_url=None,  # served offline by ragtt.serve.docs instead of from a CDN
        redoc_url=None,
    )

    @app.middleware("http")
    async def no_sniffing(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        response = await call_next(request)  # JSON holding '<script>' must never be sniffed into HTML
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response

    app.state.projects = pool
    guard = [Depends(_token_check(token))]

    @app.exception_handler(RagttError)
    async def ragtt_error(request: Request, exc: RagttError) -> JSONResponse:
        return JSONResponse(error_body(exc), status_code=status_for(exc))

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "ragtt": __version__, "project": str(pool.path)}

    for verb in VERBS.values():
        if verb.route is not None:
            method, path = verb.route

            def as_json(result: Any, request: Request, verb: Verb = verb) -> Response:
                return _respond(result, verb, request)

            app.add_api_route(
                path,
                _endpoint(verb, pool, path, as_json, method),
                methods=[method],
                summary=verb.help,
                dependencies=guard,
                name=verb.name,
                response_model=verb.result,  # documented only: the endpoint returns its own Response
                response_description=f"the {verb.name} result, as JSON (see the schema)",
            )
        if verb.html is not None and verb.html_route is not None:
            html = verb.html

            def render(result: Any, request: Request, html: Callable[[Any], str] = html) -> Response:
                return HTMLResponse(html(result), headers={"Content-Security-Policy": HTML_CSP})

            app.add_api_route(
                verb.html_route,
                _endpoint(verb, pool, verb.html_route, render, "GET"),
                methods=["GET"],
                summary=f"{verb.help} (HTML report)",
                dependencies=guard,
                name=f"{verb.name}_html",
                response_class=HTMLResponse,
            )
    app.include_router(docs.router(app.title, app.openapi))
    app.include_router(ui.router(pool.get, guard, pool.files_root))
    return app


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name that might resolve anywhere


def check_host(host: str, token: str | None) -> None:
    """Anything but loopback needs a token: the API reads and writes the whole project."""
    if not is_loopback(host) and not token:
        raise ConfigError(
            f"binding to {host!r} exposes the project beyond this machine: give --token TOKEN "
            "(clients send 'Authorization: Bearer TOKEN'), or bind to 127.0.0.1"
        )


def serve(
    project_path: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    embedder: Embedder | None = None,
    threads: int | None = None,
) -> None:
    """Run the API with uvicorn until interrupted; refuses a non-loopback host without a token.
    uvicorn parses HTTP with httptools and runs on uvloop (the serve extra installs both)."""
    import uvicorn

    from ragtt.tuning import tune_process

    check_host(host, token)
    tune_process()  # the server's process is ragtt's own (create_app alone leaves a host app's alone)
    app = create_app(project_path, token=token, embedder=embedder, threads=threads)
    print(serving_line(host, port, token), file=sys.stderr, flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def serving_line(host: str, port: int, token: str | None) -> str:
    """What ``ragtt serve`` prints as it starts: where the dashboard and the API are."""
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{port}"
    ui = f"{base}/ui" + ("#token=<your token>" if token else "")
    return f"ragtt serve: the dashboard at {ui}, the API at {base} (OpenAPI: {base}/docs); Ctrl-C stops it"
