"""Page images for the provenance overlay, and where a Region lands on them."""

from __future__ import annotations

import functools
from pathlib import Path

from ragtt.errors import ConfigError, NotFoundError
from ragtt.ingest.types import Region

__all__ = ["pixel_box", "render_page"]


def render_page(path: str | Path, page: int, zoom: float = 1.5) -> bytes:
    """The PNG of ``page`` (from 1) as a viewer shows it (/Rotate applied), ``zoom`` times
    72 dpi. Cached by file identity (path, size, mtime), so a changed file re-renders.
    """
    if zoom <= 0:
        raise ConfigError(f"zoom must be > 0; got {zoom}")
    resolved, size, mtime = _identity(path)
    return _render(resolved, size, mtime, page, float(zoom))


def pixel_box(path: str | Path, region: Region, zoom: float = 1.5) -> tuple[float, float, float, float]:
    """Where ``region`` (points, unrotated page frame) lies on ``render_page(path,
    region.page, zoom)``, in pixels: regions are stored unrotated, images are shown
    rotated, and this is the one place that reconciles them."""
    import pymupdf

    resolved, size, mtime = _identity(path)
    matrix = pymupdf.Matrix(*_rotation(resolved, size, mtime, region.page)) * pymupdf.Matrix(zoom, zoom)
    box = pymupdf.Rect(region.x0, region.y0, region.x1, region.y1) * matrix
    return (box.x0, box.y0, box.x1, box.y1)


def _identity(path: str | Path) -> tuple[str, int, int]:
    p = Path(path)
    try:
        stat = p.stat()
    except OSError as exc:
        raise NotFoundError(f"{p}: cannot be read ({exc.strerror})") from None
    return str(p.resolve()), stat.st_size, stat.st_mtime_ns


def _page(doc: object, path: str, page: int) -> object:
    count = doc.page_count  # type: ignore[attr-defined]
    if not 1 <= page <= count:
        raise NotFoundError(f"{path}: no page {page}; pages are numbered 1 to {count}")
    return doc[page - 1]  # type: ignore[index]


@functools.lru_cache(maxsize=64)
def _render(path: str, size: int, mtime: int, page: int, zoom: float) -> bytes:
    import pymupdf

    with pymupdf.open(path) as doc:
        pix = _page(doc, path, page).get_pixmap(matrix=pymupdf.Matrix(zoom, zoom))  # type: ignore[attr-defined]
        return bytes(pix.tobytes("png"))


@functools.lru_cache(maxsize=256)
def _rotation(path: str, size: int, mtime: int, page: int) -> tuple[float, ...]:
    import pymupdf

    with pymupdf.open(path) as doc:
        return tuple(_page(doc, path, page).rotation_matrix)  # type: ignore[attr-defined]
