"""The Timeline's state for a federation: one lane per member, on one time axis.

The wire format is the Timeline's own (``ragtt.views.timeline``), so the view needs nothing
new: a slot on the version axis is a member's version (in time order, each member's versions
at their ``as_of`` dates where their ingests gave one, else at their commit times, as
``Project.resolve_version`` places them); a member is a lane (``docs``), its versions the marks
in it; the federated runs sit in the queries lane. Slot ``i`` is labelled with every member's
version current then ("docs v5 · readme v7"), and for a focal federated run the fused list at
every slot is precomputed: each member's list at its version then, with the run's recorded
plan, fused with the run's recorded settings (``ragtt.federation.fusion.fuse``), never logged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ragtt.events import types as ev
from ragtt.views.timeline import KIND_INGEST, KIND_QUERY, KIND_REPLAY, FocalResults, epoch_ms, layout_wire, tick_frame
from ragtt.views.timeline_axis import version_layout
from ragtt.views.wire import array

if TYPE_CHECKING:
    from ragtt.federation import Federation

__all__ = ["build_federation"]


@dataclass(frozen=True)
class _Shown:
    """A fused item as the Timeline's chunk cards show it: its source names its member."""

    chunk_id: str
    source: str
    text: str
    score: float


def build_federation(fed: Federation, query_id: str | None) -> tuple[dict[str, Any], list[int], list[list[str]]]:
    """``_data``, the slot numbers and (for a focal run) its fused chunk ids at every slot."""
    names = list(fed.members)
    marks: list[tuple[float, int, int]] = []  # (ms, member, version)
    for m, proj in enumerate(fed.members.values()):
        marks += [(when.timestamp() * 1000.0, m, v) for v, when in proj.events.version_times().items()]
    if not marks:
        raise ValueError("no member of this federation has an index version yet: ingest something first")
    marks.sort()
    slots = list(range(1, len(marks) + 1))
    state = _member_versions(marks, len(names))  # slot -> each member's version current then (0: none)
    runs = fed.events.frame(types=[ev.QUERY_RECEIVED, ev.REPLAY_PREFIX + ev.QUERY_RECEIVED])
    run_ms = epoch_ms(runs["ts"])
    version_ms = np.array([t for t, _, _ in marks], dtype=np.float64)
    lo = float(min(version_ms.min(), run_ms.min() if len(run_ms) else np.inf))
    hi = float(max(version_ms.max(), run_ms.max() if len(run_ms) else -np.inf))
    t0, unit = tick_frame(lo, hi)
    span = hi - lo
    run_slots = [_slot_at(version_ms, t) for t in run_ms.tolist()]
    event_ms = np.concatenate([version_ms, run_ms])
    kinds = [KIND_INGEST] * len(marks) + [
        KIND_REPLAY if str(t).startswith(ev.REPLAY_PREFIX) else KIND_QUERY for t in runs["type"].to_list()
    ]
    lanes = [m for _, m, _ in marks] + [-1] * len(run_ms)
    event_slots = slots + run_slots
    version_t = np.round((version_ms - t0) / unit)
    event_t = np.round((event_ms - t0) / unit)
    first, bounds, event_x = version_layout(version_t, event_t, event_slots, slots, [])
    labels = {
        str(s): " · ".join(f"{n} v{v}" if v else f"{n} -" for n, v in zip(names, row, strict=True))
        for s, row in zip(slots, state, strict=True)
    }
    data: dict[str, Any] = {
        "t0_ms": t0,
        "t_unit_ms": unit,
        "versions": {
            "version": array(slots, "int32"),
            "t": array(version_t, "int32"),
            "operation": [f"{names[m]} v{v}" for _, m, v in marks],
        },
        "events": {
            "t": array(event_t, "int32"),
            "kind": array(kinds, "int32"),
            "lane": array(lanes, "int32"),
            "version": array(event_slots, "int32"),
        },
        "docs": names,
        "labels": labels,
        "presence": array(_presence(marks, len(names), len(slots) + 1), "int32"),
        "snapshots": [],
        "layout": layout_wire(version_ms, span, first, bounds, event_x),
        "focal": None,
        "claims": None,
    }
    results: list[list[str]] = []
    if query_id is not None:
        data["focal"], results = _focal(fed, query_id, names, state)
    return data, slots, results


def _member_versions(marks: list[tuple[float, int, int]], n: int) -> list[list[int]]:
    """Per slot, each member's version current at the slot's time: its newest version dated at
    or before it (``Project.resolve_version``'s rule), 0 before its first."""
    out: list[list[int]] = []
    row, j = [0] * n, 0
    for t, _, _ in marks:
        while j < len(marks) and marks[j][0] <= t:  # marks are sorted: each is taken in once
            _, m, v = marks[j]
            row[m] = max(row[m], v)
            j += 1
        out.append(list(row))
    return out


def _slot_at(version_ms: np.ndarray, t: float) -> int:
    """The slot current at ``t`` (the last one at or before it; the first when none is)."""
    return max(1, int(np.searchsorted(version_ms, t, side="right")))


def _presence(marks: list[tuple[float, int, int]], n: int, end: int) -> list[int]:
    """(member, from slot, to slot) triples: each member from its first version on."""
    out: list[int] = []
    seen: set[int] = set()
    for slot, (_, m, _) in enumerate(marks, start=1):
        if m not in seen:
            seen.add(m)
            out += [m, slot, end]
    return out


def _focal(
    fed: Federation, query_id: str, names: list[str], state: list[list[int]]
) -> tuple[dict[str, Any], list[list[str]]]:
    from ragtt.federation.fusion import fuse
    from ragtt.index.retrieve import RetrievalPlan

    run = fed.run(query_id)
    plans = {m["name"]: RetrievalPlan.from_dict(m["plan"]) for m in run.members}
    used = [next((int(m["index_version"]) for m in run.members if m["name"] == n), 0) for n in names]
    lists: dict[tuple[str, int], Any] = {}
    results = FocalResults()
    for row in state:
        members = []
        for name, version in zip(names, row, strict=True):
            if version and name in plans:
                if (name, version) not in lists:
                    lists[(name, version)] = fed.members[name].retrieve_at(run.query, version, plans[name])
                members.append((name, lists[(name, version)]))
        texts = {(n, c.chunk_id): c.text for n, chunks in members for c in chunks}
        fused = fuse(members, run.fusion["weights"], run.top_k, run.fusion["k"])
        results.add(
            [
                _Shown(
                    f.best.chunk_id,
                    f"{f.best.member} · {f.best.source}",
                    texts[(f.best.member, f.best.chunk_id)],
                    f.score,
                )
                for f in fused
            ]
        )
    # The run's own slot: the last whose member versions are the ones it searched.
    at = max((s for s, row in enumerate(state, start=1) if row == used), default=len(state))
    return results.wire(run.query_id, run.query, at), results.ids
