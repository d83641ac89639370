"""The hash chain over the event log: each event's hash covers its stored fields and the
hash of the event before it, so rewriting or dropping any event breaks every hash after it."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

__all__ = ["GENESIS", "event_hash"]

GENESIS = "0" * 64


def event_hash(prev: str, fields: Sequence[Any]) -> str:
    """sha256 over ``prev`` and (event_id, ts, type, query_id, index_version, doc_id, payload
    text) exactly as stored; None and '' stay distinct."""
    h = hashlib.sha256(prev.encode("ascii"))
    for value in fields:
        text = "\x00" if value is None else str(value)
        h.update(len(text).to_bytes(8, "big"))
        h.update(text.encode("utf-8"))
    return h.hexdigest()
