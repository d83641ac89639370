"""Ingest: load -> route pages -> parse -> chunk -> locate regions.

Names load on first use so ``import ragtt.ingest`` does not pull PyMuPDF or litellm. (The
module behind ``parse`` is ``parsing``: a submodule named ``parse`` would shadow the function.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragtt._lazy import lazy_exports

_EXPORTS = {
    "IngestOptions": "ragtt.ingest.types",
    "LocatedChunks": "ragtt.ingest.provenance",
    "RegionIndex": "ragtt.ingest.provenance",
    "RouteThresholds": "ragtt.ingest.route",
    "build_chunks": "ragtt.ingest.chunk",
    "locate_chunks": "ragtt.ingest.provenance",
    "parse": "ragtt.ingest.parsing",
    "pixel_box": "ragtt.ingest.render",
    "render_page": "ragtt.ingest.render",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)


if TYPE_CHECKING:
    from ragtt.ingest.chunk import build_chunks as build_chunks
    from ragtt.ingest.parsing import parse as parse
    from ragtt.ingest.provenance import LocatedChunks as LocatedChunks
    from ragtt.ingest.provenance import RegionIndex as RegionIndex
    from ragtt.ingest.provenance import locate_chunks as locate_chunks
    from ragtt.ingest.render import pixel_box as pixel_box
    from ragtt.ingest.render import render_page as render_page
    from ragtt.ingest.route import RouteThresholds as RouteThresholds
    from ragtt.ingest.types import IngestOptions as IngestOptions
