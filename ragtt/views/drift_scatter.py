"""The DriftScatter's model state (``_data``), computed from a Project and two versions.

No widget stack here: the notebook's ``DriftScatter`` widget and ``ragtt serve``'s ``/ui`` both
build on it.

Wire format (``_data``; the JS refuses any dtype it does not know). Points: the left
version's first, then the right's; 7 bytes each:

- ``points.x``, ``points.y``: int16, the projection quantized to [-32767, 32767] over
  ``bounds`` (float32 ``[xmin, xmax, ymin, ymax]``);
- ``points.version``: uint8, 0 left, 1 right; ``points.source``: uint16 index into
  ``sources`` (65535: one of the sources past the first 65535).

Chunks (``U`` unique ids) are ordered common first (``n_common``), then left-only, then
right-only, so point ``i < n_left`` is chunk ``i`` and right point ``j`` is chunk ``j`` when
``j < n_common`` else ``n_left + j - n_common``; left point ``i`` and right point ``i`` are
the same chunk for ``i < n_common`` (the segments). Text previews are a UTF-8 byte
buffer (uint8) with int32 offsets; chunk ids too, unless every id is lowercase hex of one
even length (ragtt's own are 24 digits): then ``{"hex": uint8, "width": bytes per id}``.

Text previews are cut at ``text_chars`` characters, and shorter (never under 40) when all
of them together would pass ``TEXT_BUDGET`` bytes: a 200,000-point report stays loadable.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ragtt.views.wire import array, packed_ids, packed_strings, strings

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "SEGMENTS_DEFAULT_MAX",
    "TEXT_BUDGET",
    "Side",
    "build",
    "dequantize",
    "load",
    "model",
    "normalized",
    "point_chunks",
    "query_vectors",
    "sides",
    "source_table",
    "strings",
    "wire",
]

_Q = 32767  # int16 quantization half-range
_OTHER_SOURCE = 65535
TEXT_BUDGET = 4_000_000
"""Bytes of text previews a scatter carries at most (see the module docstring)."""
SEGMENTS_DEFAULT_MAX = 20_000
"""More common chunks than this: per-chunk segments start hidden (a checkbox shows them)."""


def sides(proj: Any, left_version: int, right_version: int, text_chars: int = 240) -> list[Side]:
    """Both versions' chunks and vectors, each with the embedder that made them."""
    out = []
    for version in (left_version, right_version):
        side = load(proj, version, text_chars)
        side.embedder = proj.embedder_at(version)
        out.append(side)
    return out


def wire(
    proj: Any,
    left_v: int,
    right_v: int,
    *,
    query: str | None = None,
    method: str = "pca",
    text_chars: int = 240,
    report: Any = None,
) -> dict[str, Any]:
    """The ``_data`` of two resolved versions (``query``: a logged query id or a text to place),
    with the per-source table of ``report`` (the ``DriftReport`` of those versions; default:
    ``proj.drift``'s)."""
    pair = sides(proj, left_v, right_v, text_chars)
    text: str | None = None
    vectors: list[NDArray[np.float32] | None] = [None, None]
    if query is not None:
        text, vectors = query_vectors(proj, query, pair)
    data = build(pair[0], pair[1], method, text, vectors)
    data["labels"] = {str(v): name for v, name in proj.version_labels().items() if v in (left_v, right_v)}
    data["source_table"] = source_table(proj, report if report is not None else proj.drift(left_v, right_v))
    return data


def source_table(proj: Any, report: Any) -> list[dict[str, Any]]:
    """The drift report's per-source rows as the CLI prints them (``SourceDrift.summary``), for
    the table beside the plot; a source removed and another added with identical content (the
    same SHA-256) is one row, ``renamed`` from the old name."""
    added = {s.source: s for s in report.sources if s.status == "added"}
    removed = {s.source: s for s in report.sources if s.status == "removed"}
    before = {proj.document(s, at=report.left_version).content_hash: s for s in removed}
    renamed: dict[str, str] = {}
    for name in added:
        old = before.get(proj.document(name, at=report.right_version).content_hash)
        if old is not None and old not in renamed.values():
            renamed[name] = old
    rows = []
    for s in report.sources:
        if s.source in renamed.values():
            continue  # shown as its new name's rename
        row = {
            "source": s.source,
            "status": s.status,
            "cosine": s.centroid_cosine,
            "left": s.chunks_left,
            "right": s.chunks_right,
            "common": s.chunks_common,
            "drifted": bool(s.drifted),
            "summary": s.summary(),
            "renamed_from": renamed.get(s.source),
        }
        if row["renamed_from"] is not None:
            row["status"] = "renamed"
            row["left"] = removed[row["renamed_from"]].chunks_left
            row["summary"] = f"renamed from {row['renamed_from']} (identical content, {s.chunks_right} chunks)"
        rows.append(row)
    return rows


def model(proj: Any, a: Any, b: Any, *, query: str | None = None) -> dict[str, Any]:
    """The DriftScatter's traits as a fresh widget has them: ``_data``, ``color_by``, ``selected``."""
    return {
        "_data": wire(proj, proj.resolve_version(a), proj.resolve_version(b), query=query),
        "color_by": "version",
        "selected": [],
    }


@dataclass
class Side:
    version: int
    embedder: str
    ids: list[str]
    sources: list[str]
    texts: list[str]
    vectors: NDArray[np.float32]


def normalized(vectors: NDArray[np.float32]) -> NDArray[np.float32]:
    if vectors.ndim != 2:
        return vectors
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms == 0, 1, norms)).astype(np.float32)


def load(proj: Any, version: int, text_chars: int) -> Side:
    frame, vectors = proj.vectors(version)
    texts = [s[:text_chars] for s in frame["text"].to_list()]
    return Side(version, "", frame["chunk_id"].to_list(), frame["source"].to_list(), texts, normalized(vectors))


def query_vectors(proj: Any, query: str, pair: list[Side]) -> tuple[str, list[NDArray[np.float32] | None]]:
    """The query's vector in each version's embedder (a logged query id, or text)."""
    from ragtt import NotFoundError

    text = query
    with contextlib.suppress(NotFoundError):  # not a logged id: the query is its own text
        text = proj.run(query).query
    vectors: list[NDArray[np.float32] | None] = []
    for side in pair:
        vec = proj.query_vector(text, side.embedder)
        ok = vec is not None and vec.shape[0] == side.vectors.shape[1]
        vectors.append(normalized(np.asarray(vec, dtype=np.float32)[None, :])[0] if ok else None)
    return text, vectors


def _project(
    left: NDArray[np.float32], right: NDArray[np.float32], method: str, extra: list[NDArray[np.float32]]
) -> tuple[NDArray[np.float64], list[NDArray[np.float64]], list[float]]:
    """Fit one projection over both sides; returns (coords of left+right, coords of extra, explained)."""
    stacked = np.vstack([left, right]).astype(np.float32)
    if method == "umap":
        try:
            import umap
        except ImportError:
            raise ImportError(
                "method='umap' needs umap-learn (pip install umap-learn); method='pca' needs nothing"
            ) from None
        reducer = umap.UMAP(n_components=2, random_state=0)
        coords = np.asarray(reducer.fit_transform(stacked), dtype=np.float64)
        return coords, [np.asarray(reducer.transform(e[None, :]), dtype=np.float64)[0] for e in extra], []
    if method != "pca":
        raise ValueError(f"method must be 'pca' or 'umap'; got {method!r}")
    mean = stacked.mean(axis=0, dtype=np.float64)
    cov = np.zeros((stacked.shape[1], stacked.shape[1]), dtype=np.float64)
    for start in range(0, stacked.shape[0], 65536):  # bounded memory at 200k x 384
        block = stacked[start : start + 65536].astype(np.float64) - mean
        cov += block.T @ block
    values, vectors = np.linalg.eigh(cov)
    order = np.argsort(values)[::-1][:2]
    axes = vectors[:, order]
    if axes.shape[1] < 2:  # a 1-D space: the second axis is flat
        axes = np.hstack([axes, np.zeros((axes.shape[0], 1))])
    for k in range(2):  # deterministic signs: each axis's largest loading is positive
        if axes[np.argmax(np.abs(axes[:, k])), k] < 0:
            axes[:, k] = -axes[:, k]
    total = float(values.sum()) or 1.0
    coords = (stacked - mean.astype(np.float32)) @ axes.astype(np.float32)
    return (
        coords.astype(np.float64),
        [(e.astype(np.float64) - mean) @ axes for e in extra],
        [float(values[i] / total) for i in order],
    )


def build(
    left: Side, right: Side, method: str, query_text: str | None, query_vectors: list[NDArray[np.float32] | None]
) -> dict[str, Any]:
    if not left.ids and not right.ids:
        raise ValueError(f"versions {left.version} and {right.version} hold no chunks: nothing to plot")
    dl, dr = left.vectors.shape[1], right.vectors.shape[1]
    comparable = dl == dr
    lv, rv = left.vectors, right.vectors
    if not comparable:  # no shared space: each version in its own block of coordinates
        lv = np.hstack([lv, np.zeros((lv.shape[0], dr), dtype=np.float32)])
        rv = np.hstack([np.zeros((rv.shape[0], dl), dtype=np.float32), rv])

    # Order: common chunks first (in the left version's order), then left-only, then right-only.
    right_index = {c: i for i, c in enumerate(right.ids)}
    common = [i for i, c in enumerate(left.ids) if c in right_index]
    common_ids = {left.ids[i] for i in common}
    left_order = common + [i for i, c in enumerate(left.ids) if c not in common_ids]
    right_order = [right_index[left.ids[i]] for i in common] + [
        i for i, c in enumerate(right.ids) if c not in common_ids
    ]
    lv, rv = lv[left_order], rv[right_order]

    extra: list[NDArray[np.float32]] = []
    for side_vec, is_left in zip(query_vectors, (True, False), strict=True):
        if side_vec is None:
            continue
        pad = np.zeros(dr if is_left else dl, dtype=np.float32)
        extra.append(
            side_vec
            if comparable
            else (np.concatenate([side_vec, pad]) if is_left else np.concatenate([pad, side_vec]))
        )
    coords, extra_xy, explained = _project(lv, rv, method, extra)

    lo, hi = coords.min(axis=0), coords.max(axis=0)
    for e in extra_xy:
        lo, hi = np.minimum(lo, e), np.maximum(hi, e)
    span = np.where(hi - lo > 0, hi - lo, 1.0)
    lo, hi = lo - 0.02 * span, hi + 0.02 * span
    quant = np.round((coords - lo) / (hi - lo) * (2 * _Q) - _Q).astype(np.int16)

    sources: list[str] = []
    source_index: dict[str, int] = {}
    point_sources = [left.sources[i] for i in left_order] + [right.sources[i] for i in right_order]
    codes = np.empty(len(point_sources), dtype=np.uint16)
    for n, s in enumerate(point_sources):
        code = source_index.get(s)
        if code is None:
            code = len(sources) if len(sources) < _OTHER_SOURCE else _OTHER_SOURCE
            if code != _OTHER_SOURCE:
                source_index[s] = code
                sources.append(s)
        codes[n] = code
    chunk_ids = [left.ids[i] for i in left_order] + [right.ids[i] for i in right_order[len(common) :]]
    chunk_texts = [left.texts[i] for i in left_order] + [right.texts[i] for i in right_order[len(common) :]]
    n_left = len(left_order)
    versions = np.concatenate([np.zeros(n_left, np.uint8), np.ones(len(right_order), np.uint8)])

    centroids = np.full((len(sources), 4), np.nan, dtype=np.float32)
    for k, (start, stop) in enumerate(((0, n_left), (n_left, len(codes)))):
        if stop > start:
            c = codes[start:stop]
            keep = c != _OTHER_SOURCE
            sums = np.zeros((len(sources), 2))
            np.add.at(sums, c[keep], coords[start:stop][keep])
            counts = np.bincount(c[keep], minlength=len(sources))
            present = counts > 0
            centroids[present, 2 * k : 2 * k + 2] = sums[present] / counts[present, None]

    query = None
    if query_text is not None:
        xy = np.full(4, np.nan, dtype=np.float32)
        found = iter(extra_xy)
        for k, vec in enumerate(query_vectors):
            if vec is not None:
                xy[2 * k : 2 * k + 2] = next(found)
        query = {"text": query_text, "xy": array(xy, "float32")}
    return {
        "left": {"version": left.version, "embedder": left.embedder, "dim": dl},
        "right": {"version": right.version, "embedder": right.embedder, "dim": dr},
        "comparable": comparable,
        "method": method,
        "explained": array(explained or [np.nan, np.nan], "float32"),
        "n_left": n_left,
        "n_right": len(right_order),
        "n_common": len(common),
        "segments_default": len(common) <= SEGMENTS_DEFAULT_MAX,
        "bounds": array([lo[0], hi[0], lo[1], hi[1]], "float32"),
        "points": {
            "x": array(quant[:, 0], "int16"),
            "y": array(quant[:, 1], "int16"),
            "version": array(versions, "uint8"),
            "source": array(codes, "uint16"),
        },
        "chunks": {"ids": packed_ids(chunk_ids), "text": packed_strings(_budget(chunk_texts))},
        "sources": sources,
        "source_centroids": array(centroids.ravel(), "float32"),
        "query": query,
    }


def _budget(texts: list[str]) -> list[str]:
    total = sum(len(t) for t in texts)
    if total <= TEXT_BUDGET:
        return texts
    cut = max(40, TEXT_BUDGET // max(1, len(texts)))
    return [t if len(t) <= cut else t[: cut - 1] + "…" for t in texts]


def dequantize(d: dict[str, Any]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    xmin, xmax, ymin, ymax = np.frombuffer(d["bounds"]["view"], dtype="<f4").astype(np.float64)
    qx = np.frombuffer(d["points"]["x"]["view"], dtype="<i2").astype(np.float64)
    qy = np.frombuffer(d["points"]["y"]["view"], dtype="<i2").astype(np.float64)
    return xmin + (qx + _Q) / (2 * _Q) * (xmax - xmin), ymin + (qy + _Q) / (2 * _Q) * (ymax - ymin)


def point_chunks(d: dict[str, Any]) -> NDArray[np.int64]:
    """The chunk index of every point (see the module docstring for the order)."""
    n_left, n_right, n_common = d["n_left"], d["n_right"], d["n_common"]
    j = np.arange(n_right)
    return np.concatenate([np.arange(n_left), np.where(j < n_common, j, n_left + j - n_common)])
