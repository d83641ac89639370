"""Loader registry: file suffix -> ``loader(data, source, options) -> ParsedDocument``.

Text formats are registered here; the PDF loader registers itself from ``ragtt.ingest.pdf``.
A loader raises ``IngestError`` with a reason a person can act on.
"""

from __future__ import annotations

import codecs
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ragtt.errors import IngestError
from ragtt.ingest.types import IngestOptions, ParsedDocument

__all__ = ["DecodedText", "Loader", "decode", "decode_text", "loader_for", "register_loader", "supported_suffixes"]

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


# Checked longest first: the UTF-32-LE BOM begins with the UTF-16-LE one.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


@dataclass(frozen=True)
class DecodedText:
    text: str
    encoding: str
    warning: str | None = None  # set when the encoding was guessed, not declared


def decode(data: bytes, source: str) -> DecodedText:
    """Text from bytes: a BOM (UTF-8/16/32) is obeyed; else UTF-8; else the encoding that
    ``charset-normalizer`` detects, with a warning naming it. NUL bytes without a BOM, or bytes
    no encoding explains, are refused as binary."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                text = data.decode(codec)
            except UnicodeDecodeError as exc:
                raise IngestError(
                    f"{source}: not UTF-8 text, and not valid {codec} although it starts with a {codec} "
                    f"byte-order mark (bad bytes at offset {exc.start}); this looks like a binary "
                    "file"
                ) from None
            if "\x00" in text:
                raise IngestError(
                    f"{source}: decodes as {codec} (byte-order mark) but holds NUL characters; this "
                    "looks like a binary file, not text"
                )
            return DecodedText(_newlines(text), codec.removesuffix("-sig"))
    if b"\x00" in data:
        raise IngestError(
            f"{source}: contains NUL bytes and no UTF-16/32 byte-order mark; this looks like a binary file, not text"
        )
    try:
        return DecodedText(_newlines(data.decode("utf-8")), "utf-8")
    except UnicodeDecodeError as exc:
        first_bad = exc.start
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        raise IngestError(
            f"{source}: not text in any encoding charset-normalizer knows (first byte that is not "
            f"UTF-8: 0x{data[first_bad]:02x} at offset {first_bad}); this looks like a binary file"
        )
    return DecodedText(
        _newlines(str(best)),
        best.encoding,
        f"not UTF-8 (byte 0x{data[first_bad]:02x} at offset {first_bad}): decoded as {best.encoding}, "
        "the encoding charset-normalizer detected; convert the file to UTF-8 to be sure",
    )


def decode_text(data: bytes, source: str) -> str:
    """``decode(data, source).text``."""
    return decode(data, source).text


def _newlines(text: str) -> str:
    # One newline convention, so charspans mean the same on every platform.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _load_text(data: bytes, source: str, options: IngestOptions) -> ParsedDocument:
    decoded = decode(data, source)
    return ParsedDocument(source=source, markdown=decoded.text, warnings=[decoded.warning] if decoded.warning else [])


# "" is a file with no suffix (README, NOTICE): read as text; binary ones fail with a reason.
register_loader(["", ".txt", ".md", ".markdown", ".rst", ".text"], _load_text)
