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

Two axes (the ``axis`` trait; the header's toggle button switches the view between them):

- ``"time"``: everything at its wall-clock time. Readable when commits are evenly spread.
- ``"versions"``: each index version gets an equal slot, ``[j, j + 1)`` in slot units,
  starting at the version's commit. An event goes in the slot of the index version it
  belongs to (``index_version``): the events of one slot are spread over it in log order,
  events logged in the same millisecond sharing a place, from ``j + 0.1`` to ``j + 0.9``.
  A time ``t`` (claim windows, the cursor dragged with claims) maps to the slot of the
  version committed at or before ``t`` (the last one when several commits share a time),
  linearly inside the slot between that commit and the next; the last slot ends at the
  latest time on the axis. Times before the first commit (claims can start earlier) get
  a leading slot of their own from the earliest time on the axis; open claims run to the
  axis end. Python computes this layout once (float32 positions in ``_data["layout"]``,
  plus the slot boundaries as ticks, so the view maps its cursor both ways), so both
  axes work in an exported report.
- ``"auto"`` (the default) resolves when the widget is built: ``"versions"`` when the gaps
  between consecutive commits vary by more than ``AUTO_RATIO`` (20x), ``"time"`` otherwise;
  see ``auto_axis``. ``Timeline.axis_mode`` and ``_data["layout"]["auto"]`` hold the result.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from datetime import datetime
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
# Claim flags on the wire (bits).
FLAG_SUPERSEDED, FLAG_OPEN = 1, 2
# Claim lanes: one per entity, else one per assertion type.
LANE_ENTITY, LANE_TYPE = 0, 1
# Axis modes, and the auto rule's threshold (see auto_axis).
AXES = ("auto", "time", "versions")
AUTO_RATIO = 20.0
_SAME_COMMIT_S = 1e-3  # commits closer than this are one burst: their gap is not compared
# Where a slot's events go, in slot units: from its start plus SLOT_IN to its start plus 1 - SLOT_IN.
SLOT_IN = 0.1


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

    def __init__(self, proj: ragtt.Project, query_id: str | None = None, *, version: int | None = None,
                 assertions: str | None = None, axis: str = "auto") -> None:
        import ragtt

        if not isinstance(proj, ragtt.Project):
            raise TypeError(f"Timeline takes a ragtt.Project (and optionally a query id); got {type(proj).__name__}")
        claims = _read_claims(proj, assertions) if assertions is not None else None
        data, versions, results = _build(proj, query_id, claims)
        self._versions = versions
        self._results = results
        self._claims = claims
        self._version_s = [float(x) for x in _epoch_ms(proj.versions()["committed_at"]) / 1000.0]
        start = versions[-1] if version is None else version
        super().__init__(_data=data, version=start, axis=axis)

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
        return [("entity" if k == LANE_ENTITY else "type", name)
                for k, name in zip(self._claims.lane_kinds, self._claims.lanes, strict=True)]

    def claims_at(self, at: float | datetime | None = None) -> list[str]:
        """Ids of the claims valid at ``at`` (UNIX seconds or a datetime; default: the cursor's
        version's commit time), in the order the view lists them."""
        from ragtt.temporal import to_position

        if self._claims is None:
            raise ValueError("this timeline has no assertion lanes: Timeline(proj, assertions=NAMESPACE)")
        t = self._version_s[self._versions.index(self.version)] if at is None else to_position(at, "at")
        c = self._claims
        return [aid for aid, lo, hi in zip(c.ids, c.valid_from, c.valid_until, strict=True)
                if lo <= t and (hi is None or t < hi)]

    def __repr__(self) -> str:
        focal = self._data.get("focal")
        about = f" for {focal['text']!r}" if focal else ""
        claims = f", {len(self._claims.ids)} claims in {self._claims.namespace!r}" if self._claims else ""
        return (f"Timeline({len(self._versions)} versions, {self._data['events']['kind']['shape'][0]} events"
                f"{about}{claims}, cursor at v{self.version})")


@dataclass
class _Focal:
    query_id: str
    text: str
    version: int
    plan: Any  # ragtt.index.retrieve.RetrievalPlan


@dataclass
class _Claims:
    """Every assertion of one namespace, in lane order (then by valid_from)."""

    namespace: str
    ids: list[str]
    content: list[str]
    types: list[str]
    entities: list[str | None]
    confidence: list[float]
    valid_from: list[float]  # positions: UNIX seconds
    valid_until: list[float | None]
    superseded: list[bool]
    lane: list[int]
    lanes: list[str]
    lane_kinds: list[int]


def auto_axis(committed_s: Any) -> str:
    """The axis ``"auto"`` picks for commits at ``committed_s`` (seconds, oldest first).

    The gaps between consecutive commits are compared, leaving out gaps under a millisecond
    (commits of one burst, such as a project's creation). ``"versions"`` when the largest gap
    is more than ``AUTO_RATIO`` times the smallest (bursts of activity separated by pauses:
    on a time axis the bursts pile up on a few pixels); ``"time"`` otherwise, and when there
    are fewer than two gaps to compare.
    """
    gaps = np.diff(np.asarray(committed_s, dtype=np.float64))
    gaps = gaps[gaps >= _SAME_COMMIT_S]
    if len(gaps) < 2:
        return "time"
    return "versions" if float(gaps.max()) > AUTO_RATIO * float(gaps.min()) else "time"


def _slot_positions(bounds: np.ndarray, ticks: np.ndarray) -> np.ndarray:
    """Times (ticks) to positions on the version axis: slot ``j`` covers ``[bounds[j],
    bounds[j + 1])``; a time goes in the last slot whose start is at or before it (the
    first for earlier times), linearly inside it (a slot of no duration: at its start)."""
    slots = len(bounds) - 1
    t = np.asarray(ticks, dtype=np.float64)
    j = np.clip(np.searchsorted(bounds, t, side="right") - 1, 0, slots - 1)
    lo, hi = bounds[j], bounds[j + 1]
    width = hi - lo
    frac = np.where(width > 0, (t - lo) / np.where(width > 0, width, 1.0), 0.0)
    return j + np.clip(frac, 0.0, 1.0)


def _version_layout(version_t: np.ndarray, event_t: np.ndarray, event_v: list[int], versions: list[int],
                    claim_ticks: list[np.ndarray]) -> tuple[int, np.ndarray, np.ndarray]:
    """The version axis (see the module's docstring): the first version's slot (1 when the
    axis starts before the first commit, else 0), the slot boundaries as ticks and the
    events' positions. Version ``i`` (in ``versions``) starts at ``first + i``."""
    finite = [x for x in claim_ticks if len(x)]
    t_min = min([float(version_t.min())] + [float(x.min()) for x in finite])
    t_end = max([float(version_t.max())] + [float(x.max()) for x in [event_t, *finite] if len(x)])
    first = 1 if t_min < version_t[0] else 0
    # a clock that stepped back between commits must not unsort the boundaries
    bounds = np.maximum.accumulate(np.concatenate([[t_min] if first else [], version_t.astype(np.float64), [t_end]]))
    slot_of = {v: first + i for i, v in enumerate(versions)}
    event_x = np.zeros(len(event_t), dtype=np.float64)
    # each slot's events in log order, the ones logged at the same tick sharing a place
    groups: dict[int, list[tuple[int, int]]] = {}  # slot -> (event, group) in log order
    for i, (ts, v) in enumerate(zip(event_t.tolist(), event_v, strict=True)):
        slot = slot_of.get(v)
        if slot is None:  # an event of no known version: at its time
            event_x[i] = _slot_positions(bounds, np.array([ts]))[0]
            continue
        members = groups.setdefault(slot, [])
        group = 0 if not members else members[-1][1] + (event_t[members[-1][0]] != ts)
        members.append((i, int(group)))
    for slot, members in groups.items():
        n = members[-1][1] + 1
        for i, group in members:
            event_x[i] = slot + SLOT_IN + (1 - 2 * SLOT_IN) * group / n
    return first, bounds, event_x


def known_namespaces(store: Any) -> list[str]:
    """The namespaces of an AssertionStore, sorted."""
    return [info.name for info in store.namespaces.all()]


def check_namespace(store: Any, namespace: object) -> str:
    """``namespace`` if the store has it; else a ValueError naming the ones it has."""
    if not isinstance(namespace, str):
        raise TypeError(f"assertions must be a namespace name (str); got {type(namespace).__name__}")
    known = known_namespaces(store)
    if namespace not in known:
        raise ValueError(f"no assertion namespace {namespace!r} in this project; known: "
                         + (", ".join(map(repr, known)) if known else "none (create one with "
                            "proj.assertions.init_namespace())"))
    return namespace


def _read_claims(proj: Any, namespace: object) -> _Claims:
    """Every assertion of ``namespace``, superseded ones included: the public snapshot frame at
    the largest finite position with ``include_superseded=True`` (one query)."""
    store = proj.assertions
    ns = check_namespace(store, namespace)
    frame = store.snapshot(ns, sys.float_info.max, include_superseded=True)
    rows = frame.select("id", "content", "type", "entity_id", "confidence", "valid_from", "valid_until",
                        "superseded_by").to_dicts()
    # Lanes: entities in order of their first claim, then one lane per type for claims without one.
    entity_lanes: dict[str, int] = {}
    type_lanes: dict[str, int] = {}
    for r in rows:  # the frame is ordered by valid_from, id
        if r["entity_id"] is not None:
            entity_lanes.setdefault(r["entity_id"], len(entity_lanes))
        else:
            type_lanes.setdefault(r["type"], len(type_lanes))
    lane_of = [entity_lanes[r["entity_id"]] if r["entity_id"] is not None else len(entity_lanes) + type_lanes[r["type"]]
               for r in rows]
    order = sorted(range(len(rows)), key=lambda i: (lane_of[i], rows[i]["valid_from"], rows[i]["id"]))
    rows = [rows[i] for i in order]
    return _Claims(
        namespace=ns, ids=[r["id"] for r in rows], content=[r["content"] for r in rows],
        types=[r["type"] for r in rows], entities=[r["entity_id"] for r in rows],
        confidence=[float(r["confidence"]) for r in rows], valid_from=[float(r["valid_from"]) for r in rows],
        valid_until=[None if r["valid_until"] is None else float(r["valid_until"]) for r in rows],
        superseded=[r["superseded_by"] is not None for r in rows], lane=[lane_of[i] for i in order],
        lanes=[*entity_lanes, *type_lanes],
        lane_kinds=[LANE_ENTITY] * len(entity_lanes) + [LANE_TYPE] * len(type_lanes),
    )


def _claims_wire(c: _Claims, t0: float, unit: int, bounds: np.ndarray) -> dict[str, Any]:
    def ticks(seconds: list[float]) -> np.ndarray:
        return np.round((np.asarray(seconds, dtype=np.float64) * 1000.0 - t0) / unit)

    until = ticks([_INT32_MAX if u is None else u for u in c.valid_until])
    open_ = np.array([u is None for u in c.valid_until], dtype=bool)
    until[open_] = _INT32_MAX
    flags = [(FLAG_SUPERSEDED if s else 0) | (FLAG_OPEN if u is None else 0)
             for s, u in zip(c.superseded, c.valid_until, strict=True)]
    return {
        "namespace": c.namespace, "lanes": c.lanes, "lane_kind": array(c.lane_kinds, "int32"),
        "ids": c.ids, "content": c.content, "type": c.types,
        "confidence": array(c.confidence, "float32"),
        "from": array(ticks(c.valid_from), "int32"), "until": array(until, "int32"),
        "lane": array(c.lane, "int32"), "flags": array(flags, "int32"),
        # on the version axis (slot units); open claims run to its end
        "from_x": array(_slot_positions(bounds, ticks(c.valid_from)), "float32"),
        "until_x": array(np.where(open_, len(bounds) - 1, _slot_positions(bounds, until)), "float32"),
    }


def _build(proj: Any, query_id: str | None,
           claims: _Claims | None = None) -> tuple[dict[str, Any], list[int], list[list[str]]]:
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
        claim_ticks = [np.round((np.asarray(x, dtype=np.float64) * 1000.0 - t0) / unit) for x in
                       (claims.valid_from, [u for u in claims.valid_until if u is not None])]
    first, bounds, event_x = _version_layout(version_t, event_t, event_versions, versions, claim_ticks)

    data: dict[str, Any] = {
        "t0_ms": t0, "t_unit_ms": unit,
        "versions": {"version": array(versions, "int32"),
                     "t": array(version_t, "int32"),
                     "operation": [str(o) for o in versions_frame["operation"].to_list()]},
        "events": {"t": array(event_t, "int32"), "kind": array(kinds, "int32"),
                   "lane": array(lanes, "int32"), "version": array(event_versions, "int32")},
        "docs": docs,
        "presence": array(_presence(kinds, lanes, event_versions, versions[-1] + 1), "int32"),
        "snapshots": [{"label": lbl, "version": int(v), "event": i} for i, (lbl, v, k) in
                      enumerate(zip(events["label"].to_list(), event_versions, kinds, strict=True))
                      if k == KIND_SNAPSHOT and lbl is not None],
        "layout": {"auto": auto_axis(version_ms / 1000.0), "first": first, "slots": len(bounds) - 1,
                   "bounds": array(bounds, "int32"), "event_x": array(event_x, "float32")},
        "focal": None,
        "claims": None if claims is None else _claims_wire(claims, t0, unit, bounds),
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
