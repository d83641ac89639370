"""The Tornado handlers: one per verb route (from ``ragtt.verbs``, like ``ragtt serve``'s
FastAPI routes: the same pydantic bodies, the same JSON answers), the project list, and the
dashboard lists and widget models the sidebar shows (``ragtt.views.dashboard``, as ``/ui``).

Every handler is an ``APIHandler`` whose methods are ``@tornado.web.authenticated``: Jupyter's
own token, cookie or identity provider lets a request in, nothing else. A verb runs on a
worker thread (``Projects`` keeps one open Project per thread and project), never on the
server's event loop, and its answer is encoded there too (as FastAPI does for ``ragtt serve``'s
sync routes): the loop, which every request's authentication and I/O share, only writes bytes.
"""

from __future__ import annotations

import asyncio
import functools
import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import tornado.web
from jupyter_server.base.handlers import APIHandler

from ragtt.errors import MissingArgumentError, RagttError, ValidationError
from ragtt.verbs import VERBS, Verb, dumps
from ragtt.verbs.http import Projects, default_threads, error_body, status_for
from ragtt_nb.server.roots import OutsideRootError, find_projects, relative_to_root, resolve_project

__all__ = ["Backend", "handlers"]

PROJECT = r"(?P<project>[^?#]+?)"  # root-relative, may hold slashes; the route after it decides
# Served HTML never runs script (as ragtt serve's): document text is escaped already, this is the second wall.
HTML_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
READ_ONLY_HEADER = "X-Ragtt-Read-Only"  # the lab setting readOnly: the front end asks for no writes


class Backend:
    """What every handler shares: the root, the settings, the open projects and the workers."""

    def __init__(
        self,
        root: Path,
        *,
        files_root: str | Path,
        read_only: bool,
        named: list[str],
        depth: int,
        limit: int,
        embedder: Any,
    ) -> None:
        self.root = root
        self.files_root = files_root
        self.read_only = read_only
        self.named = named
        self.depth = depth
        self.limit = limit
        self.embedder = embedder
        self.workers = ThreadPoolExecutor(default_threads(), thread_name_prefix="ragtt")
        self._pools: dict[Path, Projects] = {}
        self._lock = threading.Lock()

    def pool(self, folder: Path) -> Projects:
        with self._lock:
            if folder not in self._pools:
                self._pools[folder] = Projects(folder, self.embedder, self.files_root)
            return self._pools[folder]

    def projects(self) -> list[str]:
        found = find_projects(self.root, depth=self.depth, limit=self.limit)
        for path in self.named:
            try:
                resolve_project(self.root, path)
            except RagttError:
                continue  # a setting naming a folder that is gone (or outside): not listed
            if path not in found:
                found.append(path)
        return found

    def close(self) -> None:
        self.workers.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            for pool in self._pools.values():
                pool.close()
            self._pools.clear()


class Base(APIHandler):
    backend: Backend

    def initialize(self, backend: Backend) -> None:
        self.backend = backend

    def compute_etag(self) -> None:
        # Answers change with every write and no client revalidates them: hashing each body
        # (tornado's default for a GET) is work on the event loop that ``ragtt serve`` skips too.
        return None

    def answer(self, data: Any) -> None:
        self.send(dumps(data))

    def send(self, body: str) -> None:
        """Finish with a JSON body already encoded (on a worker)."""
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(body)

    def fail(self, status: int, body: Any) -> None:
        self.set_status(status)
        self.answer(body)

    def read_only(self) -> str | None:
        """Why this request may not write (the server's trait, the lab setting), else None."""
        if self.backend.read_only:
            return "the server's RagttExtension.read_only"
        return "the lab setting readOnly" if self.request.headers.get(READ_ONLY_HEADER) == "1" else None

    async def on_worker(self, call: Callable[[], Any]) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.backend.workers, call)

    async def guarded(self, call: Callable[[], Any], done: Callable[[Any], None]) -> None:
        """Run ``call`` on a worker and hand its result to ``done``; errors answer as REST's."""
        from pydantic import ValidationError as BodyError

        try:
            result = await self.on_worker(call)
        except OutsideRootError as exc:
            self.fail(403, error_body(exc))
        except BodyError as exc:
            self.fail(422, {"detail": exc.errors(include_url=False, include_context=False)})
        except MissingArgumentError as exc:
            self.fail(422, error_body(exc))
        except RagttError as exc:
            self.fail(status_for(exc), error_body(exc))
        except (ValueError, FileNotFoundError) as exc:  # a widget's complaint about its arguments
            self.fail(400, {"detail": str(exc), "error": type(exc).__name__})
        else:
            done(result)


class ProjectsHandler(Base):
    """``GET ragtt/api/projects``: the projects under the root (bounded depth and count) and
    those the settings name; ``?locate=ABS`` also answers where a kernel's folder is, root-relative."""

    @tornado.web.authenticated
    async def get(self) -> None:
        locate = self.get_query_argument("locate", None)

        def listing() -> str:
            return dumps(
                {
                    "projects": self.backend.projects(),
                    "read_only": self.backend.read_only,
                    "located": None if locate is None else relative_to_root(self.backend.root, locate),
                }
            )

        await self.guarded(listing, self.send)


class VerbHandler(Base):
    """One verb's route: GET reads path and query parameters, POST a JSON body, both validated
    by the verb's pydantic model (``ragtt.verbs.schema.body_model``)."""

    verb: Verb
    html: bool

    def initialize(self, backend: Backend, verb: Verb, html: bool = False) -> None:  # type: ignore[override]
        super().initialize(backend)
        self.verb, self.html = verb, html

    def values(self, path_args: dict[str, str]) -> dict[str, Any]:
        model = _body_model(self.verb.name)
        if self.request.method == "POST":
            return model.model_validate_json(self.request.body or b"{}").model_dump()
        raw: dict[str, Any] = dict(path_args)
        for arg in self.verb.args:
            if "rest" not in arg.fronts or arg.name in raw:
                continue
            given = self.get_query_arguments(arg.name)
            if given:
                raw[arg.name] = given if getattr(arg.type, "__origin__", None) is list else given[-1]
        return model.model_validate(raw).model_dump()

    async def serve(self, project: str, path_args: dict[str, str]) -> None:
        method = "GET" if self.html or self.verb.route is None else self.verb.route[0]
        if self.request.method != method:
            self.set_header("Allow", method)
            return self.fail(405, {"detail": f"{self.verb.name} answers {method} here", "error": "MethodNotAllowed"})
        why = self.read_only()
        if self.verb.writes and why:  # the verb's own declaration (ragtt.verbs.Verb.writes)
            return self.fail(
                403, {"detail": f"{self.verb.name} writes the project, and {why} is on", "error": "ReadOnly"}
            )

        html = self.verb.html if self.html else None

        def run() -> str:
            folder = resolve_project(self.backend.root, project, may_create=self.verb.creates)
            result = self.backend.pool(folder).run(self.verb, self.values(path_args))
            return html(result) if html is not None else dumps(self.verb.to_json(result))

        await self.guarded(run, self.respond)

    def respond(self, body: str) -> None:
        if self.html and self.verb.html is not None:
            self.set_header("Content-Type", "text/html; charset=utf-8")
            self.set_header("Content-Security-Policy", HTML_CSP)
            self.finish(body)
        else:
            self.send(body)

    @tornado.web.authenticated
    async def get(self, project: str, **path_args: str) -> None:
        await self.serve(project, path_args)

    @tornado.web.authenticated
    async def post(self, project: str, **path_args: str) -> None:
        await self.serve(project, path_args)


class DashboardHandler(Base):
    """The sidebar's lists and the widgets' state: ``ui/queries`` (paged), ``ui/versions``,
    ``ui/sources``, ``ui/evaluations`` (read back, never run), ``ui/model/{widget}`` and
    ``ui/model/{widget}/msg`` (``ragtt.views.dashboard``)."""

    def open(self, project: str) -> Any:
        return self.backend.pool(resolve_project(self.backend.root, project)).get()

    @tornado.web.authenticated
    async def get(self, project: str, what: str, widget: str | None = None) -> None:
        from ragtt.views import dashboard as board

        names = ("query_id", "left", "right", "a", "b", "query", "source", "dataset", "at", "evaluation", "metric")
        args = {k: self.get_query_argument(k, None) for k in names}

        def read() -> str:
            return dumps(page())

        def page() -> Any:
            proj = self.open(project)
            if what == "queries":
                offset, limit = self._bounded("offset", 0, 0, 10**9), self._bounded("limit", 100, 1, 500)
                total, page, evaluation_runs = board.logged_queries(
                    proj, self.get_query_argument("search", ""), offset=offset, limit=limit
                )
                return {"total": total, "offset": offset, "queries": page, "evaluation_runs": evaluation_runs}
            if what == "versions":
                return board.versions(proj)
            if what == "sources":
                return board.sources(proj)
            if what == "evaluations":
                return proj.evaluations()
            root = self.backend.pool(resolve_project(self.backend.root, project)).files_root
            # Read-only: a diffed run without an answer is shown without one, not given one.
            model = board.widget_model(proj, widget or "", args, files_root=root, generate=not self.read_only())
            return board.wire(model)

        await self.guarded(read, self.send)

    @tornado.web.authenticated
    async def post(self, project: str, what: str, widget: str | None = None) -> None:
        import json

        from ragtt.views import dashboard as board

        def reply() -> str:
            msg = json.loads(self.request.body or b"{}")
            if not isinstance(msg, dict) or set(msg) != {"args", "content"}:
                raise ValidationError("a widget message is a JSON object with 'args' and 'content'")
            root = self.backend.pool(resolve_project(self.backend.root, project)).files_root
            replies = board.widget_reply(self.open(project), widget or "", msg["args"], msg["content"], files_root=root)
            return dumps(board.wire(replies))

        await self.guarded(reply, self.send)

    def _bounded(self, name: str, default: int, low: int, high: int) -> int:
        raw = self.get_query_argument(name, str(default))
        if not raw.isdigit() or not low <= int(raw) <= high:
            raise ValidationError(f"{name} must be a whole number from {low} to {high}; got {raw!r}")
        return int(raw)


@functools.cache
def _body_model(name: str) -> Any:
    """The verb's pydantic model (REST's), built once per verb as FastAPI builds it once."""
    from ragtt.verbs.schema import body_model

    return body_model(VERBS[name], "rest")


def _pattern(route: str) -> str:
    """A verb's route (``/query/{query_id}``) as a Tornado pattern after the project path."""
    return re.sub(r"{(\w+)}", r"(?P<\1>[^/]+)", route)


def handlers(backend: Backend) -> list[tuple[str, type[Base], dict[str, Any]]]:
    """Every route, under ``ragtt/api/`` (the extension app puts the base_url before each):
    the project list, the dashboard, then one per verb route."""
    api = "ragtt/api"
    one = f"{api}/projects/{PROJECT}"
    found: list[tuple[str, type[Base], dict[str, Any]]] = [
        (f"{api}/projects", ProjectsHandler, {"backend": backend}),
        (f"{one}/ui/(?P<what>queries|versions|sources|evaluations)", DashboardHandler, {"backend": backend}),
        (f"{one}/ui/(?P<what>model)/(?P<widget>\\w+)", DashboardHandler, {"backend": backend}),
        (f"{one}/ui/(?P<what>model)/(?P<widget>\\w+)/msg", DashboardHandler, {"backend": backend}),
    ]
    routes: list[tuple[str, dict[str, Any]]] = []
    for verb in VERBS.values():
        if verb.route is not None:
            routes.append((verb.route[1], {"backend": backend, "verb": verb}))
        if verb.html is not None and verb.html_route is not None:
            routes.append((verb.html_route, {"backend": backend, "verb": verb, "html": True}))
    # The project path may hold slashes, so a longer route must be tried first: otherwise
    # ".../snapshots/a/b/diff" would be POST /diff on a project "…/snapshots/a/b".
    routes.sort(key=lambda r: -r[0].count("/"))
    return found + [(one + _pattern(route), VerbHandler, kwargs) for route, kwargs in routes]
