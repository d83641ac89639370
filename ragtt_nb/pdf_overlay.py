"""``PdfOverlay``: a PDF page as a viewer shows it, with the chunks' regions drawn on it.

Regions are stored in PDF points on the unrotated page; ``ragtt.ingest.pixel_box`` maps
each onto the rendered (rotated) image, at zoom 1, here in Python, so the view only scales.

Pages travel as PNG bytes (``ragtt.ingest.render_page``). Which are in the widget's state
(``embed``):

- ``"lazy"``: the first page shown and every page holding a chunk the query retrieved
  (``retrieved_pages``), so a report of a saved notebook shows them all; the view asks the
  kernel for the others as you turn to them (``model.send`` request, PNG reply), so opening
  a 300-page PDF is instant.
- ``"all"``: every page, in order, until their PNGs pass ``embed_limit`` bytes
  (default 10 MB; the first page shown and the retrieved chunks' pages are always in). Pages past the cap are fetched
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

from ragtt.values import counted
from ragtt.views.pdf_overlay import SIGNALS, ZOOM, build, check_page, find_pdf, page_reply, png
from ragtt.views.wire import static_file

if TYPE_CHECKING:
    import ragtt

__all__ = ["EMBED_LIMIT", "SIGNALS", "PdfOverlay"]

EMBED_LIMIT = 10_000_000
"""Default cap, in bytes of PNG, on the pages embedded in the widget's state."""


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
        zoom: float = ZOOM,
        embed: Literal["auto", "all", "lazy"] = "auto",
        embed_limit: int = EMBED_LIMIT,
    ) -> None:
        import ragtt

        if not isinstance(proj, ragtt.Project):
            raise TypeError(f"PdfOverlay takes a ragtt.Project and a source name; got {type(proj).__name__}")
        if embed not in ("auto", "all", "lazy"):
            raise ValueError(f"embed must be 'auto', 'all' or 'lazy'; got {embed!r}")
        self._path = find_pdf(proj, source, path)
        self._zoom = float(zoom)
        data = build(proj, source, self._path, query_id, zoom)
        page = check_page(data, data["first_page"] if page is None else page)
        self.embed_limit = int(embed_limit)
        super().__init__(_data=data, page=page, _pages={str(page): {"png": self._png(page)}})
        self._pages = {**self._pages, **{str(n): {"png": self._png(n)} for n in self.retrieved_pages() if n != page}}
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

    def retrieved_pages(self) -> list[int]:
        """The pages holding a region of a chunk the query retrieved (none without a query)."""
        regions = self._data["regions"]
        pages = np.frombuffer(regions["page"]["view"], dtype="<i4")
        chunks = np.frombuffer(regions["chunk"]["view"], dtype="<i4")
        ranks = np.frombuffer(self._data["chunks"]["rank"]["view"], dtype="<i4")
        return sorted({int(p) for p in pages[ranks[chunks] > 0]}) if len(chunks) else []

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
            image = self._png(number)
            if total + len(image) > self.embed_limit:
                left_out.append(number)
                continue
            pages[str(number)] = {"png": image}
            total += len(image)
        self._pages = pages
        self._data = {**self._data, "left_out": left_out, "embed_limit": self.embed_limit}
        return left_out

    def _png(self, number: int) -> memoryview:
        return png(self._path, number, self._zoom)

    def _on_request(self, _widget: Any, content: dict[str, Any], _buffers: list[Any]) -> None:
        answer = page_reply(self._path, self.page_count, self._zoom, content)
        if answer is not None:
            self.send(*answer)

    def __repr__(self) -> str:
        d = self._data
        q = f", query {d['query']['query_id']}" if d.get("query") else ""
        return (
            f"PdfOverlay({d['source']!r}, page {self.page} of {d['page_count']}, "
            f"{counted(len(d['chunks']['ids']), 'chunk')}"
            f"{q}, {counted(len(self._pages), 'page')} embedded, {len(self.selected)} selected)"
        )
