"""What the widgets share: where their JS lives, and how bulk numbers travel.

The front-end modules are found in the wheel's ``ragtt/views/static`` folder (the build
force-includes the repo's ``js/`` there) or, in an editable install, in the repo's ``js/``.
Numeric arrays travel as binary buffers ``{"dtype", "shape", "view"}`` (the jupyter-scatter
convention); the JS rebuilds typed arrays and refuses any dtype it does not know.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["array", "static_file"]

_HERE = Path(__file__).resolve().parent
# little-endian, as typed arrays read them
_DTYPES = {"int32": "<i4", "float32": "<f4", "int16": "<i2", "uint16": "<u2", "uint8": "u1"}


def static_file(name: str) -> Path:
    """The path of a front-end file (``timeline.js`` ...), in the wheel or in the repo."""
    for folder in (_HERE / "static", _HERE.parents[1] / "js"):
        path = folder / name
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"ragtt front-end file {name!r} is missing: looked in {_HERE / 'static'} (wheel) and "
        f"{_HERE.parents[1] / 'js'} (editable install); reinstall ragtt"
    )


def array(values: Sequence[float] | np.ndarray, dtype: str) -> dict[str, Any]:
    """A 1-D array as a binary buffer: ``dtype`` is one of int32, float32, int16, uint16, uint8."""
    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be one of {sorted(_DTYPES)}; got {dtype!r}")
    data = np.ascontiguousarray(np.asarray(values, dtype=_DTYPES[dtype]))
    if data.ndim != 1:
        raise ValueError(f"only 1-D arrays travel as buffers; got shape {data.shape}")
    return {"dtype": dtype, "shape": [int(data.shape[0])], "view": memoryview(data.tobytes())}
