"""A text too long to hold whole: its characters in an anonymous temporary file, read back by slice.

A 200 MB text file decoded into one str holds 191 MiB through every step of its ingest
(chunking, embedding, the table write, the log commit, the index maintenance). A text
longer than ``SPOOL_CHARS`` is kept here instead, as UTF-8 pieces of at most
``PIECE_CHARS`` characters, with the character and byte offset where each piece starts.
A slice reads back the pieces it touches (the last two stay decoded, since an ingest reads
its chunks in order), so what sits in memory is a piece or two, not the document.

The file is unlinked from the start (``tempfile.TemporaryFile``, in ``TMPDIR``: on a
tmpfs it is memory after all): a process that dies leaves nothing behind, and the crash
protocol has nothing new to clean. Pickling gives
the text whole as a plain str (the Ray engine sends a worker's document to the driver).
"""

from __future__ import annotations

import bisect
import os
import tempfile
from array import array
from collections.abc import Iterator

from ragtt.errors import IngestError

__all__ = ["PIECE_CHARS", "SPOOL_CHARS", "SpooledText"]

SPOOL_CHARS = 8 << 20  # a decoded text file longer than this (characters) is spooled to disk
PIECE_CHARS = 1 << 20  # characters of one stored piece


class SpooledText:
    """Characters appended in order, then read back by ``text[start:stop]`` and ``len(text)``
    like a str (the chunker's plan, the document store's parts and ``sha256_hex`` need no
    more). Steps other than 1 are refused."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="ragtt-text-")  # noqa: SIM115 (lives as long as the text)
        self._fd = self._file.fileno()
        self._chars = array("q", [0])  # where piece i starts, in characters; the last entry is the length
        self._bytes = array("q", [0])  # ... and in bytes of the file
        self._decoded: dict[int, str] = {}  # the last pieces read back, by number (two at most)

    def append(self, text: str) -> None:
        for start in range(0, len(text), PIECE_CHARS):
            piece = text[start : start + PIECE_CHARS]
            data = piece.encode("utf-8", "surrogatepass")
            written = 0
            try:
                while written < len(data):  # pwrite may write less than asked
                    written += os.pwrite(self._fd, data[written:], self._bytes[-1] + written)
            except OSError as exc:
                raise IngestError(
                    f"cannot spool a long text to the temporary folder {tempfile.gettempdir()} "
                    f"({exc.strerror or exc}); free space there or point TMPDIR elsewhere"
                ) from None
            self._chars.append(self._chars[-1] + len(piece))
            self._bytes.append(self._bytes[-1] + len(data))

    def __len__(self) -> int:
        return self._chars[-1]

    def __getitem__(self, key: slice) -> str:
        if not isinstance(key, slice):
            raise TypeError(f"SpooledText is read by slices, not by {type(key).__name__}")
        start, stop, step = key.indices(len(self))
        if step != 1:
            raise ValueError("SpooledText slices take no step")
        if stop <= start:
            return ""
        first = bisect.bisect_right(self._chars, start) - 1
        last = bisect.bisect_right(self._chars, stop - 1) - 1
        if first == last:
            base = self._chars[first]
            return self._piece(first)[start - base : stop - base]
        out = self._piece(first)[start - self._chars[first] :]
        for i in range(first + 1, last):
            out += self._piece(i)
        return out + self._piece(last)[: stop - self._chars[last]]

    def pieces(self) -> Iterator[str]:
        """The text in order, a stored piece at a time."""
        for i in range(len(self._chars) - 1):
            yield self._read(i)

    def _piece(self, i: int) -> str:
        piece = self._decoded.get(i)
        if piece is None:
            if len(self._decoded) >= 2:
                del self._decoded[next(iter(self._decoded))]  # the one read first
            piece = self._decoded[i] = self._read(i)
        return piece

    def _read(self, i: int) -> str:
        size = self._bytes[i + 1] - self._bytes[i]
        return os.pread(self._fd, size, self._bytes[i]).decode("utf-8", "surrogatepass")

    def __reduce__(self) -> tuple[type[str], tuple[str]]:
        return str, (self[:],)

    def __repr__(self) -> str:
        return f"<SpooledText: {len(self):,} characters in {len(self._chars) - 1} pieces on disk>"
