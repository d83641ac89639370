"""``PdfOverlay``: a PDF page as a viewer shows it, with the chunks' regions drawn on it.

Regions are stored in PDF points on the unrotated page; ``ragtt.ingest.pixel_box`` maps
each onto the rendered (rotated) image, at zoom 1, here in Python, so the view only scales.

Pages travel as PNG bytes (``ragtt.ingest.render_page``). Which are in the widget's state
(``embed``):

- ``"lazy"``: only the first page shown; the view asks the kernel for the others as you
  turn to them (``model.send`` request, PNG reply), so opening a 300-page PDF is instant.
- ``"all"``: every page, in order, until their PNGs pass ``embed_limit`` bytes
  (default 10 MB; the first page shown is always in). Pages past the cap are fetched
  from the kernel when there is one; in an offline report they show a notice saying so.
- ``"auto"`` (default): ``"all"`` when ``$RAGTT_REPORT`` is set (``ragtt report --execute``
  sets it for the kernel that runs the notebook), else ``"lazy"``. Call ``embed_all()``
  before saving a notebook by hand that you mean to export.

The PDF's path: ``path=``, else the file the source was last ingested from
(``proj.source_path``). The file's SHA-256 must match the ingested document's,
or the boxes would land on other words.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anywidget
import numpy as np
import traitlets as t

from ragtt_nb._wire import array, static_file

if TYPE_CHECKING:
    import ragtt

__all__ = ["PdfOverlay"]

SIGNALS = ("chars", "control_ratio", "script_validity", "mojibake")
"""The router's four text-layer signals, shown first on the route badge (ragtt/ingest/route.py)."""
EMBED_LIMIT = 10_000_000
"""Default cap, in bytes of PNG, on the pages embedded in the widget's state."""
BOX_MARGIN = (2.0, 1.0)
"""Points added to each side of a region box (x, y): OCR word boxes end at the glyphs' ink, so
an outline drawn on them cut the first and last glyph of each line."""


class PdfOverlay(anywidget.AnyWidget):
    """A rendered PDF page with its chunks' regions, the page's route, and a query's ranks.

    >>> ov = PdfOverlay(proj, "policy.pdf", path="docs/policy.pdf", query_id=res.query_id)  # doctest: +SKIP
    >>> ov.page = 2            # turns the page; the view sets it when you navigate
    >>> ov.selected            # the chunk ids clicked in the view
    """

    _esm = static_file("pdf_overlay.js")
    _css = static_file("pdf_overlay.css")

    page = t.Int(1).tag(sync=True)
    """The page shown, from 1. Set it to turn the page; the view sets it when you navigate."""
    selected = t.List(t.Unicode()).tag(sync=True)
    """Chunk ids clicked in the view (shown there as "N selected"); shift-click adds."""
    scale = t.Float(0.0).tag(sync=True)
    """Display zoom in CSS pixels per PDF point; 0 fits the page to the widget's width."""
    _data = t.Dict().tag(sync=True)
    """The private wire format: page sizes, routes, chunks, regions (buffers), the query's ranks."""
    _pages = t.Dict().tag(sync=True)
    """Embedded page PNGs: ``{"3": {"png": <bytes>}}``."""

    def __init__(
        self,
        proj: ragtt.Project,
        source: str,
        page: int | None = None,
        query_id: str | None = None,
        path: str | Path | None = None,
        *,
        zoom: float = 1.5,
        embed: Literal["auto", "all", "lazy"] = "auto",
        embed_limit: int = EMBED_LIMIT,
    ) -> None:
        import ragtt

        if not isinstance(proj, ragtt.Project):
            raise TypeError(f"PdfOverlay takes a ragtt.Project and a source name; got {type(proj).__name__}")
        if embed not in ("auto", "all", "lazy"):
            raise ValueError(f"embed must be 'auto', 'all' or 'lazy'; got {embed!r}")
        self._path = _find_pdf(proj, source, path)
        self._zoom = float(zoom)
        data = _build(proj, source, self._path, query_id, zoom)
        if page is None:
            page = data["first_page"]
        if not 1 <= page <= data["page_count"]:
            raise ValueError(f"{source} has pages 1 to {data['page_count']}; got page={page}")
        self.embed_limit = int(embed_limit)
        super().__init__(_data=data, page=page, _pages={str(page): {"png": self._png(page)}})
        if embed == "all" or (embed == "auto" and os.environ.get("RAGTT_REPORT")):
            self.embed_all()
        self.on_msg(self._on_request)

    @t.validate("page")
    def _check_page(self, proposal: dict[str, Any]) -> int:
        value = int(proposal["value"])
        count = self._data["page_count"] if self._data else value
        if not 1 <= value <= count:
            raise t.TraitError(f"page must be 1 to {count}; got {value}")
        return value

    @property
    def path(self) -> Path:
        return self._path

    @property
    def page_count(self) -> int:
        return int(self._data["page_count"])

    @property
    def embedded_pages(self) -> list[int]:
        return sorted(int(p) for p in self._pages)

    def chunks_on(self, page: int | None = None) -> list[str]:
        """The chunk ids with a region on ``page`` (default: the page shown)."""
        regions = self._data["regions"]
        pages = np.frombuffer(regions["page"]["view"], dtype="<i4")
        chunks = np.frombuffer(regions["chunk"]["view"], dtype="<i4")
        ids = self._data["chunks"]["ids"]
        want = self.page if page is None else page
        return list(dict.fromkeys(ids[c] for c in chunks[pages == want]))

    def embed_all(self) -> list[int]:
        """Put every page's PNG in the state, in order, up to ``embed_limit`` bytes; returns the
        pages left out (fetched from the kernel when viewed live, a notice in a report)."""
        pages = dict(self._pages)
        total = sum(len(v["png"]) for v in pages.values())
        left_out = []
        for number in range(1, self.page_count + 1):
            if str(number) in pages:
                continue
            png = self._png(number)
            if total + len(png) > self.embed_limit:
                left_out.append(number)
                continue
            pages[str(number)] = {"png": png}
            total += len(png)
        self._pages = pages
        self._data = {**self._data, "left_out": left_out, "embed_limit": self.embed_limit}
        return left_out

    def _png(self, number: int) -> memoryview:
        from ragtt.ingest import render_page

        return memoryview(render_page(self._path, number, self._zoom))

    def _on_request(self, _widget: Any, content: dict[str, Any], _buffers: list[Any]) -> None:
        if not isinstance(content, dict) or content.get("type") != "page":
            return
        number = content.get("page")
        if not isinstance(number, int) or not 1 <= number <= self.page_count:
            self.send({"type": "page", "page": number, "error": f"no page {number!r}"})
            return
        try:
            png = self._png(number)
        except Exception as exc:  # the view shows why instead of waiting forever
            self.send({"type": "page", "page": number, "error": str(exc)})
            return
        self.send({"type": "page", "page": number}, [png])

    def __repr__(self) -> str:
        d = self._data
        q = f", query {d['query']['query_id']}" if d.get("query") else ""
        return (
            f"PdfOverlay({d['source']!r}, page {self.page} of {d['page_count']}, {len(d['chunks']['ids'])} chunks"
            f"{q}, {len(self._pages)} pages embedded, {len(self.selected)} selected)"
        )


def _find_pdf(proj: Any, source: str, path: str | Path | None) -> Path:
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


def _build(proj: Any, source: str, pdf: Path, query_id: str | None, zoom: float) -> dict[str, Any]:
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
        query = {"query_id": query_id, "text": run.query, "version": version, "retrieved": len(ranks)}
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
