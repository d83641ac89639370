"""What the widgets share: where their JS lives, and how bulk numbers travel.

The front-end modules live in ``ragtt/views/static``: built there from ``js/src`` by the one JS
build (``npm run build``, ``./dev build``, the wheel's build hook), never committed.
Numeric arrays travel as binary buffers ``{"dtype", "shape", "view"}`` (the jupyter-scatter
convention); the JS rebuilds typed arrays and refuses any dtype it does not know. Many
strings travel packed (js/src/wire.js's ``strings`` decodes them one at a time): as one
UTF-8 byte buffer with int32 offsets, or, for hex ids of one length, as their raw bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["array", "packed_ids", "packed_strings", "split_buffers", "static_file", "strings"]

_HERE = Path(__file__).resolve().parent
# little-endian, as typed arrays read them
_DTYPES = {"int32": "<i4", "float32": "<f4", "int16": "<i2", "uint16": "<u2", "uint8": "u1"}


def static_file(name: str) -> Path:
    """The path of a built front-end file (``timeline.js`` ...), in the wheel or a source checkout."""
    path = _HERE / "static" / name
    if path.is_file():
        return path
    raise FileNotFoundError(
        f"ragtt front-end file {name!r} is missing from {path.parent}: in a source checkout run "
        "`./dev build` (or `npm run build`), which builds it from js/src; otherwise reinstall ragtt"
    )


def array(values: Sequence[float] | np.ndarray, dtype: str) -> dict[str, Any]:
    """A 1-D array as a binary buffer: ``dtype`` is one of int32, float32, int16, uint16, uint8."""
    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be one of {sorted(_DTYPES)}; got {dtype!r}")
    data = np.ascontiguousarray(np.asarray(values, dtype=_DTYPES[dtype]))
    if data.ndim != 1:
        raise ValueError(f"only 1-D arrays travel as buffers; got shape {data.shape}")
    return {"dtype": dtype, "shape": [int(data.shape[0])], "view": memoryview(data.tobytes())}


def packed_strings(values: list[str]) -> dict[str, Any]:
    """Strings as one UTF-8 byte buffer and int32 offsets (``n + 1``), decoded on demand in JS."""
    encoded = [s.encode("utf-8") for s in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return {"bytes": array(np.frombuffer(b"".join(encoded), dtype="u1"), "uint8"), "offsets": array(offsets, "int32")}


def packed_ids(ids: list[str]) -> dict[str, Any]:
    """Hex ids of one length as raw bytes (half the size, no offsets); anything else as UTF-8."""
    width = len(ids[0]) if ids else 0
    if width and width % 2 == 0 and all(len(i) == width for i in ids):
        try:
            raw = bytes.fromhex("".join(ids))
        except ValueError:
            raw = b""
        if raw and raw.hex() == "".join(ids):  # lowercase only, so the round trip is exact
            return {"hex": array(np.frombuffer(raw, dtype="u1"), "uint8"), "width": width // 2}
    return packed_strings(ids)


def strings(packed: dict[str, Any]) -> list[str]:
    """The strings ``packed_ids`` or ``packed_strings`` packed."""
    if "hex" in packed:
        raw, width = bytes(packed["hex"]["view"]), packed["width"]
        return [raw[i : i + width].hex() for i in range(0, len(raw), width)]
    raw = bytes(packed["bytes"]["view"])
    off = np.frombuffer(packed["offsets"]["view"], dtype="<i4")
    return [raw[off[i] : off[i + 1]].decode("utf-8") for i in range(len(off) - 1)]


def split_buffers(value: Any) -> tuple[Any, list[memoryview]]:
    """A message with buffers inside (``array``'s views) as JSON content and its buffers:
    each view becomes ``{"$ref": k}``, buffer ``k`` of the message (js/src/wire.js's
    ``joinBuffers`` puts them back). For ``Widget.send(content, buffers)``."""
    buffers: list[memoryview] = []

    def walk(v: Any) -> Any:
        if isinstance(v, memoryview | bytes | bytearray):
            buffers.append(memoryview(v))
            return {"$ref": len(buffers) - 1}
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [walk(x) for x in v]
        return v

    return walk(value), buffers
