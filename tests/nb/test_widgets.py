"""Widget state without a browser: set traits the way the front end does, read the public
properties; the wire format carries bulk numbers as int32/float32 buffers."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import traitlets

import ragtt
from ragtt.views.wire import array, static_file
from ragtt_nb import ChunkDiff, Timeline

from .conftest import QUESTION


def _buffers(obj: Any) -> list[dict[str, Any]]:
    """Every {dtype, shape, view} buffer nested in a wire-format value."""
    if isinstance(obj, dict):
        if "view" in obj and "dtype" in obj:
            return [obj]
        return [b for v in obj.values() for b in _buffers(v)]
    if isinstance(obj, list):
        return [b for v in obj for b in _buffers(v)]
    return []


def _no_number_lists(obj: Any, path: str = "") -> None:
    """Bulk numbers never travel as JSON lists."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k not in ("view", "shape"):  # a buffer's shape is metadata
                _no_number_lists(v, f"{path}.{k}")
    elif isinstance(obj, list):
        assert not any(isinstance(v, int | float) for v in obj), f"number list in the wire format at {path}"
        for i, v in enumerate(obj):
            _no_number_lists(v, f"{path}[{i}]")


def test_esm_and_css_are_paths_to_the_built_bundles() -> None:
    # built from js/src into the package (git-ignored), where an editable install and the wheel
    # both find them
    js = Path(__file__).resolve().parents[2] / "ragtt" / "views" / "static"
    assert static_file("timeline.js") == js / "timeline.js"
    for cls, name in ((Timeline, "timeline"), (ChunkDiff, "chunk_diff")):
        # anywidget wraps a Path in FileContents (which hot-reloads with ANYWIDGET_HMR=1)
        assert Path(cls._esm._path) == js / f"{name}.js" and Path(cls._css._path) == js / f"{name}.css"
        assert str(cls._esm) == (js / f"{name}.js").read_text()
    with pytest.raises(FileNotFoundError, match=r"nope\.js"):
        static_file("nope.js")


def test_array_buffers_are_little_endian_typed() -> None:
    buf = array([1, 2, 3], "int32")
    assert buf["shape"] == [3] and np.frombuffer(buf["view"], "<i4").tolist() == [1, 2, 3]
    assert np.frombuffer(array([0.5], "float32")["view"], "<f4")[0] == 0.5
    with pytest.raises(ValueError, match="dtype must be one of"):
        array([1], "float64")


def test_timeline_precomputes_every_version(proj: ragtt.Project, sample: dict[str, Any]) -> None:
    tl = Timeline(proj, sample["then"])
    then = proj.replay(sample["then"])
    # it opens where the focal query ran, not at the latest version
    assert tl.versions == list(proj.versions()["version"]) and tl.version == then.index_version < sample["latest"]
    assert Timeline(proj).version == sample["latest"]
    for v in tl.versions:
        expected = sorted(set(proj.chunks(at=v)["source"])) if v > 2 else []
        assert tl.documents_at(v) == expected
        replay = proj.replay_text(QUESTION, at=v) if v > 2 else None
        assert tl.chunks_at(v) == ([c.chunk_id for c in replay.chunks] if replay else [])
    # the focal query at its own version retrieves what it retrieved then
    assert tl.chunks_at(then.index_version) == [c.chunk_id for c in then.chunks]
    data = tl._data
    assert {b["dtype"] for b in _buffers(data)} <= {"int32", "float32"}
    _no_number_lists(data)
    assert {s["label"] for s in data["snapshots"]} == {"release-1", "release-2", "release-3"}
    assert set(data["docs"]) >= {"refund-policy.md", "pricing.md", "plans.md"}


def test_timeline_version_is_observable_and_validated(proj: ragtt.Project, sample: dict[str, Any]) -> None:
    tl = Timeline(proj, sample["then"], version=3)
    seen: list[int] = []
    tl.observe(lambda change: seen.append(change["new"]), "version")
    tl.set_state({"version": 4})  # what the front end sends when the cursor is dragged
    assert tl.version == 4 and seen == [4] and tl.chunks_at() == tl.chunks_at(4)
    tl.set_state({"selected": [tl.chunks_at()[0]]})
    assert tl.selected == [tl.chunks_at(4)[0]]
    with pytest.raises(traitlets.TraitError, match="not in this timeline"):
        tl.version = 99
    assert "cursor at v4" in repr(tl) and QUESTION in repr(tl)


def test_timeline_without_focal_query(proj: ragtt.Project) -> None:
    tl = Timeline(proj)
    assert tl.query_id is None and tl._data["focal"] is None
    with pytest.raises(ValueError, match="no focal query"):
        tl.chunks_at()
    with pytest.raises(TypeError, match=r"Timeline takes a ragtt.Project"):
        Timeline("./proj")  # type: ignore[arg-type]


def test_timeline_shows_removed_documents(tmp_path: Path) -> None:
    with ragtt.Project.open(tmp_path / "p", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest_texts({"a.md": "alpha text", "b.md": "beta text"})
        proj.remove("a.md")
        tl = Timeline(proj)
        assert tl.documents_at(tl.versions[-2]) == ["a.md", "b.md"]
        assert tl.documents_at(tl.versions[-1]) == ["b.md"]


def test_chunk_diff_state(proj: ragtt.Project, sample: dict[str, Any]) -> None:
    report = proj.diff(sample["then"], sample["now"])
    widget = ChunkDiff(report, proj=proj)
    same = ChunkDiff(proj, sample["then"], sample["now"])
    assert widget.chunk_ids == same.chunk_ids
    assert set(widget.chunk_ids) == {c.chunk_id for c in [*report.added, *report.removed, *report.kept]}
    _no_number_lists(widget._data)
    chunks = widget._data["chunks"]
    rank_left = np.frombuffer(chunks["rank_left"]["view"], "<i4")
    rank_right = np.frombuffer(chunks["rank_right"]["view"], "<i4")
    removed = {c.chunk_id for c in report.removed}
    kept = {c.chunk_id for c in report.kept}
    for i, cid in enumerate(chunks["ids"]):
        assert (rank_left[i] > 0) == (cid in removed | kept) and (rank_right[i] > 0) == (cid not in removed)
    # the refund policy changed from 30 to 14 days: one changed passage, its runs grouped
    added = next(c for c in report.added if c.source == "refund-policy.md")
    pair = next(p for p in report.changed if p.right.chunk_id == added.chunk_id)
    runs = widget.word_diff(added.chunk_id)
    assert runs == widget.word_diff(pair.left.chunk_id) == pair.runs
    assert any(op == "delete" and "30" in text for op, text in runs) and any(
        op == "insert" and "14" in text for op, text in runs
    )
    assert all(a[0] != b[0] for a, b in pairwise(runs))  # runs, not interleaved words
    wire = widget._data["pairs"]
    k = wire["runs"].index([text for _, text in pair.runs])
    assert [
        chunks["ids"][i]
        for i in (np.frombuffer(wire["left"]["view"], "<i4")[k], np.frombuffer(wire["right"]["view"], "<i4")[k])
    ] == [pair.left.chunk_id, added.chunk_id]
    assert widget._data["summary"]["changed"] == len(report.changed) >= 1
    assert widget._data["summary"]["added"] == len(report.added) - len(report.changed)
    # lineage explains each change in a sentence (the core has it)
    assert widget._data["reasons"][added.chunk_id].startswith(f"chunk {added.chunk_id[:10]}")
    assert widget.word_diff(next(iter(kept))) is None
    widget.set_state({"selected": [added.chunk_id]})
    assert widget.selected == [added.chunk_id] and "1 selected" in repr(widget)


def test_chunk_diff_rejects_what_it_cannot_show(proj: ragtt.Project, sample: dict[str, Any]) -> None:
    with pytest.raises(TypeError, match=r"accepts a ragtt\.DiffReport, or a ragtt\.Project"):
        ChunkDiff({"added": []})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="did you mean ChunkDiff"):
        ChunkDiff(proj.diff(sample["then"], sample["now"]), sample["then"])
    with pytest.raises(TypeError, match="needs both query ids"):
        ChunkDiff(proj, sample["then"])


def test_wire_state_survives_json_with_buffers(proj: ragtt.Project, sample: dict[str, Any]) -> None:
    """What ipywidgets sends: JSON with the buffers split out (as the notebook stores them)."""
    from ipywidgets.widgets.widget import _remove_buffers

    tl = Timeline(proj, sample["then"])
    state, paths, buffers = _remove_buffers(tl.get_state())
    json.dumps(state)
    assert len(buffers) >= 10 and all(isinstance(b, memoryview | bytes) for b in buffers)
    assert ["_data", "focal", "version_result", "view"] in paths
