"""Loader registry: file suffix -> ``loader(data, source, options) -> ParsedDocument``.

Text formats are registered here; the PDF loader registers itself from ``ragtt.ingest.pdf``.
A loader raises ``IngestError`` with a reason a person can act on.
"""

from __future__ import annotations

import codecs
import importlib
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ragtt import spooled_text
from ragtt.errors import IngestError
from ragtt.ingest.types import IngestOptions, ParsedDocument
from ragtt.spooled_text import SpooledText

__all__ = [
    "ByteStream",
    "DecodedText",
    "Loader",
    "StreamLoader",
    "decode",
    "decode_stream",
    "decode_text",
    "loader_for",
    "register_loader",
    "streamed",
    "supported_suffixes",
]


class ByteStream(Protocol):
    """What a streaming loader reads: a binary file, an ``io.BytesIO``."""

    def read(self, size: int = -1, /) -> bytes: ...

    def seek(self, offset: int, whence: int = 0, /) -> int: ...


Loader = Callable[[bytes, str, IngestOptions], ParsedDocument]
# The same reading from a binary file object: a big file is never in memory as bytes whole.
StreamLoader = Callable[[ByteStream, str, IngestOptions], ParsedDocument]

_LOADERS: dict[str, Loader] = {}
_STREAMED: dict[Loader, StreamLoader] = {}
_READ_STEP = 1 << 20
# Loaders that live in modules with heavy imports register on first use.
_LAZY: dict[str, str] = {".pdf": "ragtt.ingest.pdf"}


def register_loader(
    suffixes: list[str] | tuple[str, ...] | str, loader: Loader, *, stream: StreamLoader | None = None
) -> None:
    """Make ``loader`` handle files with these suffixes (".md", ...); later calls win.
    ``stream`` is ``loader`` reading a file object, which ingest uses for a file on disk."""
    if stream is not None:
        _STREAMED[loader] = stream
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


def streamed(loader: Loader) -> StreamLoader | None:
    """``loader``'s form that reads a file object, if it was registered with one."""
    return _STREAMED.get(loader)


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
    return decode_stream(io.BytesIO(data), source)


def decode_stream(stream: ByteStream, source: str) -> DecodedText:
    """``decode`` of what ``stream`` reads (from its start), a megabyte at a time: the text
    grows in place, so a big file's bytes and its text never sit in memory together. A file
    that is not UTF-8 (the encoding must be guessed from all of it) is read whole."""
    text, encoding, warning = _decode_stream(stream, source, None)
    assert isinstance(text, str)
    return DecodedText(text, encoding, warning)


def _decode_stream(
    stream: ByteStream, source: str, spool_over: int | None
) -> tuple[str | SpooledText, str, str | None]:
    """``decode_stream``'s text, encoding and warning; a UTF text longer than ``spool_over``
    characters goes to a ``SpooledText`` as it is decoded, so it is never whole in memory."""
    head = stream.read(_READ_STEP)
    for bom, codec in _BOMS:
        if head.startswith(bom):
            try:
                text = _decode_pieces(stream, head, codec, lambda piece: None, spool_over)
            except UnicodeDecodeError as exc:
                raise IngestError(
                    f"{source}: not UTF-8 text, and not valid {codec} although it starts with a {codec} "
                    f"byte-order mark (bad bytes at offset {exc.start}); this looks like a binary "
                    "file"
                ) from None
            if any("\x00" in piece for piece in ([text] if isinstance(text, str) else text.pieces())):
                raise IngestError(
                    f"{source}: decodes as {codec} (byte-order mark) but holds NUL characters; this "
                    "looks like a binary file, not text"
                )
            return text, codec.removesuffix("-sig"), None

    def refuse_nul(piece: bytes) -> None:
        if b"\x00" in piece:
            raise IngestError(
                f"{source}: contains NUL bytes and no UTF-16/32 byte-order mark; this looks like a binary file, "
                "not text"
            )

    try:
        return _decode_pieces(stream, head, "utf-8", refuse_nul, spool_over), "utf-8", None
    except UnicodeDecodeError as exc:
        first_bad = exc.start
    del head
    stream.seek(0)
    data = stream.read()
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        raise IngestError(
            f"{source}: not text in any encoding charset-normalizer knows (first byte that is not "
            f"UTF-8: 0x{data[first_bad]:02x} at offset {first_bad}); this looks like a binary file"
        )
    return (
        _newlines(str(best)),
        best.encoding,
        f"not UTF-8 (byte 0x{data[first_bad]:02x} at offset {first_bad}): decoded as {best.encoding}, "
        "the encoding charset-normalizer detected; convert the file to UTF-8 to be sure",
    )


def _decode_pieces(
    stream: ByteStream, head: bytes, codec: str, check: Callable[[bytes], None], spool_over: int | None
) -> str | SpooledText:
    """``head`` and the rest of ``stream`` decoded with ``codec``, newlines normalized (spooled
    once longer than ``spool_over`` characters); a UnicodeDecodeError's ``start`` is the
    offset in the whole stream."""
    decoder = codecs.getincrementaldecoder(codec)()
    text = ""
    spooled: SpooledText | None = None
    held = ""  # a trailing "\r" waits for the next piece: it may begin with the "\n" of a "\r\n"
    offset = 0  # bytes of the stream handed to the decoder before this piece
    piece = head
    while True:
        check(piece)
        final = not piece
        pending = len(decoder.getstate()[0])  # bytes the decoder holds back from earlier pieces
        try:
            part = held + decoder.decode(piece, final)
        except UnicodeDecodeError as exc:
            exc.start += offset - pending
            raise
        offset += len(piece)
        held = "\r" if part.endswith("\r") and not final else ""
        # One str grows in place (CPython's ``+=`` of a str nothing else refers to): no list of
        # pieces joined at the end, which would hold the text twice.
        text += _newlines(part[: len(part) - len(held)])
        if spooled is None and spool_over is not None and len(text) > spool_over:
            spooled = SpooledText()
        if spooled is not None:
            spooled.append(text)
            text = ""
        if final:
            return text if spooled is None else spooled
        piece = stream.read(_READ_STEP)


def decode_text(data: bytes, source: str) -> str:
    """``decode(data, source).text``."""
    return decode(data, source).text


def _newlines(text: str) -> str:
    # One newline convention, so charspans mean the same on every platform.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _load_text(data: bytes, source: str, options: IngestOptions) -> ParsedDocument:
    # Bytes already in memory (``parse``, ``ingest_texts``): the text is a str, as callers expect.
    return _text_document(io.BytesIO(data), source, None)


def _load_text_stream(stream: ByteStream, source: str, options: IngestOptions) -> ParsedDocument:
    # A file ingest reads: a long text is spooled to disk as it is decoded; the chunker reads it in windows.
    return _text_document(stream, source, spooled_text.SPOOL_CHARS)


def _text_document(stream: ByteStream, source: str, spool_over: int | None) -> ParsedDocument:
    text, _, warning = _decode_stream(stream, source, spool_over)
    return ParsedDocument(source=source, markdown=text, warnings=[warning] if warning else [])


# "" is a file with no suffix (README, NOTICE): read as text; binary ones fail with a reason.
register_loader(["", ".txt", ".md", ".markdown", ".rst", ".text"], _load_text, stream=_load_text_stream)
