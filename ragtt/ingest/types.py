"""The values an ingest produces before anything is embedded."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

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
    """A laid-out block of a page and the span of the document's Markdown it became."""

    page: int
    bbox: tuple[float, float, float, float]
    char_start: int
    char_end: int
    kind: str = "text"  # text | heading | list | table | ocr


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
    """A source read into Markdown: the string every chunk's charspan indexes."""

    source: str
    markdown: str
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
    kind: str = "text"


@dataclass(frozen=True)
class IngestOptions:
    """How sources are read (not how they are chunked: that is PipelineConfig).

    ``ocr_languages`` are Tesseract language codes joined by "+"; ``vision_model`` is a
    litellm model that reads page images (None: no vision engine).
    """

    ocr_languages: str = "eng"
    vision_model: str | None = None
