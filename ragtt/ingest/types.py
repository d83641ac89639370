"""The values an ingest produces before anything is embedded."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from ragtt.ingest.route import RouteThresholds
    from ragtt.spooled_text import SpooledText

__all__ = ["Block", "IngestOptions", "PageRoute", "ParsedDocument", "Region", "TextChunk"]


class Region(NamedTuple):
    """A box on a page: PDF points, top-left origin of the unrotated page; pages from 1."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True)
class Block:
    """A laid-out block of a page and the span of the document's Markdown it became.

    ``dir`` is the writing direction of a single-line block (unit vector in the page
    frame: (1, 0) left to right, (0, -1) bottom to top on a page shown through /Rotate 90);
    None for a block of several lines or of unknown layout, which is never clipped.
    """

    page: int
    bbox: tuple[float, float, float, float]
    char_start: int
    char_end: int
    kind: str = "text"  # text | heading | list | table | ocr
    dir: tuple[float, float] | None = (1.0, 0.0)


@dataclass(frozen=True)
class PageRoute:
    """Which engine read a page, and the signals that decided it."""

    page: int
    engine: str
    signals: dict[str, Any]
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"page": self.page, "engine": self.engine, "signals": dict(self.signals), "reason": self.reason}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PageRoute:
        return cls(int(data["page"]), str(data["engine"]), dict(data["signals"]), str(data["reason"]))


@dataclass(frozen=True)
class ParsedDocument:
    """A source read into Markdown: the string every chunk's charspan indexes (a long
    text file's is a ``SpooledText``, read back by slice)."""

    source: str
    markdown: str | SpooledText
    blocks: list[Block] = field(default_factory=list)
    routes: list[PageRoute] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class TextChunk:
    """A chunk before embedding: ``markdown[char_start:char_end] == text``."""

    text: str
    char_start: int
    char_end: int
    regions: tuple[Region, ...] = ()
    kind: str = "text"  # text | table (a roll-up of table rows) | table_row
    context: str = ""  # what the text needs to be understood alone: a row's table header

    @property
    def embed_text(self) -> str:
        """The text to embed: ``context`` (a table header) then ``text``. The charspan
        stays exact because the header lives here, not inside ``text``."""
        return f"{self.context}\n{self.text}" if self.context else self.text


@dataclass(frozen=True)
class IngestOptions:
    """How sources are read (not how they are chunked: that is PipelineConfig).

    ``ocr_languages`` are Tesseract language codes joined by "+"; ``vision_model`` is a
    litellm model that reads page images (None: no vision engine).

    ``engines``: the re-read engines for PDF pages whose text layer fails the router, in
    order of preference ("ocr", "vision"). None means automatic: whichever can run, and a
    page none can read keeps its text layer with a warning. Naming an engine makes it
    required: parsing fails at once, naming it, when it cannot run.
    ``thresholds``: the router's lines (``ragtt.ingest.RouteThresholds``).
    ``vision_kwargs``: extra keyword arguments for ``litellm.completion`` (api_base,
    mock_response in tests, ...). ``ocr_dpi``: resolution of the image Tesseract reads.
    ``tables``: detect ruled tables on text pages (PyMuPDF ``find_tables``, about 0.1 s a
    page) and write them as Markdown tables, which the chunker splits by row.
    """

    ocr_languages: str = "eng"
    vision_model: str | None = None
    engines: tuple[str, ...] | None = None
    thresholds: RouteThresholds | None = None
    vision_kwargs: Mapping[str, Any] = field(default_factory=dict)
    ocr_dpi: int = 150
    tables: bool = False
