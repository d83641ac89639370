"""The Timeline's assertion lanes: every claim of a namespace, read once, sent as buffers.

One lane per ``entity_id``, and one per assertion ``type`` for claims without an entity;
positions are UNIX seconds (the store's default), so claims share the axis with versions.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragtt.views.timeline_axis import slot_positions
from ragtt.views.wire import array

__all__ = [
    "FLAG_OPEN",
    "FLAG_SUPERSEDED",
    "LANE_ENTITY",
    "LANE_TYPE",
    "Claims",
    "check_namespace",
    "claims_wire",
    "known_namespaces",
    "read_claims",
]

_INT32_MAX = 2**31 - 1
# Claim flags on the wire (bits).
FLAG_SUPERSEDED, FLAG_OPEN = 1, 2
# Claim lanes: one per entity, else one per assertion type.
LANE_ENTITY, LANE_TYPE = 0, 1


@dataclass
class Claims:
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


def known_namespaces(store: Any) -> list[str]:
    """The namespaces of an AssertionStore, sorted."""
    return [info.name for info in store.namespaces.all()]


def check_namespace(store: Any, namespace: object) -> str:
    """``namespace`` if the store has it; else a ValueError naming the ones it has."""
    if not isinstance(namespace, str):
        raise TypeError(f"assertions must be a namespace name (str); got {type(namespace).__name__}")
    known = known_namespaces(store)
    if namespace not in known:
        raise ValueError(
            f"no assertion namespace {namespace!r} in this project; known: "
            + (", ".join(map(repr, known)) if known else "none (create one with proj.assertions.init_namespace())")
        )
    return namespace


def read_claims(proj: Any, namespace: object) -> Claims:
    """Every assertion of ``namespace``, superseded ones included: the public snapshot frame at
    the largest finite position with ``include_superseded=True`` (one query)."""
    store = proj.assertions
    ns = check_namespace(store, namespace)
    frame = store.snapshot(ns, sys.float_info.max, include_superseded=True)
    rows = frame.select(
        "id", "content", "type", "entity_id", "confidence", "valid_from", "valid_until", "superseded_by"
    ).to_dicts()
    # Lanes: entities in order of their first claim, then one lane per type for claims without one.
    entity_lanes: dict[str, int] = {}
    type_lanes: dict[str, int] = {}
    for r in rows:  # the frame is ordered by valid_from, id
        if r["entity_id"] is not None:
            entity_lanes.setdefault(r["entity_id"], len(entity_lanes))
        else:
            type_lanes.setdefault(r["type"], len(type_lanes))
    lane_of = [
        entity_lanes[r["entity_id"]] if r["entity_id"] is not None else len(entity_lanes) + type_lanes[r["type"]]
        for r in rows
    ]
    order = sorted(range(len(rows)), key=lambda i: (lane_of[i], rows[i]["valid_from"], rows[i]["id"]))
    rows = [rows[i] for i in order]
    return Claims(
        namespace=ns,
        ids=[r["id"] for r in rows],
        content=[r["content"] for r in rows],
        types=[r["type"] for r in rows],
        entities=[r["entity_id"] for r in rows],
        confidence=[float(r["confidence"]) for r in rows],
        valid_from=[float(r["valid_from"]) for r in rows],
        valid_until=[None if r["valid_until"] is None else float(r["valid_until"]) for r in rows],
        superseded=[r["superseded_by"] is not None for r in rows],
        lane=[lane_of[i] for i in order],
        lanes=[*entity_lanes, *type_lanes],
        lane_kinds=[LANE_ENTITY] * len(entity_lanes) + [LANE_TYPE] * len(type_lanes),
    )


def claims_wire(c: Claims, t0: float, unit: int, bounds: np.ndarray) -> dict[str, Any]:
    def ticks(seconds: list[float]) -> np.ndarray:
        return np.round((np.asarray(seconds, dtype=np.float64) * 1000.0 - t0) / unit)

    until = ticks([_INT32_MAX if u is None else u for u in c.valid_until])
    open_ = np.array([u is None for u in c.valid_until], dtype=bool)
    until[open_] = _INT32_MAX
    flags = [
        (FLAG_SUPERSEDED if s else 0) | (FLAG_OPEN if u is None else 0)
        for s, u in zip(c.superseded, c.valid_until, strict=True)
    ]
    current = [f for f, s in zip(c.valid_from, c.superseded, strict=True) if not s] or c.valid_from
    return {
        # where the view opens without a focal query: when the newest claims in force became valid
        "open_at": int(ticks([max(current)])[0]) if current else None,
        "namespace": c.namespace,
        "lanes": c.lanes,
        "lane_kind": array(c.lane_kinds, "int32"),
        "ids": c.ids,
        "content": c.content,
        "type": c.types,
        "confidence": array(c.confidence, "float32"),
        "from": array(ticks(c.valid_from), "int32"),
        "until": array(until, "int32"),
        "lane": array(c.lane, "int32"),
        "flags": array(flags, "int32"),
        # on the version axis (slot units); open claims run to its end
        "from_x": array(slot_positions(bounds, ticks(c.valid_from)), "float32"),
        "until_x": array(np.where(open_, len(bounds) - 1, slot_positions(bounds, until)), "float32"),
    }
