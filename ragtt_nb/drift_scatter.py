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

The wire format (``_data``) is built and described in ``ragtt.views.drift_scatter``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anywidget
import numpy as np
import traitlets as t

from ragtt.views.drift_scatter import (
    SEGMENTS_DEFAULT_MAX,
    TEXT_BUDGET,
    Side,
    build,
    dequantize,
    normalized,
    point_chunks,
    strings,
    wire,
)
from ragtt.views.wire import static_file

if TYPE_CHECKING:
    import polars as pl

    import ragtt

__all__ = ["SEGMENTS_DEFAULT_MAX", "TEXT_BUDGET", "DriftScatter"]


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
        report = source if isinstance(source, ragtt.DriftReport) else None
        data = wire(proj, left_v, right_v, query=query, method=method, text_chars=text_chars, report=report)
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
        given: list[Side] = []
        for n, spec in enumerate((left, right)):
            unknown = set(spec) - {"ids", "vectors", "sources", "texts", "version", "embedder"}
            if unknown:
                raise TypeError(
                    f"unknown keys {sorted(unknown)}; a side takes ids, vectors, sources, texts, version, embedder"
                )
            ids = [str(i) for i in spec["ids"]]
            vectors = normalized(np.asarray(spec["vectors"], dtype=np.float32))
            if vectors.ndim != 2 or vectors.shape[0] != len(ids):
                raise ValueError(f"vectors must be {len(ids)} x d (one row per id); got shape {vectors.shape}")
            count = len(ids)
            given.append(
                Side(
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
            widget, _data=build(given[0], given[1], method, None, [None, None]), color_by=color_by
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
        x, y = dequantize(d)
        side = np.frombuffer(pts["version"]["view"], dtype="u1")
        src = np.frombuffer(pts["source"]["view"], dtype="<u2")
        names = [*d["sources"], "(other)"]
        ids = strings(d["chunks"]["ids"])
        chunk = point_chunks(d)
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
        x, y = dequantize(self._data)
        n = self._data["n_left"]
        return (float(x[:n].mean()), float(y[:n].mean())), (float(x[n:].mean()), float(y[n:].mean()))

    def selected_chunks(self) -> pl.DataFrame:
        """The selected chunks with their source and text preview."""
        import polars as pl

        d = self._data
        ids = strings(d["chunks"]["ids"])
        texts = strings(d["chunks"]["text"])
        index = {c: i for i, c in enumerate(ids)}
        chunk_source = dict(
            zip(
                point_chunks(d).tolist(),
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
