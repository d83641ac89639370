"""``Timeline``: scrub through a project's index history and watch a query's chunks change.

Everything the view needs to scrub without a kernel is computed here, once: the time axis
(versions, ingests per document, snapshots, queries), which documents are present over
which version ranges, and, for a focal query, what it retrieves at every index version.
That last part runs the query's recorded plan at each version through
``proj.retrieve_at`` (the one retrieval path, without logging: scrubbing must not write
query events).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anywidget
import numpy as np
import traitlets as t

from ragtt_nb._wire import array, static_file

if TYPE_CHECKING:
    import polars as pl

    import ragtt

__all__ = ["Timeline"]

# Event kinds on the wire (the JS draws each kind in its own lane or colour).
KIND_INGEST, KIND_REMOVE, KIND_SNAPSHOT, KIND_QUERY, KIND_REPLAY = range(5)
_KINDS = {"document.ingested": KIND_INGEST, "document.removed": KIND_REMOVE,
          "index.snapshot_taken": KIND_SNAPSHOT, "query.received": KIND_QUERY,
          "replay.query.received": KIND_REPLAY}
_INT32_MAX = 2**31 - 1


class Timeline(anywidget.AnyWidget):
    """The index's history on a time axis with a draggable cursor.

    >>> tl = Timeline(proj, query_id=res.query_id)  # doctest: +SKIP
    >>> tl.version = 2          # moves the cursor; dragging it in the page sets it back
    >>> tl.chunks_at(2)         # the focal query's chunk ids at version 2
    """

    _esm = static_file("timeline.js")
    _css = static_file("timeline.css")

    version = t.Int(0).tag(sync=True)
    """The index version under the cursor. Set it to move the cursor; the view sets it when dragged."""
    selected = t.List(t.Unicode()).tag(sync=True)
    """Chunk ids the user clicked in the view (shown there as "N selected")."""
    _data = t.Dict().tag(sync=True)
    """The private wire format: axis, lanes, presence intervals and precomputed results (buffers)."""

    def __init__(self, proj: ragtt.Project, query_id: str | None = None, *, version: int | None = None) -> None:
        import ragtt

        if not isinstance(proj, ragtt.Project):
            raise TypeError(f"Timeline takes a ragtt.Project (and optionally a query id); got {type(proj).__name__}")
        data, versions, results = _build(proj, query_id)
        self._versions = versions
        self._results = results
        start = versions[-1] if version is None else version
        super().__init__(_data=data, version=start)

    @t.validate("version")
    def _check_version(self, proposal: dict[str, Any]) -> int:
        value = int(proposal["value"])
        if value not in self._versions:
            raise t.TraitError(f"version {value} is not in this timeline (versions {self._versions[0]}.."
                               f"{self._versions[-1]})")
        return value

    @property
    def versions(self) -> list[int]:
        """Every index version on the axis, oldest first."""
        return list(self._versions)

    @property
    def query_id(self) -> str | None:
        focal = self._data.get("focal")
        return focal["query_id"] if focal else None

    def chunks_at(self, version: int | None = None) -> list[str]:
        """The focal query's retrieved chunk ids at ``version`` (default: the cursor's)."""
        if not self._results:
            raise ValueError("this timeline has no focal query: Timeline(proj, query_id=...)")
        return list(self._results[self._versions.index(self.version if version is None else version)])

    def documents_at(self, version: int | None = None) -> list[str]:
        """Sources present in the index at ``version`` (default: the cursor's)."""
        v = self.version if version is None else version
        pres = np.frombuffer(self._data["presence"]["view"], dtype="<i4").reshape(-1, 3)
        docs = self._data["docs"]
        return sorted({docs[d] for d, lo, hi in pres if lo <= v < hi})

    def __repr__(self) -> str:
        focal = self._data.get("focal")
        about = f" for {focal['text']!r}" if focal else ""
        return (f"Timeline({len(self._versions)} versions, {self._data['events']['kind']['shape'][0]} events"
                f"{about}, cursor at v{self.version})")


@dataclass
class _Focal:
    query_id: str
    text: str
    version: int
    plan: Any  # ragtt.index.retrieve.RetrievalPlan


def _build(proj: Any, query_id: str | None) -> tuple[dict[str, Any], list[int], list[list[str]]]:
    import polars as pl

    versions_frame = proj.versions()
    if versions_frame.is_empty():
        raise ValueError("this project has no index versions yet: ingest something first")
    versions = [int(v) for v in versions_frame["version"]]
    events = proj.events.frame(types=list(_KINDS)).with_columns(
        pl.col("payload").str.json_path_match("$.label").alias("label"),
    )
    version_ms = _epoch_ms(versions_frame["committed_at"])
    event_ms = _epoch_ms(events["ts"])
    t0 = float(min(version_ms.min(), event_ms.min() if len(event_ms) else version_ms.min()))
    span = float(max(version_ms.max(), event_ms.max() if len(event_ms) else 0.0) - t0)
    unit = max(1, int(np.ceil(span / _INT32_MAX)))  # int32 ticks of `unit` ms cover any span

    docs: list[str] = []
    doc_index: dict[str, int] = {}
    lanes: list[int] = []
    for source in events["source"].to_list():
        if source is None:
            lanes.append(-1)
            continue
        if source not in doc_index:
            doc_index[source] = len(docs)
            docs.append(source)
        lanes.append(doc_index[source])
    kinds = [_KINDS[k] for k in events["type"].to_list()]
    event_versions = events["index_version"].fill_null(0).to_list()

    data: dict[str, Any] = {
        "t0_ms": t0, "t_unit_ms": unit,
        "versions": {"version": array(versions, "int32"),
                     "t": array(np.round((version_ms - t0) / unit), "int32"),
                     "operation": [str(o) for o in versions_frame["operation"].to_list()]},
        "events": {"t": array(np.round((event_ms - t0) / unit), "int32"), "kind": array(kinds, "int32"),
                   "lane": array(lanes, "int32"), "version": array(event_versions, "int32")},
        "docs": docs,
        "presence": array(_presence(kinds, lanes, event_versions, versions[-1] + 1), "int32"),
        "snapshots": [{"label": lbl, "version": int(v)} for lbl, v, k in
                      zip(events["label"].to_list(), event_versions, kinds, strict=True)
                      if k == KIND_SNAPSHOT and lbl is not None],
        "focal": None,
    }
    results: list[list[str]] = []
    if query_id is not None:
        focal = _focal(proj, query_id)
        data["focal"], results = _precompute(proj, focal, versions)
    return data, versions, results


def _epoch_ms(column: pl.Series) -> np.ndarray:
    return column.dt.epoch("us").to_numpy().astype(np.float64) / 1000.0


def _presence(kinds: list[int], lanes: list[int], versions: list[int], end: int) -> list[int]:
    """Flat (doc, from_version, to_version) triples: when each document was in the index."""
    since: dict[int, int] = {}
    out: list[int] = []
    for kind, doc, v in zip(kinds, lanes, versions, strict=True):
        if kind == KIND_INGEST and doc not in since:
            since[doc] = v
        elif kind == KIND_REMOVE and doc in since:
            out += [doc, since.pop(doc), v]
    for doc, v in since.items():
        out += [doc, v, end]
    return out


def _focal(proj: Any, query_id: str) -> _Focal:
    plan = proj.plan_of(query_id)  # raises NotFoundError for an unknown id
    trace = proj.trace(query_id)
    received = trace.filter(trace["type"].str.ends_with("query.received"))
    text = json.loads(received["payload"][0])["text"]
    return _Focal(query_id, text, int(received["index_version"][0]), plan)


def _precompute(proj: Any, focal: _Focal, versions: list[int]) -> tuple[dict[str, Any], list[list[str]]]:
    """Run the focal query at every version; identical consecutive results are stored once."""
    chunk_index: dict[str, int] = {}
    chunk_rows: list[dict[str, str]] = []
    unique: list[tuple[tuple[int, ...], tuple[float, ...]]] = []
    per_version: list[int] = []
    ids_per_version: list[list[str]] = []
    for v in versions:
        chunks = proj.retrieve_at(focal.text, v, focal.plan)  # the recorded plan, exactly
        ids = []
        for c in chunks:
            if c.chunk_id not in chunk_index:
                chunk_index[c.chunk_id] = len(chunk_rows)
                chunk_rows.append({"chunk_id": c.chunk_id, "source": c.source, "text": c.text})
            ids.append(chunk_index[c.chunk_id])
        result = (tuple(ids), tuple(round(c.score, 6) for c in chunks))
        if not unique or unique[-1] != result:
            unique.append(result)
        per_version.append(len(unique) - 1)
        ids_per_version.append([c.chunk_id for c in chunks])
    offsets = np.cumsum([0] + [len(r[0]) for r in unique])
    focal_data = {
        "query_id": focal.query_id, "text": focal.text, "version": focal.version,
        "chunks": chunk_rows,
        "result_offsets": array(offsets, "int32"),
        "result_chunks": array([i for r in unique for i in r[0]], "int32"),
        "result_scores": array([s for r in unique for s in r[1]], "float32"),
        "version_result": array(per_version, "int32"),
    }
    return focal_data, ids_per_version
