"""Loader registry: file suffix -> ``loader(data, source, options) -> ParsedDocument``.

Text formats are registered here; the PDF loader registers itself from ``ragtt.ingest.pdf``.
A loader raises ``IngestError`` with a reason a person can act on.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from ragtt.errors import IngestError
from ragtt.ingest.types import IngestOptions, ParsedDocument

__all__ = ["Loader", "decode_text", "loader_for", "register_loader", "supported_suffixes"]

Loader = Callable[[bytes, str, IngestOptions], ParsedDocument]

_LOADERS: dict[str, Loader] = {}
# Loaders that live in modules with heavy imports register on first use.
_LAZY: dict[str, str] = {".pdf": "ragtt.ingest.pdf"}


def register_loader(suffixes: list[str] | tuple[str, ...] | str, loader: Loader) -> None:
    """Make ``loader`` handle files with these suffixes (".md", ...); later calls win."""
    for suffix in [suffixes] if isinstance(suffixes, str) else suffixes:
        if suffix and not suffix.startswith("."):
            raise ValueError(f"suffix must start with '.' (or be '' for no suffix), got {suffix!r}")
        _LOADERS[suffix.lower()] = loader


def supported_suffixes() -> list[str]:
    return sorted(set(_LOADERS) | set(_LAZY))


def loader_for(path: str | Path) -> Loader | None:
    suffix = Path(path).suffix.lower()
    if suffix not in _LOADERS and suffix in _LAZY:
        try:
            importlib.import_module(_LAZY[suffix])
        except ImportError:
            return None
    return _LOADERS.get(suffix)


def decode_text(data: bytes, source: str) -> str:
    """UTF-8 (a BOM is dropped); anything else fails with the byte offset that broke it."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IngestError(
            f"{source}: not UTF-8 text (invalid byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "convert it to UTF-8 first"
        ) from None
    if "\x00" in text:
        raise IngestError(f"{source}: contains NUL bytes; this looks like a binary file, not text")
    # One newline convention, so charspans mean the same on every platform.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _load_text(data: bytes, source: str, options: IngestOptions) -> ParsedDocument:
    return ParsedDocument(source=source, markdown=decode_text(data, source))


# "" is a file with no suffix (README, NOTICE): read as text; binary ones fail with a reason.
register_loader(["", ".txt", ".md", ".markdown", ".rst", ".text"], _load_text)
