"""4-bit candidate scores for the in-memory vector search, on ONNX Runtime's ``MatMulNBits``.

A namespace's rows are append-only in memory (``VectorMatrix``), so the leading full blocks
of ``BLOCK_ROWS`` rows are sealed into segments: a segment's unit vectors become 4-bit
codes with one scale per row and group of ``GROUP`` dimensions, and the codes become the
constant weight of a one-node ONNX graph (``MatMulNBits`` with ``accuracy_level=4``).
ONNX Runtime packs a constant weight once, at session creation;
its kernel quantizes the float32 query to int8 per group and multiplies it by the codes in
integers, an eighth of float32's memory traffic, on the path a language model's 4-bit
weights take at each decoding step (a one-row product). At 65,536 rows of 384 dimensions
it took 0.41 ms against 0.80 ms for 8-bit codes (measured side by side).

The best rows are chosen in NumPy, not in the graph: there, the validity mask (``Where``)
and ``TopK`` (k = 200 of 98,304 rows) cost twice the product itself. ``best_rows`` folds the
scores into groups of ``FOLD`` rows and takes each group's maximum (one vectorised pass); at
least ``m`` rows reach the ``m``-th largest maximum, so the rows at or above it hold the
exact top-``k`` whenever ``k`` of them are admitted, and only those few hundred rows are
checked against the filter and partitioned.

The segments follow the binary digits of the number of sealed blocks (11 blocks: 8, 2 and
1), so a namespace of ``n`` rows needs at most ``log2(n / BLOCK_ROWS) + 1`` calls, and the
layout depends only on ``n``, never on the order the rows arrived in: the same rows give
the same segments, hence the same candidates, on every run and open. Sealing one more block
rebuilds only the segments whose digits change (the 8, 2, 1 become 8, 4), so every row is
coded about ``log2`` times as a namespace grows.

The scores only choose candidates: ``VectorMatrix.search`` rescores them exactly in
float32. Rows past the last full block are scored exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["BLOCK_ROWS", "FOLD", "GROUP", "Int4Blocks", "best_rows", "int4_codes", "segment_spans"]

BLOCK_ROWS = 4096  # rows per sealed block: at most this many (minus one) are scored exactly
GROUP = 128  # dimensions per scale (MatMulNBits' block_size; smaller dimensions use a power of two)
_ZERO_POINT = 8  # MatMulNBits' default zero point for 4-bit codes
_LEVELS = 7  # codes run from 8 - 7 to 8 + 7: symmetric around the zero point
FOLD = 64  # rows per maximum in ``best_rows``: rows ``len(scores) / FOLD`` apart (divides BLOCK_ROWS)


def _group_size(dim: int) -> int:
    """Dimensions per scale for ``dim``: ``GROUP``, or the power of two (>= 16) covering a smaller ``dim``."""
    return GROUP if dim >= GROUP else max(16, 1 << (dim - 1).bit_length())


def int4_codes(rows: NDArray[np.float32], group: int) -> tuple[NDArray[np.uint8], NDArray[np.float32]]:
    """Symmetric 4-bit codes of ``rows`` per row and group of ``group`` dimensions (zero-padded to
    whole groups), around the zero point 8, two to a byte (the even dimension in the low
    nibble, as MatMulNBits reads them), and their scales:
    ``rows[i, g*group + j] ~= (code(i, g, j) - 8) * scales[i * groups + g]``."""
    n, dim = rows.shape
    groups = -(-dim // group)
    packed = np.empty((n, groups, group // 2), dtype=np.uint8)
    scales = np.empty((n, groups), dtype=np.float32)
    padded = np.zeros((min(n, BLOCK_ROWS), groups * group), dtype=np.float32)
    for lo in range(0, n, BLOCK_ROWS):  # a block at a time: the temporaries stay a few MiB
        hi = min(lo + BLOCK_ROWS, n)
        part = padded[: hi - lo]
        part[:, :dim] = rows[lo:hi]
        by_group = part.reshape(hi - lo, groups, group)
        peak = np.abs(by_group).max(axis=2)
        scale = np.where(peak > 0, peak / _LEVELS, 1.0).astype(np.float32)
        codes = (np.rint(by_group / scale[..., None]) + _ZERO_POINT).astype(np.uint8)
        packed[lo:hi] = codes[..., 0::2] | (codes[..., 1::2] << 4)
        scales[lo:hi] = scale
    return packed, scales.reshape(-1)


def segment_spans(blocks: int) -> list[tuple[int, int]]:
    """The row spans of the segments of ``blocks`` sealed blocks: one per binary digit, largest first."""
    spans, start = [], 0
    for bit in reversed(range(blocks.bit_length())):
        if blocks >> bit & 1:
            stop = start + (BLOCK_ROWS << bit)
            spans.append((start, stop))
            start = stop
    return spans


def _session(rows: NDArray[np.float32], group: int) -> Any:
    """query (float32, padded to whole groups) -> the approximate cosine of each of ``rows``."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    codes, scales = int4_codes(rows, group)
    n, groups, _ = codes.shape
    width = groups * group
    graph = helper.make_graph(
        [
            helper.make_node(
                "MatMulNBits",
                ["query", "codes", "scales"],
                ["approx"],
                domain="com.microsoft",
                K=width,
                N=n,
                bits=4,
                block_size=group,
                accuracy_level=4,  # the query in int8 too: integer products
            ),
        ],
        "int4_segment",
        [helper.make_tensor_value_info("query", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info("approx", TensorProto.FLOAT, [1, n])],
        initializer=[numpy_helper.from_array(codes, "codes"), numpy_helper.from_array(scales, "scales")],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]
    )
    model.ir_version = 8
    options = ort.SessionOptions()
    # ONNX Runtime's own pool, a thread a core, splits the rows: a 65,536-row segment took
    # 0.66 ms on two cores against 1.18 ms on one. Its idle workers sleep rather than spin
    # between calls, so the cores are free for the SQL and NumPy work between the products.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def best_rows(scores: NDArray[np.float32], admitted: NDArray[np.bool_], k: int) -> NDArray[np.int64]:
    """The ``k`` highest-scoring admitted rows of ``scores`` (a multiple of ``FOLD`` long), in
    no particular order; every admitted row when fewer are admitted."""
    if k <= 0 or not len(scores):
        return np.zeros(0, dtype=np.int64)
    maxima = scores.reshape(FOLD, -1).max(axis=0)  # any partition bounds alike; this one is a SIMD pass
    reach = min(2 * k, len(maxima))  # at least ``reach`` rows score at or above the reach-th maximum
    floor = np.partition(maxima, len(maxima) - reach)[len(maxima) - reach]
    pool = np.flatnonzero(scores >= floor)
    pool = pool[admitted[pool]]
    if len(pool) < k:  # the filter refused most of the best: choose among every admitted row
        pool = np.flatnonzero(admitted)
    if len(pool) > k:  # every admitted row outside the pool scores below each row in it
        pool = pool[np.argpartition(-scores[pool], k - 1)[:k]]
    return pool


@dataclass(frozen=True)
class _Segment:
    start: int
    stop: int
    session: Any


class Int4Blocks:
    """The sealed blocks of one matrix of ``dimension`` columns, in segments of ``2**j`` blocks."""

    def __init__(self, dimension: int) -> None:
        self._group = _group_size(dimension)
        self._width = -(-dimension // self._group) * self._group
        self._segments: list[_Segment] = []

    @property
    def rows(self) -> int:
        """How many leading rows of the matrix the sealed blocks cover."""
        return self._segments[-1].stop if self._segments else 0

    def seal(self, matrix: NDArray[np.float32], size: int) -> None:
        """Seal every full block of ``matrix[:size]`` (unit rows), rebuilding the segments whose span changed."""
        spans = segment_spans(size // BLOCK_ROWS)
        if [(s.start, s.stop) for s in self._segments] == spans:
            return
        kept = {(s.start, s.stop): s for s in self._segments if (s.start, s.stop) in spans}
        self._segments = []  # the replaced sessions go before their successors are built
        for start, stop in spans:  # a failed build leaves a sealed prefix, the rest rebuilt next time
            segment = kept.pop((start, stop), None)
            self._segments.append(segment or _Segment(start, stop, _session(matrix[start:stop], self._group)))

    def forget(self, rows: NDArray[np.int64]) -> None:
        """Drop the segments holding any of ``rows`` (their vectors changed): the next seal rebuilds them."""
        if len(rows):
            self._segments = [s for s in self._segments if not ((rows >= s.start) & (rows < s.stop)).any()]

    def scores(self, query: NDArray[np.float32]) -> NDArray[np.float32]:
        """The approximate cosine of every sealed row with the unit ``query``."""
        padded = np.zeros((1, self._width), dtype=np.float32)
        padded[0, : len(query)] = query
        parts = [segment.session.run(None, {"query": padded})[0][0] for segment in self._segments]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)

    def top(
        self, query: NDArray[np.float32], mask: NDArray[np.bool_], k: int
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """The ``k`` best sealed rows that ``mask`` admits for the unit ``query``, in no
        particular order (fewer when fewer are admitted): (rows, approximate cosines)."""
        approx = self.scores(query)
        rows = best_rows(approx, mask, k)
        return rows, approx[rows]
