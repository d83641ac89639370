"""``/docs`` with no network: Swagger UI's files served from the ``swagger-ui-bundle`` package.

FastAPI's own ``/docs`` loads Swagger UI from a CDN, so on an offline machine it is a blank
page. Here the same page (``get_swagger_ui_html``) points at ``/docs/static/...``; its one
inline script is allowed by its hash, nothing else.

swagger-ui-bundle 1.1 ships Swagger UI 4.15, which refuses any schema not labelled OpenAPI
3.0 ("does not specify a valid version field"); FastAPI writes 3.1. So the page reads
``/docs/openapi.json``: the app's own schema, relabelled 3.0.3 (what 4.15 does not know of
3.1 it shows as written). ``/openapi.json`` stays the app's 3.1 schema for every other client.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse

__all__ = ["router"]

FILES = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon-32x32.png": "image/png",
}


def _csp(page: str) -> str:
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"
        for body in re.findall(r"<script>(.*?)</script>", page, re.S)
    )
    return (
        f"default-src 'none'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'"
    )


def router(title: str, schema: Callable[[], dict[str, Any]]) -> APIRouter:
    """``GET /docs`` (Swagger UI over ``schema()``), its schema and ``GET /docs/static/{name}``."""
    from swagger_ui_bundle import swagger_ui_path

    folder = Path(swagger_ui_path)
    docs = APIRouter(include_in_schema=False)
    page = bytes(
        get_swagger_ui_html(
            openapi_url="/docs/openapi.json",
            title=f"{title} - Swagger UI",
            swagger_js_url="/docs/static/swagger-ui-bundle.js",
            swagger_css_url="/docs/static/swagger-ui.css",
            swagger_favicon_url="/docs/static/favicon-32x32.png",
        ).body
    ).decode()
    csp = _csp(page)

    @docs.get("/docs", response_class=HTMLResponse)
    def swagger() -> HTMLResponse:
        return HTMLResponse(page, headers={"Content-Security-Policy": csp})

    @docs.get("/docs/openapi.json")
    def openapi() -> dict[str, Any]:
        return {**schema(), "openapi": "3.0.3"}

    @docs.get("/docs/static/{name}")
    def static(name: str) -> FileResponse:
        if name not in FILES:
            raise HTTPException(404, f"no docs file {name!r}")
        return FileResponse(folder / name, media_type=FILES[name])

    return docs
