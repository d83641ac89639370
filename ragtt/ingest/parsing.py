"""``parse(path)``: the whole ingest pipeline short of chunking and embedding."""

from __future__ import annotations

from pathlib import Path

from ragtt.errors import IngestError
from ragtt.ingest.loaders import loader_for, supported_suffixes
from ragtt.ingest.types import IngestOptions, ParsedDocument

__all__ = ["parse"]


def parse(path: str | Path, options: IngestOptions | None = None) -> ParsedDocument:
    """Read one file into Markdown with its blocks, page routes and warnings.

    >>> doc = parse("report.pdf")  # doctest: +SKIP
    >>> [(r.page, r.engine) for r in doc.routes]  # doctest: +SKIP
    [(1, 'text'), (2, 'ocr')]
    """
    p = Path(path)
    loader = loader_for(p)
    if loader is None:
        hint = " (is PyMuPDF installed?)" if p.suffix.lower() == ".pdf" else ""
        raise IngestError(
            f"{p}: no loader for {p.suffix or 'files without a suffix'!r}{hint}; "
            f"supported: {', '.join(supported_suffixes())}"
        )
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise IngestError(f"{p}: cannot be read ({exc.strerror})") from None
    return loader(data, str(p), options or IngestOptions())
