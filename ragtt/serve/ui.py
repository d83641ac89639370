"""``/ui``: the live dashboard, the notebook widgets in a plain page over the REST API.

The page loads the widgets' own bundles (``ragtt/views/static``, served from the package, no CDN) and
renders each with a small model shim (``js/src/model_shim.js``) whose state comes from
``GET /ui/api/model/{widget}``: the same traits the widget classes compute, from
``ragtt.views`` (which imports no IPython, ipywidgets or anywidget). Buffers travel as
``{"$buffer": base64}``. What a view ``send``s the Python side would answer (the PDF
overlay's page requests, the history matrix's diffs and timelines past its state's bound)
goes to ``POST /ui/api/model/{widget}/msg``. The history matrix's model is the matrix
``POST /evaluate`` logged for ``dataset`` (a path on the server, confined as that verb's is)
``at`` the versions asked for, read back from the log: a GET evaluates nothing (a matrix not
evaluated yet is a 404), so the dashboard posts ``/evaluate`` first. ``evaluation`` (an id) reads one back by itself
(``Project.read_evaluation``).

The page and its static files hold no project data and need no token (a browser cannot
send one on navigation); every ``/ui/api`` route is guarded like the REST routes, and the
page passes the token it finds in its URL fragment (``/ui#token=T``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, HTTPException
from fastapi import Query as QueryParam
from fastapi.params import Depends
from fastapi.responses import FileResponse, HTMLResponse, Response
from pydantic import BaseModel, ConfigDict

import ragtt.views.dashboard as board
from ragtt.errors import MissingArgumentError, NotFoundError, RagttError
from ragtt.verbs import dumps
from ragtt.views.dashboard import WIDGETS, logged_queries, widget_model, widget_reply, wire

if TYPE_CHECKING:
    from pathlib import Path

    from ragtt.project import Project

__all__ = ["UI_CSP", "router", "wire"]

STATIC = frozenset({f"{w}.{ext}" for w in WIDGETS for ext in ("js", "css")} | {"dashboard.js", "dashboard.css"})
# Scripts and styles only from the server itself; page images are blob: URLs the overlay makes.
UI_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ragtt dashboard</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
{links}
<script type="module" src="/ui/static/dashboard.js"></script>
</head><body class="ragtt-ui"><noscript>The ragtt dashboard needs JavaScript.</noscript></body></html>
"""


class Message(BaseModel):
    """A message a widget view sent, with the arguments its model was built from."""

    model_config = ConfigDict(extra="forbid")
    args: dict[str, str | None]
    content: dict[str, Any]


def _json(data: Any) -> Response:
    return Response(dumps(wire(data)), media_type="application/json")


def _guarded(call: Callable[[], Any]) -> Any:
    """``call()``, with the widgets' own complaints about their arguments as HTTP errors."""
    try:
        return call()
    except MissingArgumentError as exc:
        raise HTTPException(422, str(exc)) from None
    except NotFoundError:
        raise  # the app's RagttError handler answers 404
    except (RagttError, ValueError, FileNotFoundError) as exc:
        raise HTTPException(400, str(exc)) from None


def router(get_project: Callable[[], Project], guard: list[Depends], files_root: Path | None = None) -> APIRouter:
    """The dashboard's routes: the page, its static files, and the guarded ``/ui/api``."""
    from ragtt.views import static_file

    ui = APIRouter(include_in_schema=False)
    links = "\n".join(f'<link rel="stylesheet" href="/ui/static/{name}.css">' for name in (*WIDGETS, "dashboard"))
    page = PAGE.format(links=links)

    @ui.get("/ui", response_class=HTMLResponse)
    def dashboard() -> HTMLResponse:
        return HTMLResponse(page, headers={"Content-Security-Policy": UI_CSP, "Cache-Control": "no-store"})

    @ui.get("/ui/static/{name}")
    def static(name: str) -> FileResponse:
        if name not in STATIC:
            raise HTTPException(404, f"no dashboard file {name!r}")
        kind = "text/javascript" if name.endswith(".js") else "text/css"
        return FileResponse(static_file(name), media_type=f"{kind}; charset=utf-8")

    api = APIRouter(prefix="/ui/api", dependencies=guard)

    @api.get("/queries")
    def queries(
        search: Annotated[str, QueryParam(max_length=500)] = "",
        limit: Annotated[int, QueryParam(ge=1, le=500)] = 100,
    ) -> Response:
        return _json(logged_queries(get_project(), search, limit=limit)[1])

    @api.get("/versions")
    def versions() -> Response:
        return _json(board.versions(get_project()))

    @api.get("/sources")
    def sources() -> Response:
        return _json(board.sources(get_project()))

    @api.get("/model/{widget}")
    def model(
        widget: str,
        query_id: str | None = None,
        left: str | None = None,
        right: str | None = None,
        a: str | None = None,
        b: str | None = None,
        query: str | None = None,
        source: str | None = None,
        dataset: str | None = None,
        at: str | None = None,
        evaluation: str | None = None,
        metric: str | None = None,
    ) -> Response:
        args = {
            "query_id": query_id,
            "left": left,
            "right": right,
            "a": a,
            "b": b,
            "query": query,
            "source": source,
            "dataset": dataset,
            "at": at,
            "evaluation": evaluation,
            "metric": metric,
        }
        return _json(_guarded(lambda: widget_model(get_project(), widget, args, files_root=files_root)))

    @api.post("/model/{widget}/msg")
    def message(widget: str, msg: Message) -> Response:
        return _json(
            _guarded(lambda: widget_reply(get_project(), widget, msg.args, msg.content, files_root=files_root))
        )

    ui.include_router(api)
    return ui
