"""DriftScatter without a browser: the projection, the wire format, selection, and that an
embedder swap visibly separates the versions."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np
import pytest

import ragtt
from ragtt.views import static_file
from ragtt_nb.drift_scatter import DriftScatter
from tests.conftest import flask_releases

from .conftest import QUESTION, Salted

POINT_BUFFERS = ("x", "y", "version", "source")


def _gap(ds: DriftScatter) -> tuple[float, float]:
    """(distance between the versions' projected centroids, the cloud's overall spread)."""
    (lx, ly), (rx, ry) = ds.centroids()
    pts = ds.points()
    return float(np.hypot(lx - rx, ly - ry)), float(np.sqrt(pts["x"].var() + pts["y"].var()))


@pytest.fixture(scope="module")
def flask(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Flask's docs: a release, an unchanged re-ingest, the next release, then two embedder swaps
    (same size, then a different size)."""
    path = tmp_path_factory.mktemp("flask") / "proj"
    releases = flask_releases()
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest(releases[0])
        first = proj.version
        proj.ingest(releases[0])
        unchanged = proj.version
        proj.ingest(releases[1])
        second = proj.version
        query = proj.query(QUESTION, generate=False)
        proj.reembed(Salted())
        salted = proj.version
        proj.reembed(ragtt.HashEmbedder(128))
        return {
            "path": path,
            "first": first,
            "unchanged": unchanged,
            "second": second,
            "salted": salted,
            "resized": proj.version,
            "query_id": query.query_id,
        }


@pytest.fixture
def fproj(flask: dict[str, Any]) -> Any:
    with ragtt.Project.open(flask["path"], embedder=ragtt.HashEmbedder(128), progress=False) as p:
        yield p


def test_an_embedder_swap_separates_the_versions(fproj: ragtt.Project, flask: dict[str, Any]) -> None:
    assert flask["unchanged"] == flask["first"]  # an unchanged re-ingest writes no version
    same, _ = _gap(DriftScatter(fproj, flask["first"], flask["unchanged"]))
    release, release_spread = _gap(DriftScatter(fproj, flask["first"], flask["second"]))
    swap_report = fproj.drift(flask["second"], flask["salted"])
    assert swap_report.embedder_changed and swap_report.comparable
    swap, swap_spread = _gap(DriftScatter(swap_report, proj=fproj))
    resized, resized_spread = _gap(DriftScatter(fproj, flask["salted"], flask["resized"]))
    assert same < 1e-3
    assert swap > 20 * max(release, same) and swap > 1.0 * swap_spread
    assert resized > 1.0 * resized_spread
    assert release < 0.2 * release_spread


def test_projection_is_deterministic_and_shares_axes(fproj: ragtt.Project, flask: dict[str, Any]) -> None:
    a = DriftScatter(fproj, flask["first"], flask["second"])
    b = DriftScatter(fproj, flask["first"], flask["second"])
    for name in POINT_BUFFERS:
        assert bytes(a._data["points"][name]["view"]) == bytes(b._data["points"][name]["view"])
    pts = a.points()
    left = pts.filter(pts["version"] == flask["first"])
    right = pts.filter(pts["version"] == flask["second"])
    assert sorted(left["chunk_id"]) == sorted(fproj.chunks(at=flask["first"])["chunk_id"])
    assert sorted(right["chunk_id"]) == sorted(fproj.chunks(at=flask["second"])["chunk_id"])
    # common chunks come first on both sides and are the segments' ends; unchanged vectors sit still
    n = a._data["n_common"]
    assert n > 0 and left["chunk_id"][:n].to_list() == right["chunk_id"][:n].to_list()
    assert np.allclose(left["x"][:n].to_numpy(), right["x"][:n].to_numpy(), atol=1e-4)
    assert a._data["comparable"] is True


def test_wire_format_is_compact_binary(fproj: ragtt.Project, flask: dict[str, Any]) -> None:
    ds = DriftScatter(fproj, flask["first"], flask["resized"])
    d = ds._data
    points = d["n_left"] + d["n_right"]
    per_point = sum(len(bytes(d["points"][k]["view"])) for k in POINT_BUFFERS)
    assert per_point / points <= 10
    assert {d["points"][k]["dtype"] for k in POINT_BUFFERS} == {"int16", "uint8", "uint16"}
    assert d["comparable"] is False and d["left"]["dim"] == 256 and d["right"]["dim"] == 128
    ids = ds.points()["chunk_id"].to_list()
    assert set(ids) == set(fproj.chunks(at=flask["first"])["chunk_id"]) | set(fproj.chunks()["chunk_id"])


def test_query_point_in_each_version(fproj: ragtt.Project, flask: dict[str, Any]) -> None:
    ds = DriftScatter(fproj, flask["second"], flask["resized"], query=flask["query_id"])
    q = ds._data["query"]
    assert q["text"] == QUESTION
    xy = np.frombuffer(q["xy"]["view"], dtype="<f4")
    assert np.isfinite(xy).all()  # the old embedder's vector from the cache, the current one computed
    text_only = DriftScatter(fproj, flask["salted"], flask["resized"], query="an uncached question")
    xy = np.frombuffer(text_only._data["query"]["xy"]["view"], dtype="<f4")
    assert np.isnan(xy[:2]).all() and np.isfinite(xy[2:]).all()


def test_selection_is_observable(fproj: ragtt.Project, flask: dict[str, Any]) -> None:
    ds = DriftScatter(fproj, flask["first"], flask["second"])
    seen: list[list[str]] = []
    ds.observe(lambda change: seen.append(change["new"]), names="selected")
    chosen = ds.points()["chunk_id"][:3].to_list()
    ds.selected = chosen  # what the front end does after a lasso
    assert seen == [chosen]
    frame = ds.selected_chunks()
    assert frame["chunk_id"].to_list() == chosen and frame["text"].str.len_chars().min() > 0
    assert "3 selected" in repr(ds)


def test_bad_input_says_what_is_accepted(fproj: ragtt.Project, flask: dict[str, Any]) -> None:
    report = fproj.drift(flask["first"], flask["second"])
    from_report = DriftScatter(report)  # the report knows the project it was computed on
    assert from_report.points().height == DriftScatter(fproj, flask["first"], flask["second"]).points().height
    assert "project" not in report.to_dict()
    detached = dataclasses.replace(report, project=None)
    with pytest.raises(TypeError, match="proj=proj"):
        DriftScatter(detached)
    with pytest.raises(TypeError, match="needs two versions"):
        DriftScatter(fproj, flask["first"])
    with pytest.raises(TypeError, match="DriftReport"):
        DriftScatter("v1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'pca' or 'umap'"):
        DriftScatter(fproj, flask["first"], flask["second"], method="tsne")
    with pytest.raises(ImportError, match="umap-learn"):
        DriftScatter(fproj, flask["first"], flask["second"], method="umap")


def test_200k_points_build_fast_and_small() -> None:
    rng = np.random.default_rng(0)
    n = 100_000
    base = rng.normal(size=(n, 64)).astype(np.float32)
    ids = [f"c{i}" for i in range(n)]
    started = time.process_time()  # CPU time: the parallel suite shares the cores with other workers
    ds = DriftScatter.from_vectors(
        {"ids": ids, "vectors": base, "sources": [f"s{i % 50}" for i in range(n)]},
        {"ids": ids, "vectors": base + 0.3, "sources": [f"s{i % 50}" for i in range(n)]},
    )
    elapsed = time.process_time() - started
    d = ds._data
    assert d["n_left"] + d["n_right"] == 200_000 and d["n_common"] == n
    assert sum(len(bytes(d["points"][k]["view"])) for k in POINT_BUFFERS) == 7 * 200_000
    assert not d["segments_default"]  # 100k segments start hidden
    assert elapsed < 10, f"building 200k points took {elapsed:.1f} s"


def test_js_refuses_unknown_dtypes() -> None:
    js = static_file("drift_scatter.js").read_text()  # the bundle the widget loads
    assert "unsupported buffer dtype" in js and "innerHTML" not in js
