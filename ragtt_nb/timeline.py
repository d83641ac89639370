"""``Timeline``: scrub through a project's index history and watch a query's chunks change.

Everything the view needs to scrub without a kernel is computed here, once: the time axis
(versions, ingests per document, snapshots, queries), which documents are present over
which version ranges, and, for a focal query, what it retrieves at every index version.
That last part runs the query's recorded plan at each version through
``proj.retrieve_at`` (the one retrieval path, without logging: scrubbing must not write
query events).

With ``assertions=NAMESPACE`` the temporal claims of that namespace of ``proj.assertions``
are drawn as lanes on the same axis (positions are UNIX seconds, as the store's default):
one lane per ``entity_id``, and one per assertion ``type`` for claims without an entity.
Every claim travels (ticks, lane, flags as int32 buffers; ids and text as string lists), so
the view lists the claims valid at the cursor's time (``valid_from <= t < valid_until``)
while scrubbing, in a live kernel or in an exported report.

The two axes (time, versions) and the auto rule are in ``ragtt_nb.timeline_axis``; the claim
lanes' data in ``ragtt_nb.timeline_claims``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import anywidget
import numpy as np
import traitlets as t

from ragtt.events import types as ev
from ragtt_nb._wire import array, static_file
from ragtt_nb.timeline_axis import AXES, auto_axis, version_layout
from ragtt_nb.timeline_claims import LANE_ENTITY, Claims, claims_wire, read_claims

if TYPE_CHECKING:
    import polars as pl

    import ragtt

__all__ = ["Timeline"]

# Event kinds on the wire (the JS draws each kind in its own lane or colour).
KIND_INGEST, KIND_REMOVE, KIND_SNAPSHOT, KIND_QUERY, KIND_REPLAY = range(5)
_KINDS = {
    ev.DOCUMENT_INGESTED: KIND_INGEST,
    ev.DOCUMENT_REMOVED: KIND_REMOVE,
    ev.SNAPSHOT_TAKEN: KIND_SNAPSHOT,
    ev.QUERY_RECEIVED: KIND_QUERY,
    ev.REPLAY_PREFIX + ev.QUERY_RECEIVED: KIND_REPLAY,
}
_INT32_MAX = 2**31 - 1


class Timeline(anywidget.AnyWidget):
    """The index's history on a time axis with a draggable cursor.

    >>> tl = Timeline(proj, query_id=res.query_id)  # doctest: +SKIP
    >>> tl.version = 2          # moves the cursor; dragging it in the page sets it back
    >>> tl.chunks_at(2)         # the focal query's chunk ids at version 2
    >>> tl = Timeline(proj, assertions="policy")  # doctest: +SKIP
    >>> tl.claims_at(datetime(2024, 7, 1, tzinfo=UTC))  # ids of the claims valid then
    >>> tl.axis = "versions"    # one equal slot per index version (the header's button toggles it)
    """

    _esm = static_file("timeline.js")
    _css = static_file("timeline.css")

    version = t.Int(0).tag(sync=True)
    """The index version under the cursor. Set it to move the cursor; the view sets it when dragged."""
    selected = t.List(t.Unicode()).tag(sync=True)
    """Chunk ids the user clicked in the view (shown there as "N selected")."""
    axis = t.Enum(AXES, "auto").tag(sync=True)
    """``"time"``, ``"versions"`` (one equal slot per index version) or ``"auto"`` (see ``axis_mode``).
    The view's toggle button sets it to the mode it switches to."""
    _data = t.Dict().tag(sync=True)
    """The private wire format: axis, lanes, presence intervals and precomputed results (buffers)."""

    def __init__(
        self,
        proj: ragtt.Project,
        query_id: str | None = None,
        *,
        version: int | None = None,
        assertions: str | None = None,
        axis: str = "auto",
    ) -> None:
        import ragtt

        if not isinstance(proj, ragtt.Project):
            raise TypeError(f"Timeline takes a ragtt.Project (and optionally a query id); got {type(proj).__name__}")
        claims = read_claims(proj, assertions) if assertions is not None else None
        data, versions, results = _build(proj, query_id, claims)
        self._versions = versions
        self._results = results
        self._claims = claims
        self._version_s = [float(x) for x in _epoch_ms(proj.versions()["committed_at"]) / 1000.0]
        start = _opening_version(data, versions) if version is None else version
        super().__init__(_data=data, version=start, axis=axis)

    @t.validate("version")
    def _check_version(self, proposal: dict[str, Any]) -> int:
        value = int(proposal["value"])
        if value not in self._versions:
            raise t.TraitError(
                f"version {value} is not in this timeline (versions {self._versions[0]}..{self._versions[-1]})"
            )
        return value

    @property
    def versions(self) -> list[int]:
        """Every index version on the axis, oldest first."""
        return list(self._versions)

    @property
    def axis_mode(self) -> str:
        """The axis drawn now: ``axis``, or for ``"auto"`` what ``auto_axis`` chose for this history."""
        return str(self._data["layout"]["auto"]) if self.axis == "auto" else self.axis

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

    @property
    def namespace(self) -> str | None:
        """The assertion namespace drawn as lanes, or None."""
        return self._claims.namespace if self._claims else None

    @property
    def claim_lanes(self) -> list[tuple[str, str]]:
        """The claim lanes in drawing order: ``("entity", entity_id)`` or ``("type", type)``."""
        if self._claims is None:
            return []
        return [
            ("entity" if k == LANE_ENTITY else "type", name)
            for k, name in zip(self._claims.lane_kinds, self._claims.lanes, strict=True)
        ]

    def claims_at(self, at: float | datetime | None = None) -> list[str]:
        """Ids of the claims valid at ``at`` (UNIX seconds or a datetime; default: the cursor's
        version's commit time), in the order the view lists them."""
        from ragtt.temporal import to_position

        if self._claims is None:
            raise ValueError("this timeline has no assertion lanes: Timeline(proj, assertions=NAMESPACE)")
        t = self._version_s[self._versions.index(self.version)] if at is None else to_position(at, "at")
        c = self._claims
        return [
            aid
            for aid, lo, hi in zip(c.ids, c.valid_from, c.valid_until, strict=True)
            if lo <= t and (hi is None or t < hi)
        ]

    def __repr__(self) -> str:
        focal = self._data.get("focal")
        about = f" for {focal['text']!r}" if focal else ""
        claims = f", {len(self._claims.ids)} claims in {self._claims.namespace!r}" if self._claims else ""
        return (
            f"Timeline({len(self._versions)} versions, {self._data['events']['kind']['shape'][0]} events"
            f"{about}{claims}, cursor at v{self.version})"
        )


@dataclass
class _Focal:
    query_id: str
    text: str
    version: int
    plan: Any  # ragtt.index.retrieve.RetrievalPlan


def _build(
    proj: Any, query_id: str | None, claims: Claims | None = None
) -> tuple[dict[str, Any], list[int], list[list[str]]]:
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
    times = [version_ms, event_ms]
    if claims is not None and claims.ids:  # the axis covers every claim's window too
        times.append(np.asarray(claims.valid_from, dtype=np.float64) * 1000.0)
        times.append(np.asarray([u for u in claims.valid_until if u is not None], dtype=np.float64) * 1000.0)
    t0 = float(min(x.min() for x in times if len(x)))
    span = float(max(x.max() for x in times if len(x)) - t0)
    # int32 ticks of `unit` ms cover any span, below _INT32_MAX (the tick of an open end)
    unit = max(1, int(np.ceil(span / (_INT32_MAX - 1))))

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
    version_t = np.round((version_ms - t0) / unit)
    event_t = np.round((event_ms - t0) / unit)
    claim_ticks: list[np.ndarray] = []
    if claims is not None:
        claim_ticks = [
            np.round((np.asarray(x, dtype=np.float64) * 1000.0 - t0) / unit)
            for x in (claims.valid_from, [u for u in claims.valid_until if u is not None])
        ]
    first, bounds, event_x = version_layout(version_t, event_t, event_versions, versions, claim_ticks)

    data: dict[str, Any] = {
        "t0_ms": t0,
        "t_unit_ms": unit,
        "versions": {
            "version": array(versions, "int32"),
            "t": array(version_t, "int32"),
            "operation": [str(o) for o in versions_frame["operation"].to_list()],
        },
        "events": {
            "t": array(event_t, "int32"),
            "kind": array(kinds, "int32"),
            "lane": array(lanes, "int32"),
            "version": array(event_versions, "int32"),
        },
        "docs": docs,
        "labels": {str(v): name for v, name in proj.version_labels().items()},
        "presence": array(_presence(kinds, lanes, event_versions, versions[-1] + 1), "int32"),
        "snapshots": [
            {"label": lbl, "version": int(v), "event": i}
            for i, (lbl, v, k) in enumerate(zip(events["label"].to_list(), event_versions, kinds, strict=True))
            if k == KIND_SNAPSHOT and lbl is not None
        ],
        "layout": {
            "auto": auto_axis(version_ms / 1000.0),
            "first": first,
            "slots": len(bounds) - 1,
            "bounds": array(bounds, "int32"),
            "event_x": array(event_x, "float32"),
        },
        "focal": None,
        "claims": None if claims is None else claims_wire(claims, t0, unit, bounds),
    }
    results: list[list[str]] = []
    if query_id is not None:
        focal = _focal(proj, query_id)
        data["focal"], results = _precompute(proj, focal, versions)
    return data, versions, results


def _opening_version(data: dict[str, Any], versions: list[int]) -> int:
    """Where the cursor opens: at the focal query's version; else, with claims, at the version
    in force when the newest claims became valid (``claims.open_at``); else the latest."""
    focal, claims = data["focal"], data["claims"]
    if focal is not None and focal["version"] in versions:
        return int(focal["version"])
    if claims is not None and claims["open_at"] is not None:
        ticks = np.frombuffer(data["versions"]["t"]["view"], dtype="<i4")
        at = int(np.searchsorted(ticks, claims["open_at"], side="right")) - 1
        return versions[max(0, at)]
    return versions[-1]


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
    run = proj.run(query_id)  # raises NotFoundError for an unknown id
    return _Focal(query_id, run.query, run.index_version, run.plan)


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
        "query_id": focal.query_id,
        "text": focal.text,
        "version": focal.version,
        "chunks": chunk_rows,
        "result_offsets": array(offsets, "int32"),
        "result_chunks": array([i for r in unique for i in r[0]], "int32"),
        "result_scores": array([s for r in unique for s in r[1]], "float32"),
        "version_result": array(per_version, "int32"),
    }
    return focal_data, ids_per_version
