"""The Timeline's model state (``_data``, the opening ``version``), computed from a Project.

No widget stack here: the notebook's ``Timeline`` widget and ``ragtt serve``'s ``/ui`` both build
on it; the widget's docstring says what the state holds and why.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ragtt.events import types as ev
from ragtt.views.timeline_axis import auto_axis, axis_warp, version_layout
from ragtt.views.timeline_claims import Claims, claims_wire, read_claims
from ragtt.views.wire import array

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "KIND_INGEST",
    "KIND_QUERY",
    "KIND_REMOVE",
    "KIND_REPLAY",
    "KIND_SNAPSHOT",
    "FocalResults",
    "build",
    "epoch_ms",
    "focal",
    "focals",
    "layout_wire",
    "model",
    "opening_version",
    "tick_frame",
]


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
_DAY_MS = 86_400_000
# Tick units (ms): the divisors of a second, then the whole seconds that divide a day.
_UNITS = [u for u in range(1, 1001) if 1000 % u == 0] + [s * 1000 for s in range(2, 86_401) if 86_400 % s == 0]
# The events that happen to a version and so sit at its ``as_of`` date, where its ingest gave one.
_DATED = frozenset({ev.DOCUMENT_INGESTED, ev.DOCUMENT_REMOVED, ev.SNAPSHOT_TAKEN})


def model(proj: Any, query_id: str | None = None, *, assertions: str | None = None) -> dict[str, Any]:
    """The Timeline's traits as a fresh widget has them: ``_data``, ``version``, ``axis``, ``selected``."""
    claims = read_claims(proj, assertions) if assertions is not None else None
    data, versions, _ = build(proj, query_id, claims)
    return {"_data": data, "version": opening_version(data, versions), "axis": "auto", "selected": []}


@dataclass
class _Focal:
    query_id: str
    text: str
    version: int
    plan: Any  # ragtt.index.retrieve.RetrievalPlan


def build(
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
    event_ms = epoch_ms(events["ts"])
    # a version sits at its ingest's date (a release's), if it had one, with its events; the
    # versions before or between dated ones never later than the next (EventLog.version_times)
    placed = proj.events.version_times()
    version_ms = np.array([placed[v].timestamp() * 1000.0 for v in versions])
    as_of = proj.events.as_of_times()
    if as_of:
        dated = {v: when.timestamp() * 1000.0 for v, when in as_of.items()}
        own = [k in _DATED for k in events["type"].to_list()]
        event_ms = np.array(
            [
                dated.get(v, t) if mine and v is not None else t
                for v, t, mine in zip(events["index_version"].to_list(), event_ms.tolist(), own, strict=True)
            ]
        )
    times = [version_ms, event_ms]
    if claims is not None and claims.ids:  # the axis covers every claim's window too
        times.append(np.asarray(claims.valid_from, dtype=np.float64) * 1000.0)
        times.append(np.asarray([u for u in claims.valid_until if u is not None], dtype=np.float64) * 1000.0)
    lo, hi = float(min(x.min() for x in times if len(x))), float(max(x.max() for x in times if len(x)))
    t0, unit = tick_frame(lo, hi)
    span = hi - lo

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
    labels = proj.version_labels()
    focal = _focal(proj, query_id) if query_id is not None else None
    kept = _kept_slots(versions, first, kinds, event_versions, labels, focal.version if focal else None)

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
        "labels": {str(v): name for v, name in labels.items()},
        "presence": array(_presence(kinds, lanes, event_versions, versions[-1] + 1), "int32"),
        "snapshots": [
            {"label": lbl, "version": int(v), "event": i}
            for i, (lbl, v, k) in enumerate(zip(events["label"].to_list(), event_versions, kinds, strict=True))
            if k == KIND_SNAPSHOT and lbl is not None
        ],
        "layout": layout_wire(version_ms, span, first, bounds, event_x, kept),
        "focal": None,
        "claims": None if claims is None else claims_wire(claims, t0, unit, bounds),
    }
    results: list[list[str]] = []
    if focal is not None:
        data["focal"], results = _precompute(proj, focal, versions)
    return data, versions, results


def focal(proj: Any, query_id: str, versions: list[int]) -> dict[str, Any]:
    """The focal part of a Timeline's ``_data`` (``_data["focal"]``) for ``query_id``: what it
    retrieves at every one of ``versions``; the rest of ``_data`` is the same for every query."""
    return _precompute(proj, _focal(proj, query_id), versions)[0]


def focals(
    proj: Any, query_ids: list[str], versions: list[int], logged: Mapping[str, Mapping[int, str]] | None = None
) -> dict[str, dict[str, Any]]:
    """``focal`` of each of ``query_ids`` (those with no logged run are left out), the same
    parts, the queries searched together at each version (``proj.retrieve_many_at``).
    ``logged``: query id -> version -> the id of a logged run of its question there (a
    history matrix's cells), read back instead of searched where it is that very search."""
    runs = proj.runs(query_ids)
    wanted = [_Focal(r.query_id, r.query, r.index_version, r.plan) for q in query_ids if (r := runs.get(q))]
    cells = {q: dict(by) for q, by in (logged or {}).items()}
    cell_runs = proj.runs([c for by in cells.values() for c in by.values()]) if cells else {}
    found = _sweep(proj, wanted, versions, lambda f, v: cell_runs.get(cells.get(f.query_id, {}).get(v, "")))
    return {f.query_id: found[i].wire(f.query_id, f.text, f.version) for i, f in enumerate(wanted)}


def opening_version(data: dict[str, Any], versions: list[int]) -> int:
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


def tick_frame(lo_ms: float, hi_ms: float) -> tuple[float, int]:
    """``(t0, unit)``: int32 ticks of ``unit`` ms from ``t0`` cover ``lo_ms``..``hi_ms`` below
    _INT32_MAX (the tick of an open end). The unit divides a second, or is whole seconds that
    divide a day, or whole days, and ``t0`` is a multiple of it: a whole second, and a date
    (an ``as_of`` of 2021-05-11 is its midnight, UTC), falls on a tick exactly and reads back
    as it was, never a few milliseconds before."""
    need = max(1.0, (hi_ms - lo_ms) / (_INT32_MAX - 2))
    unit = next((u for u in _UNITS if u >= need), None) or int(np.ceil(need / _DAY_MS)) * _DAY_MS
    return float(np.floor(lo_ms / unit) * unit), unit


def epoch_ms(column: pl.Series) -> np.ndarray:
    return column.dt.epoch("us").to_numpy().astype(np.float64) / 1000.0


def _kept_slots(
    versions: list[int],
    first: int,
    kinds: list[int],
    event_versions: list[int],
    labels: dict[int, str],
    focal: int | None,
) -> set[int]:
    """The version axis's slots that compression never folds away: the first and last
    versions, the labelled ones, the focal query's, and those with a snapshot, query or replay."""
    seen = {v for k, v in zip(kinds, event_versions, strict=True) if k in (KIND_SNAPSHOT, KIND_QUERY, KIND_REPLAY)}
    seen |= set(labels) | {versions[0], versions[-1]} | ({focal} if focal is not None else set())
    return {first + i for i, v in enumerate(versions) if v in seen}


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
    return _Focal(run.query_id, run.query, run.index_version, run.plan)


def _precompute(proj: Any, focal: _Focal, versions: list[int]) -> tuple[dict[str, Any], list[list[str]]]:
    """Run the focal query at every version."""
    results = _sweep(proj, [focal], versions)[0]
    return results.wire(focal.query_id, focal.text, focal.version), results.ids


def _sweep(
    proj: Any, focals: list[_Focal], versions: list[int], logged: Callable[[_Focal, int], Any] | None = None
) -> list[FocalResults]:
    """Each focal query at every version with its recorded plan, exactly; at each version the
    queries of one plan searched together, a ``logged(focal, version)`` run read back where it
    is that very search."""
    results = [FocalResults() for _ in focals]
    groups: dict[str, list[int]] = {}
    for i, f in enumerate(focals):
        groups.setdefault(json.dumps(f.plan.to_dict(), sort_keys=True, default=repr), []).append(i)
    for v in versions:
        for members in groups.values():
            plan = focals[members[0]].plan
            reuse = [logged(focals[i], v) for i in members] if logged is not None else []
            found = proj.retrieve_many_at([focals[i].text for i in members], v, plan, logged=reuse)
            for i, chunks in zip(members, found, strict=True):
                results[i].add(chunks)
    return results


def layout_wire(
    version_ms: np.ndarray,
    span: float,
    first: int,
    bounds: np.ndarray,
    event_x: np.ndarray,
    keep: set[int] | None = None,
) -> dict[str, Any]:
    """``_data["layout"]``: the auto axis's choice and the version axis (``version_layout``'s),
    with its compression (``axis_warp``): ``keep`` holds the slots it must not fold (None: no
    compression, an identity warp)."""
    slots = len(bounds) - 1
    runs: list[int]
    if keep is None:
        runs, warp_pos, warp_x = [], [0.0, float(slots)], [0.0, float(slots)]
    else:
        runs, warp_pos, warp_x = axis_warp(slots, first, keep)
    return {
        "auto": auto_axis(version_ms / 1000.0, span_s=span / 1000.0),
        "first": first,
        "slots": slots,
        "bounds": array(bounds, "int32"),
        "event_x": array(event_x, "float32"),
        "runs": array(runs, "int32"),
        "warp_pos": array(warp_pos, "float32"),
        "warp_x": array(warp_x, "float32"),
        "width": warp_x[-1],
    }


class FocalResults:
    """What a focal query retrieves at each slot, added in slot order, as ``_data["focal"]``:
    identical consecutive results are stored once. A chunk needs ``chunk_id``, ``source``,
    ``text`` and ``score``."""

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self._rows: list[dict[str, str]] = []
        self._unique: list[tuple[tuple[int, ...], tuple[float, ...]]] = []
        self._per_slot: list[int] = []
        self.ids: list[list[str]] = []  # each slot's chunk ids

    def add(self, chunks: list[Any]) -> None:
        ids = []
        for c in chunks:
            if c.chunk_id not in self._index:
                self._index[c.chunk_id] = len(self._rows)
                self._rows.append({"chunk_id": c.chunk_id, "source": c.source, "text": c.text})
            ids.append(self._index[c.chunk_id])
        result = (tuple(ids), tuple(round(c.score, 6) for c in chunks))
        if not self._unique or self._unique[-1] != result:
            self._unique.append(result)
        self._per_slot.append(len(self._unique) - 1)
        self.ids.append([c.chunk_id for c in chunks])

    def wire(self, query_id: str, text: str, version: int) -> dict[str, Any]:
        offsets = np.cumsum([0] + [len(r[0]) for r in self._unique])
        return {
            "query_id": query_id,
            "text": text,
            "version": version,
            "chunks": self._rows,
            "result_offsets": array(offsets, "int32"),
            "result_chunks": array([i for r in self._unique for i in r[0]], "int32"),
            "result_scores": array([s for r in self._unique for s in r[1]], "float32"),
            "version_result": array(self._per_slot, "int32"),
        }
