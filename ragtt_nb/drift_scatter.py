"""``DriftScatter``: where the corpus moved in embedding space between two index versions.

Both versions' vectors are projected by ONE 2D projection fitted over both (PCA by
default: an eigendecomposition of their joint covariance in numpy, each axis's sign fixed
so its largest loading is positive, so the same inputs always give the same picture;
UMAP with ``method="umap"`` when ``umap-learn`` is installed). Vectors of different
dimensions (an embedder swap that changed the size) share no space: each version is
placed in its own coordinates of a block layout ``[left | 0]``, ``[0 | right]`` before
the fit, and the view says the distance between the versions means nothing but "changed".

Vectors are read with ``proj.vectors(version)``, the read-only exact-version scan that
``proj.drift`` uses too. A query's vector under an older embedder comes from the project's
embedding cache (``proj.query_vector(text, embedder_id)``); when it is not there that
version has no query point.

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

import anywidget
import numpy as np
import traitlets as t

from ragtt_nb._wire import array, static_file

if TYPE_CHECKING:
    import polars as pl
    from numpy.typing import NDArray

    import ragtt

__all__ = ["DriftScatter"]

_Q = 32767  # int16 quantization half-range
_OTHER_SOURCE = 65535
TEXT_BUDGET = 4_000_000
"""Bytes of text previews a scatter carries at most (see the module docstring)."""
SEGMENTS_DEFAULT_MAX = 20_000
"""More common chunks than this: per-chunk segments start hidden (a checkbox shows them)."""


class DriftScatter(anywidget.AnyWidget):
    """Two index versions in one 2D projection, with lasso and box selection.

    >>> ds = DriftScatter(proj, "release-1", "release-3", query="refund window")  # doctest: +SKIP
    >>> ds = DriftScatter(proj.drift(1, 5), proj=proj)                            # doctest: +SKIP
    >>> ds.selected            # chunk ids lassoed in the view (observe it with ds.observe)
    >>> ds.points()            # chunk_id, source, version, x, y as drawn
    """

    _esm = static_file("drift_scatter.js")
    _css = static_file("drift_scatter.css")

    selected = t.List(t.Unicode()).tag(sync=True)
    """Chunk ids selected in the view (lasso or box; shown there as "N selected")."""
    color_by = t.Enum(["version", "source"], "version").tag(sync=True)
    """What colours the points: ``"version"`` or ``"source"``."""
    _data = t.Dict().tag(sync=True)
    """The private wire format described in the module docstring."""

    def __init__(
        self,
        source: ragtt.Project | ragtt.DriftReport,
        a: Any = None,
        b: Any = None,
        *,
        proj: ragtt.Project | None = None,
        query: str | None = None,
        method: str = "pca",
        color_by: str = "version",
        text_chars: int = 240,
    ) -> None:
        import ragtt

        if isinstance(source, ragtt.DriftReport):
            if a is not None or b is not None:
                raise TypeError(
                    "DriftScatter(drift_report, proj=proj) takes no versions (they are in the report); "
                    "did you mean DriftScatter(proj, a, b)?"
                )
            proj = proj if proj is not None else source.project
            if not isinstance(proj, ragtt.Project):
                raise TypeError(
                    "this DriftReport does not know its project: pass the project it came from, "
                    "DriftScatter(report, proj=proj)"
                )
            left_v, right_v = source.left_version, source.right_version
        elif isinstance(source, ragtt.Project):
            if a is None or b is None:
                raise TypeError("DriftScatter(proj, a, b) needs two versions (numbers, snapshot labels or datetimes)")
            if proj is not None and proj is not source:
                raise TypeError("DriftScatter(proj, a, b) takes the project once; drop proj=")
            proj = source
            left_v, right_v = proj.resolve_version(a), proj.resolve_version(b)
        else:
            raise TypeError(
                "DriftScatter accepts a ragtt.DriftReport (with proj=) or a ragtt.Project with two "
                f"versions; got {type(source).__name__}"
            )
        sides = []
        for version in (left_v, right_v):
            side = _load(proj, version, text_chars)
            side.embedder = proj.embedder_at(version)
            sides.append(side)
        query_text: str | None = None
        query_vectors: list[NDArray[np.float32] | None] = [None, None]
        if query is not None:
            query_text, query_vectors = _query(proj, query, sides)
        data = _build(sides[0], sides[1], method, query_text, query_vectors)
        data["labels"] = {str(v): name for v, name in proj.version_labels().items() if v in (left_v, right_v)}
        super().__init__(_data=data, color_by=color_by)

    @classmethod
    def from_vectors(
        cls,
        left: dict[str, Any],
        right: dict[str, Any],
        *,
        method: str = "pca",
        color_by: str = "version",
        text_chars: int = 240,
    ) -> DriftScatter:
        """A scatter of your own arrays: each side a dict with ``ids``, ``vectors`` (n x d) and
        optionally ``sources``, ``texts``, ``version`` (int) and ``embedder`` (str)."""
        sides = []
        for n, spec in enumerate((left, right)):
            unknown = set(spec) - {"ids", "vectors", "sources", "texts", "version", "embedder"}
            if unknown:
                raise TypeError(
                    f"unknown keys {sorted(unknown)}; a side takes ids, vectors, sources, texts, version, embedder"
                )
            ids = [str(i) for i in spec["ids"]]
            vectors = _normalized(np.asarray(spec["vectors"], dtype=np.float32))
            if vectors.ndim != 2 or vectors.shape[0] != len(ids):
                raise ValueError(f"vectors must be {len(ids)} x d (one row per id); got shape {vectors.shape}")
            count = len(ids)
            sides.append(
                _Side(
                    int(spec.get("version", n)),
                    str(spec.get("embedder", "")),
                    ids,
                    list(spec.get("sources") or [""] * count),
                    [s[:text_chars] for s in (spec.get("texts") or [""] * count)],
                    vectors,
                )
            )
        widget = cls.__new__(cls)
        anywidget.AnyWidget.__init__(
            widget, _data=_build(sides[0], sides[1], method, None, [None, None]), color_by=color_by
        )
        return widget

    @property
    def versions(self) -> tuple[int, int]:
        return self._data["left"]["version"], self._data["right"]["version"]

    def points(self) -> pl.DataFrame:
        """Every point as drawn: chunk_id, source, version, x, y (dequantized)."""
        import polars as pl

        d = self._data
        pts = d["points"]
        x, y = _dequantize(d)
        side = np.frombuffer(pts["version"]["view"], dtype="u1")
        src = np.frombuffer(pts["source"]["view"], dtype="<u2")
        names = [*d["sources"], "(other)"]
        ids = _strings(d["chunks"]["ids"])
        chunk = _point_chunks(d)
        versions = np.where(side == 0, d["left"]["version"], d["right"]["version"])
        return pl.DataFrame(
            {
                "chunk_id": [ids[c] for c in chunk],
                "source": [names[min(int(s), len(names) - 1)] for s in src],
                "version": versions.astype(np.int64),
                "x": x,
                "y": y,
            }
        )

    def centroids(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """The left and the right version's mean projected position, as drawn."""
        x, y = _dequantize(self._data)
        n = self._data["n_left"]
        return (float(x[:n].mean()), float(y[:n].mean())), (float(x[n:].mean()), float(y[n:].mean()))

    def selected_chunks(self) -> pl.DataFrame:
        """The selected chunks with their source and text preview."""
        import polars as pl

        d = self._data
        ids = _strings(d["chunks"]["ids"])
        texts = _strings(d["chunks"]["text"])
        index = {c: i for i, c in enumerate(ids)}
        chunk_source = dict(
            zip(
                _point_chunks(d).tolist(),
                np.frombuffer(d["points"]["source"]["view"], dtype="<u2").tolist(),
                strict=True,
            )
        )
        names = [*d["sources"], "(other)"]
        rows = [
            (c, names[min(chunk_source[index[c]], len(names) - 1)], texts[index[c]])
            for c in self.selected
            if c in index
        ]
        return pl.DataFrame(rows, schema={"chunk_id": pl.String, "source": pl.String, "text": pl.String}, orient="row")

    def __repr__(self) -> str:
        d = self._data
        return (
            f"DriftScatter(v{d['left']['version']} ({d['n_left']} chunks) -> v{d['right']['version']} "
            f"({d['n_right']} chunks), {d['n_common']} common, {d['method']}, {len(self.selected)} selected)"
        )


@dataclass
class _Side:
    version: int
    embedder: str
    ids: list[str]
    sources: list[str]
    texts: list[str]
    vectors: NDArray[np.float32]


def _normalized(vectors: NDArray[np.float32]) -> NDArray[np.float32]:
    if vectors.ndim != 2:
        return vectors
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms == 0, 1, norms)).astype(np.float32)


def _load(proj: Any, version: int, text_chars: int) -> _Side:
    frame, vectors = proj.vectors(version)
    texts = [s[:text_chars] for s in frame["text"].to_list()]
    return _Side(version, "", frame["chunk_id"].to_list(), frame["source"].to_list(), texts, _normalized(vectors))


def _query(proj: Any, query: str, sides: list[_Side]) -> tuple[str, list[NDArray[np.float32] | None]]:
    """The query's vector in each version's embedder (a logged query id, or text)."""
    from ragtt import NotFoundError

    text = query
    with contextlib.suppress(NotFoundError):  # not a logged id: the query is its own text
        text = proj.run(query).query
    vectors: list[NDArray[np.float32] | None] = []
    for side in sides:
        vec = proj.query_vector(text, side.embedder)
        ok = vec is not None and vec.shape[0] == side.vectors.shape[1]
        vectors.append(_normalized(np.asarray(vec, dtype=np.float32)[None, :])[0] if ok else None)
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


def _build(
    left: _Side, right: _Side, method: str, query_text: str | None, query_vectors: list[NDArray[np.float32] | None]
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
        "chunks": {"ids": _ids(chunk_ids), "text": _utf8(_budget(chunk_texts))},
        "sources": sources,
        "source_centroids": array(centroids.ravel(), "float32"),
        "query": query,
    }


def _utf8(strings: list[str]) -> dict[str, Any]:
    """Strings as one UTF-8 byte buffer and int32 offsets (``n + 1``), decoded on demand in JS."""
    encoded = [s.encode("utf-8") for s in strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return {"bytes": array(np.frombuffer(b"".join(encoded), dtype="u1"), "uint8"), "offsets": array(offsets, "int32")}


def _ids(ids: list[str]) -> dict[str, Any]:
    """Hex ids of one length as raw bytes (half the size, no offsets); anything else as UTF-8."""
    width = len(ids[0]) if ids else 0
    if width and width % 2 == 0 and all(len(i) == width for i in ids):
        try:
            raw = bytes.fromhex("".join(ids))
        except ValueError:
            raw = b""
        if raw and raw.hex() == "".join(ids):  # lowercase only, so the round trip is exact
            return {"hex": array(np.frombuffer(raw, dtype="u1"), "uint8"), "width": width // 2}
    return _utf8(ids)


def _budget(texts: list[str]) -> list[str]:
    total = sum(len(t) for t in texts)
    if total <= TEXT_BUDGET:
        return texts
    cut = max(40, TEXT_BUDGET // max(1, len(texts)))
    return [t if len(t) <= cut else t[: cut - 1] + "…" for t in texts]


def _strings(packed: dict[str, Any]) -> list[str]:
    if "hex" in packed:
        raw, width = bytes(packed["hex"]["view"]), packed["width"]
        return [raw[i : i + width].hex() for i in range(0, len(raw), width)]
    raw = bytes(packed["bytes"]["view"])
    off = np.frombuffer(packed["offsets"]["view"], dtype="<i4")
    return [raw[off[i] : off[i + 1]].decode("utf-8") for i in range(len(off) - 1)]


def _dequantize(d: dict[str, Any]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    xmin, xmax, ymin, ymax = np.frombuffer(d["bounds"]["view"], dtype="<f4").astype(np.float64)
    qx = np.frombuffer(d["points"]["x"]["view"], dtype="<i2").astype(np.float64)
    qy = np.frombuffer(d["points"]["y"]["view"], dtype="<i2").astype(np.float64)
    return xmin + (qx + _Q) / (2 * _Q) * (xmax - xmin), ymin + (qy + _Q) / (2 * _Q) * (ymax - ymin)


def _point_chunks(d: dict[str, Any]) -> NDArray[np.int64]:
    """The chunk index of every point (see the module docstring for the order)."""
    n_left, n_right, n_common = d["n_left"], d["n_right"], d["n_common"]
    j = np.arange(n_right)
    return np.concatenate([np.arange(n_left), np.where(j < n_common, j, n_left + j - n_common)])
