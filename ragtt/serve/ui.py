"""``/ui``: the live dashboard, the notebook widgets in a plain page over the REST API.

The page loads the widgets' own bundles (``js/*.js``, served from the package, no CDN) and
renders each with a small model shim (``js/src/model_shim.js``) whose state comes from
``GET /ui/api/model/{widget}``: the same traits the widget classes compute, from
``ragtt.views`` (which imports no IPython, ipywidgets or anywidget). Buffers travel as
``{"$buffer": base64}``. What a view ``send``s the Python side would answer (the PDF
overlay's page requests, the history matrix's diffs and timelines past its state's bound)
goes to ``POST /ui/api/model/{widget}/msg``. The history matrix's model evaluates
``dataset`` (a path on the server, as ``POST /evaluate`` takes it) ``at`` the versions asked
for: the dashboard posts ``/evaluate`` first, so this reads the matrix back from the log.

The page and its static files hold no project data and need no token (a browser cannot
send one on navigation); every ``/ui/api`` route is guarded like the REST routes, and the
page passes the token it finds in its URL fragment (``/ui#token=T``).
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, HTTPException
from fastapi import Query as QueryParam
from fastapi.params import Depends
from fastapi.responses import FileResponse, HTMLResponse, Response
from pydantic import BaseModel, ConfigDict

from ragtt.errors import RagttError
from ragtt.verbs import dumps

if TYPE_CHECKING:
    from ragtt.project import Project

__all__ = ["UI_CSP", "router"]

WIDGETS = ("timeline", "chunk_diff", "drift_scatter", "pdf_overlay", "history_matrix")
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


def wire(value: Any) -> Any:
    """Model state as JSON-able data: buffers as ``{"$buffer": base64}``, non-finite floats as null."""
    if isinstance(value, memoryview | bytes | bytearray):
        return {"$buffer": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, dict):
        return {str(k): wire(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [wire(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _json(data: Any) -> Response:
    return Response(dumps(wire(data)), media_type="application/json")


def _models(proj: Project, widget: str, args: dict[str, str | None]) -> dict[str, Any]:
    from ragtt.views import chunk_diff, drift_scatter, history_matrix, pdf_overlay, timeline

    def need(name: str) -> str:
        value = args.get(name)
        if not value:
            raise HTTPException(422, f"{widget} needs the query parameter {name!r}")
        return value

    try:
        if widget == "timeline":
            return timeline.model(proj, args.get("query_id") or None)
        if widget == "chunk_diff":
            return chunk_diff.model(proj, need("left"), need("right"))
        if widget == "drift_scatter":
            return drift_scatter.model(proj, need("a"), need("b"), query=args.get("query") or None)
        if widget == "pdf_overlay":
            return pdf_overlay.model(proj, need("source"), query_id=args.get("query_id") or None)
        if widget == "history_matrix":
            at = [part.strip() for part in (args.get("at") or "snapshots").split(",") if part.strip()]
            named = at[0] if len(at) == 1 and at[0] in ("snapshots", "versions", "latest") else None
            versions: list[Any] = [int(a) if a.isascii() and a.isdigit() else a for a in at]
            matrix = proj.evaluate(need("dataset"), at=named or versions)
            return history_matrix.model(proj, matrix, metric=args.get("metric") or None)
    except (RagttError, ValueError, FileNotFoundError) as exc:
        raise HTTPException(400, str(exc)) from None
    raise HTTPException(404, f"no widget {widget!r}; the dashboard has {', '.join(WIDGETS)}")


def _answer(proj: Project, widget: str, msg: Message) -> list[dict[str, Any]]:
    """The replies the widget's Python side would send (``msg:custom`` content and buffers)."""
    if widget == "history_matrix":
        from ragtt.views import history_matrix
        from ragtt.views.wire import split_buffers

        answer = history_matrix.answer(proj, msg.content)  # the dashboard's state names each run's id
        if answer is None:
            return []
        content, buffers = split_buffers(answer)
        return [{"content": content, "buffers": buffers}]
    if widget != "pdf_overlay":
        return []  # the other views send nothing that needs an answer
    from ragtt.views import pdf_overlay

    source = msg.args.get("source")
    if not source:
        raise HTTPException(422, "a pdf_overlay message needs args.source")
    try:
        path = pdf_overlay.find_pdf(proj, source, None)
    except (ValueError, FileNotFoundError) as exc:
        raise HTTPException(400, str(exc)) from None
    reply = pdf_overlay.page_reply(path, pdf_overlay.page_count(path), pdf_overlay.ZOOM, msg.content)
    return [] if reply is None else [{"content": reply[0], "buffers": list(reply[1])}]


def _queries(proj: Project, search: str, limit: int) -> list[dict[str, Any]]:
    """The logged runs, newest first: live queries, replays and golden (regression) runs, with
    their kind; ``search`` keeps the runs whose text holds every one of its words, in any order."""
    import polars as pl

    from ragtt.events import types as ev

    replayed = ev.REPLAY_PREFIX + ev.QUERY_RECEIVED
    frame = proj.events.frame(types=[ev.QUERY_RECEIVED, replayed]).with_columns(
        pl.col("payload").str.json_path_match("$.text").alias("text"),
        pl.col("payload").str.json_path_match("$.purpose").alias("purpose"),
        pl.col("payload").str.json_path_match("$.original_query_id").alias("original_query_id"),
    )
    for word in search.lower().split():
        frame = frame.filter(pl.col("text").str.to_lowercase().str.contains(word, literal=True))
    frame = frame.sort("seq", descending=True).head(limit)
    return [
        {
            "query_id": r["query_id"],
            "text": r["text"],
            "ts": r["ts"],
            "index_version": r["index_version"],
            "kind": "replay" if r["type"] == replayed else "golden" if r["purpose"] == "regression" else "live",
            "original_query_id": r["original_query_id"],
        }
        for r in frame.iter_rows(named=True)
    ]


def _sources(proj: Project) -> list[dict[str, Any]]:
    if proj.versions().is_empty():
        return []
    names = sorted(set(proj.chunks()["source"].to_list()))
    return [{"source": s, "pdf": s.lower().endswith(".pdf")} for s in names]


def _versions(proj: Project) -> list[dict[str, Any]]:
    labels = proj.version_labels()
    frame = proj.versions()
    return [
        {"version": int(r["version"]), "operation": r["operation"], "label": labels.get(int(r["version"]))}
        for r in frame.iter_rows(named=True)
    ]


def router(get_project: Callable[[], Project], guard: list[Depends]) -> APIRouter:
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
        return _json(_queries(get_project(), search, limit))

    @api.get("/versions")
    def versions() -> Response:
        return _json(_versions(get_project()))

    @api.get("/sources")
    def sources() -> Response:
        return _json(_sources(get_project()))

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
            "metric": metric,
        }
        return _json(_models(get_project(), widget, args))

    @api.post("/model/{widget}/msg")
    def message(widget: str, msg: Message) -> Response:
        if widget not in WIDGETS:
            raise HTTPException(404, f"no widget {widget!r}; the dashboard has {', '.join(WIDGETS)}")
        return _json(_answer(get_project(), widget, msg))

    ui.include_router(api)
    return ui
