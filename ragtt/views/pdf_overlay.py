"""The PdfOverlay's model state (``_data``, the page to open on, its PNG), computed from a Project.

No widget stack here: the notebook's ``PdfOverlay`` widget and ``ragtt serve``'s ``/ui`` both
build on it; the widget's docstring says which pages the state embeds and why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragtt.views.wire import array

__all__ = [
    "BOX_MARGIN",
    "SIGNALS",
    "ZOOM",
    "build",
    "check_page",
    "find_pdf",
    "model",
    "page_count",
    "page_reply",
    "png",
]

ZOOM = 1.5
"""Page images are rendered at this many pixels per PDF point."""
SIGNALS = ("chars", "control_ratio", "script_validity", "mojibake")
"""The router's four text-layer signals, shown first on the route badge (ragtt/ingest/route.py)."""
BOX_MARGIN = (2.0, 1.0)
"""Points added to each side of a region box (x, y): OCR word boxes end at the glyphs' ink, so
an outline drawn on them cut the first and last glyph of each line."""


def model(proj: Any, source: str, *, query_id: str | None = None, zoom: float = ZOOM) -> dict[str, Any]:
    """The PdfOverlay's traits as a fresh lazy widget has them: ``_data``, ``page``, ``_pages`` (the
    first page's PNG only), ``scale``, ``selected``."""
    path = find_pdf(proj, source, None)
    data = build(proj, source, path, query_id, zoom)
    page = check_page(data, data["first_page"])
    return {
        "_data": data,
        "page": page,
        "_pages": {str(page): {"png": png(path, page, zoom)}},
        "scale": 0.0,
        "selected": [],
    }


def check_page(data: dict[str, Any], page: int) -> int:
    if not 1 <= page <= data["page_count"]:
        raise ValueError(f"{data['source']} has pages 1 to {data['page_count']}; got page={page}")
    return page


def page_reply(path: Path, page_count: int, zoom: float, content: Any) -> tuple[dict[str, Any], list[Any]] | None:
    """The answer to the view's ``{"type": "page", "page": N}`` request: the message and its PNG
    buffer, or the message with an ``error``; None for a message that is not a page request."""
    if not isinstance(content, dict) or content.get("type") != "page":
        return None
    number = content.get("page")
    if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= page_count:
        return {"type": "page", "page": number, "error": f"no page {number!r}"}, []
    try:
        image = png(path, number, zoom)
    except Exception as exc:  # the view shows why instead of waiting forever
        return {"type": "page", "page": number, "error": str(exc)}, []
    return {"type": "page", "page": number}, [image]


def page_count(path: Path) -> int:
    import pymupdf

    with pymupdf.open(path) as doc:
        return int(doc.page_count)


def png(path: Path, number: int, zoom: float) -> memoryview:
    """Page ``number`` of the PDF at ``path`` rendered as PNG bytes."""
    from ragtt.ingest import render_page

    return memoryview(render_page(path, number, zoom))


def find_pdf(proj: Any, source: str, path: str | Path | None) -> Path:
    import hashlib

    if path is None:
        path = proj.source_path(source)  # NotFoundError for a source never ingested
        if path is None:
            raise ValueError(
                f"the project records no file path for {source!r}: pass "
                f"PdfOverlay(proj, {source!r}, path='.../{Path(source).name}')"
            )
        if not Path(path).is_file():
            raise FileNotFoundError(
                f"{source!r} was ingested from {path}, which is gone: pass path= to where the PDF lies now"
            )
    pdf = Path(path)
    if not pdf.is_file():
        raise FileNotFoundError(f"no PDF at {pdf}")
    doc = proj.document(source)
    if hashlib.sha256(pdf.read_bytes()).hexdigest() != doc.content_hash:  # Document.content_hash is its SHA-256
        raise ValueError(
            f"{pdf} is not the file ingested as {source!r} (its SHA-256 differs): its regions would "
            "land on other words; pass the path of the ingested file"
        )
    return pdf


def build(proj: Any, source: str, pdf: Path, query_id: str | None, zoom: float) -> dict[str, Any]:
    import pymupdf

    from ragtt.ingest import pixel_box
    from ragtt.ingest.types import Region

    with pymupdf.open(pdf) as doc:
        sizes = [(float(p.rect.width), float(p.rect.height)) for p in doc]  # rect: as shown, /Rotate applied
    query = None
    ranks: dict[str, tuple[int, float]] = {}
    version = None
    if query_id is not None:
        run = proj.run(query_id)  # NotFoundError for an unknown id
        version = run.index_version
        ranks = {c["chunk_id"]: (n + 1, float(c["score"])) for n, c in enumerate(run.chunks)}
        query = {"query_id": run.query_id, "text": run.query, "version": version, "retrieved": len(ranks)}
    chunks = proj.chunks(at=version, source=source)
    if chunks.is_empty():
        raise ValueError(f"{source!r} has no chunks at version {version if version is not None else 'latest'}")
    routes = {
        r.page: {
            "page": r.page,
            "engine": r.engine,
            "reason": r.reason,
            "signals": {k: _signal(r.signals[k]) for k in SIGNALS if k in r.signals},
            "facts": {str(k): _signal(v) for k, v in r.signals.items() if k not in SIGNALS},
        }
        for r in proj.document(source, at=version).routes
    }
    ids, texts, rank_list, scores = [], [], [], []
    r_page, r_box, r_chunk = [], [], []
    for n, row in enumerate(chunks.iter_rows(named=True)):
        ids.append(row["chunk_id"])
        texts.append(row["text"])
        rank, score = ranks.get(row["chunk_id"], (0, 0.0))
        rank_list.append(rank)
        scores.append(score)
        for reg in row["regions"] or []:
            box = pixel_box(pdf, Region(reg["page"], reg["x0"], reg["y0"], reg["x1"], reg["y1"]), zoom=1.0)
            pw, ph = sizes[reg["page"] - 1]
            mx, my = BOX_MARGIN
            r_page.append(reg["page"])
            r_box += [
                max(0.0, min(box[0], box[2]) - mx),
                max(0.0, min(box[1], box[3]) - my),
                min(pw, max(box[0], box[2]) + mx),
                min(ph, max(box[1], box[3]) + my),
            ]
            r_chunk.append(n)
    if query is not None:
        query["on_this_document"] = sum(1 for r in rank_list if r)
    first_page = _best_page(r_page, r_box, r_chunk, rank_list)
    return {
        "source": source,
        "page_count": len(sizes),
        "render_zoom": zoom,
        "first_page": first_page,
        "page_sizes": array([v for s in sizes for v in s], "float32"),
        "routes": [routes[p] for p in sorted(routes)],
        "chunks": {"ids": ids, "text": texts, "rank": array(rank_list, "int32"), "score": array(scores, "float32")},
        "regions": {"page": array(r_page, "int32"), "box": array(r_box, "float32"), "chunk": array(r_chunk, "int32")},
        "query": query,
        "left_out": [],
        "embed_limit": 0,
        "labels": {str(v): name for v, name in proj.version_labels().items() if v == version},
    }


def _best_page(pages: list[int], boxes: list[float], chunks: list[int], ranks: list[int]) -> int:
    """The page to open on: where the best-ranked retrieved chunk that has regions has most of
    its area (a chunk can run over a page break); without a query, the first page with a region."""
    area: dict[tuple[int, int], float] = {}  # (rank, page) -> area of that chunk's boxes on the page
    for k, (page, c) in enumerate(zip(pages, chunks, strict=True)):
        if ranks[c]:
            x0, y0, x1, y1 = boxes[4 * k : 4 * k + 4]
            area[ranks[c], page] = area.get((ranks[c], page), 0.0) + (x1 - x0) * (y1 - y0)
    if area:
        top = min(rank for rank, _ in area)
        return min((-a, page) for (rank, page), a in area.items() if rank == top)[1]  # most area, then first
    return min(pages) if pages else 1


def _signal(value: Any) -> str:
    """Route signals as display text (numbers rounded; they are shown, never computed on)."""
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)
