"""Stable hashes and time-ordered ids (never Python's salted ``hash()``)."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragtt.spooled_text import SpooledText

_ENCODE_STEP = 1 << 20


def sha256_hex(data: str | bytes | SpooledText) -> str:
    if isinstance(data, bytes):
        return hashlib.sha256(data).hexdigest()
    # Encoded a megabyte of characters at a time: a whole 200 MB document's UTF-8 copy would
    # double the memory an ingest holds. UTF-8 of the pieces is UTF-8 of the whole.
    digest = hashlib.sha256()
    for start in range(0, len(data), _ENCODE_STEP):
        digest.update(data[start : start + _ENCODE_STEP].encode("utf-8"))
    return digest.hexdigest()


def stable_json(obj: Any) -> str:
    """Canonical JSON: sorted keys, no whitespace, so equal values hash equal."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def doc_id_for(source: str) -> str:
    return sha256_hex("doc\0" + source)[:16]


def chunk_id_for(source: str, text: str, occurrence: int) -> str:
    """Same source + same text + same occurrence number = same id, across re-ingests."""
    return sha256_hex(f"chunk\0{source}\0{occurrence}\0{text}")[:24]


_lock = threading.Lock()
_last_ms = 0
_seq = 0


def time_ordered_id() -> str:
    """A 32-hex-digit id that sorts by creation time (UUIDv7 layout, monotonic per process)."""
    global _last_ms, _seq
    with _lock:
        ms = time.time_ns() // 1_000_000
        if ms <= _last_ms:
            ms = _last_ms
            _seq += 1
            if _seq > 0xFFF:  # more than 4096 ids in one millisecond: borrow the next one
                ms += 1
                _seq = 0
        else:
            _seq = 0
        _last_ms = ms
        seq = _seq
    rand = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = (ms << 80) | (0x7 << 76) | (seq << 64) | (0b10 << 62) | rand
    return f"{value:032x}"
