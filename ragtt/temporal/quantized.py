"""int8 candidate scores for the in-memory vector search, on ONNX Runtime's integer GEMM.

A namespace's rows are append-only in memory (``VectorMatrix``), so every full block of
``BLOCK_ROWS`` rows is sealed once: its unit vectors become int8 codes with one scale per
row, and the transposed codes become the constant weight of a small ONNX graph
(``MatMulInteger``, the row scales, the validity mask, ``TopK``). ONNX Runtime packs a
constant weight once, at session creation, and its MLAS kernel then multiplies a uint8
query by the block with SIMD integer products: a quarter of float32's memory traffic and
about a fifth of a float32 matrix-vector product's CPU time; the top-k runs in the same
call, so Python only merges a few candidates per block. Integer sums are exact, so the
scores are the same on every run and thread count.

The scores only choose candidates: ``VectorMatrix.search`` rescores them exactly in
float32. Rows past the last full block are scored exactly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["BLOCK_ROWS", "Int8Blocks"]

BLOCK_ROWS = 8192  # rows per sealed block: ~0.05 s to seal at 384 dims, 3 MiB of codes
_ZERO_POINT = 128  # the query goes in as uint8 (MLAS's fast u8 x s8 path), centred here


def int8_codes(block: NDArray[np.float32]) -> tuple[NDArray[np.int8], NDArray[np.float32]]:
    """Row-wise symmetric int8 codes of ``block`` and their scales (``block ~= codes * scale``)."""
    peak = np.abs(block).max(axis=1)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    return np.rint(block / scale[:, None]).astype(np.int8), scale


def _session(codes: NDArray[np.int8], scale: NDArray[np.float32]) -> Any:
    """query (uint8), mask (bool), k (int64) -> the k best approximate cosines of admitted rows, and their rows."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    rows, dim = codes.shape
    graph = helper.make_graph(
        [
            helper.make_node("MatMulInteger", ["query", "codes", "zero"], ["dots"]),
            helper.make_node("Cast", ["dots"], ["dots_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["dots_f", "scale"], ["approx"]),
            helper.make_node("Where", ["mask", "approx", "refused"], ["admitted"]),
            helper.make_node("TopK", ["admitted", "k"], ["values", "indices"], axis=1),
        ],
        "int8_block",
        [
            helper.make_tensor_value_info("query", TensorProto.UINT8, [1, dim]),
            helper.make_tensor_value_info("mask", TensorProto.BOOL, [1, rows]),
            helper.make_tensor_value_info("k", TensorProto.INT64, [1]),
        ],
        [
            helper.make_tensor_value_info("values", TensorProto.FLOAT, [1, None]),
            helper.make_tensor_value_info("indices", TensorProto.INT64, [1, None]),
        ],
        initializer=[
            helper.make_tensor("codes", TensorProto.INT8, [dim, rows], codes.T.tobytes(), raw=True),
            helper.make_tensor("zero", TensorProto.UINT8, [], [_ZERO_POINT]),
            helper.make_tensor("scale", TensorProto.FLOAT, [1, rows], scale.tobytes(), raw=True),
            helper.make_tensor("refused", TensorProto.FLOAT, [], [-np.inf]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    options = ort.SessionOptions()
    # one thread: a pool's workers spin between calls, which costs more than it gives on a
    # product this small; readers in parallel threads each get their own core
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


class Int8Blocks:
    """The sealed blocks of one matrix, one ONNX Runtime session each."""

    def __init__(self) -> None:
        self._sessions: list[Any] = []

    @property
    def rows(self) -> int:
        """How many leading rows of the matrix the sealed blocks cover."""
        return len(self._sessions) * BLOCK_ROWS

    def seal(self, matrix: NDArray[np.float32], size: int) -> None:
        """Seal every block of ``matrix[:size]`` (unit rows) that is full and not sealed yet."""
        while self.rows + BLOCK_ROWS <= size:
            self._sessions.append(_session(*int8_codes(matrix[self.rows : self.rows + BLOCK_ROWS])))

    def top(
        self, query: NDArray[np.float32], mask: NDArray[np.bool_], k: int
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """Each sealed block's ``k`` best admitted rows for the unit ``query``: (rows, approximate cosines).

        ``mask`` covers the sealed rows; a refused row scores -inf (a block may admit fewer than ``k``).
        """
        peak = float(np.abs(query).max())
        step = peak / 127.0 if peak > 0 else 1.0
        feed = {
            "query": (np.rint(query / step) + _ZERO_POINT).astype(np.uint8).reshape(1, -1),
            "k": np.array([min(k, BLOCK_ROWS)], dtype=np.int64),
        }
        rows, values = [], []
        for i, session in enumerate(self._sessions):
            feed["mask"] = mask[i * BLOCK_ROWS : (i + 1) * BLOCK_ROWS].reshape(1, -1)
            best, where = session.run(None, feed)
            values.append(best[0])
            rows.append(where[0] + i * BLOCK_ROWS)
        return np.concatenate(rows), np.concatenate(values) * np.float32(step)
