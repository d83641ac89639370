"""The Timeline's two axes and the rule that picks one.

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
- ``"auto"`` (the default) resolves when the widget is built: ``"versions"`` unless the
  versions are evenly spread over the axis (no gap between consecutive versions more than
  ``AUTO_RATIO``, 3x, another, nor under a third of an even share of the axis); see
  ``auto_axis``. A version's time is its ingest's ``as_of`` date where one was given. ``Timeline.axis_mode`` and
  ``_data["layout"]["auto"]`` hold the result.

Axis compression, for thousands of versions (a folder watched for weeks): past
``COMPRESS_FROM`` slots, each run of at least ``MIN_RUN`` quiet versions in a row (no
snapshot, no query or replay, no label, not the focal query's, not the first or last) is
drawn as ONE compressed segment ``RUN_W`` slots wide, so the versions that matter keep
their room and stay visible and labelled. Positions stay in slot units everywhere; the warp
from slot units to drawn units is a monotone piecewise-linear map given by its knots
(``layout.warp_pos`` -> ``layout.warp_x``, ``layout.width`` drawn units in all), and
``layout.runs`` holds the compressed runs as flat ``[start, end)`` slot pairs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "AUTO_RATIO",
    "AXES",
    "COMPRESS_FROM",
    "MIN_RUN",
    "RUN_W",
    "SLOT_IN",
    "auto_axis",
    "axis_warp",
    "slot_positions",
    "version_layout",
]

# Axis modes, and the auto rule's threshold (see auto_axis).
AXES = ("auto", "time", "versions")
AUTO_RATIO = 3.0
_SAME_COMMIT_S = 1e-3  # commits closer than this are one burst: their gap is not compared
# Where a slot's events go, in slot units: from its start plus SLOT_IN to its start plus 1 - SLOT_IN.
SLOT_IN = 0.1
# Axis compression (see the module's docstring).
COMPRESS_FROM = 150
MIN_RUN = 3
RUN_W = 1.0


def auto_axis(committed_s: Any, *, span_s: float | None = None) -> str:
    """The axis ``"auto"`` picks for versions at ``committed_s`` (seconds, oldest first: when
    each was committed, or the ``as_of`` date its ingest carried) on an axis ``span_s`` long
    (everything drawn, queries included; default: the versions' own span).

    Chosen from how the versions are spread, not the queries: the gaps between consecutive
    versions are compared, leaving out gaps under a millisecond (commits of one burst, such
    as a project's creation). ``"time"`` only when the versions are evenly spread over the
    axis: at least two gaps, the largest at most ``AUTO_RATIO`` times the smallest, and the
    smallest at least ``1 / AUTO_RATIO`` of an even share of the axis (``span_s / gaps``).
    Otherwise ``"versions"``: bursts of ingests, or ingests done in two minutes and then
    queried for twenty, pile up on a few pixels of a time axis.
    """
    times = np.asarray(committed_s, dtype=np.float64)
    gaps = np.diff(times)
    gaps = gaps[gaps >= _SAME_COMMIT_S]
    if len(gaps) < 2:
        return "versions"
    if float(gaps.max()) > AUTO_RATIO * float(gaps.min()):
        return "versions"
    span = float(times.max() - times.min()) if span_s is None else float(span_s)
    return "versions" if float(gaps.min()) * AUTO_RATIO * len(gaps) < span else "time"


def slot_positions(bounds: np.ndarray, ticks: np.ndarray) -> np.ndarray:
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


def version_layout(
    version_t: np.ndarray, event_t: np.ndarray, event_v: list[int], versions: list[int], claim_ticks: list[np.ndarray]
) -> tuple[int, np.ndarray, np.ndarray]:
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
            event_x[i] = slot_positions(bounds, np.array([ts]))[0]
            continue
        members = groups.setdefault(slot, [])
        group = 0 if not members else members[-1][1] + (event_t[members[-1][0]] != ts)
        members.append((i, int(group)))
    for slot, members in groups.items():
        n = members[-1][1] + 1
        for i, group in members:
            event_x[i] = slot + SLOT_IN + (1 - 2 * SLOT_IN) * group / n
    return first, bounds, event_x


def axis_warp(slots: int, first: int, keep: set[int]) -> tuple[list[int], list[float], list[float]]:
    """The version axis's compression: the runs (flat ``[start, end)`` slot pairs) of at
    least ``MIN_RUN`` slots in a row outside ``keep`` (the slots that must stay visible),
    found only past ``COMPRESS_FROM`` slots, and the warp's knots (slot positions -> drawn
    units; each run ``RUN_W`` wide, every other slot 1). The leading slot of times before the
    first commit is never compressed."""
    runs: list[int] = []
    if slots >= COMPRESS_FROM:
        start: int | None = None
        for j in range(first, slots + 1):
            quiet = j < slots and j not in keep
            if quiet and start is None:
                start = j
            elif not quiet and start is not None:
                if j - start >= MIN_RUN:
                    runs += [start, j]
                start = None
    pos, x = [0.0], [0.0]
    for a, b in zip(runs[::2], runs[1::2], strict=True):
        if a > pos[-1]:
            pos.append(float(a))
            x.append(x[-1] + a - pos[-2])
        pos.append(float(b))
        x.append(x[-1] + RUN_W)
    if pos[-1] < slots:
        pos.append(float(slots))
        x.append(x[-1] + slots - pos[-2])
    return runs, pos, x
