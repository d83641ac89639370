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

The two axes (time, versions) and the auto rule are in ``ragtt.views.timeline_axis``; the claim
lanes' data in ``ragtt.views.timeline_claims``.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

import anywidget
import numpy as np
import traitlets as t

from ragtt.values import counted
from ragtt.views.timeline import build, epoch_ms, opening_version
from ragtt.views.timeline_axis import AXES
from ragtt.views.timeline_claims import LANE_ENTITY, read_claims
from ragtt.views.timeline_federation import build_federation
from ragtt.views.wire import static_file

if TYPE_CHECKING:
    import ragtt

__all__ = ["Timeline"]


class Timeline(anywidget.AnyWidget):
    """The index's history on a time axis with a draggable cursor.

    >>> tl = Timeline(proj, query_id=res.query_id)  # doctest: +SKIP
    >>> tl.version = 2          # moves the cursor; dragging it in the page sets it back
    >>> tl.chunks_at(2)         # the focal query's chunk ids at version 2
    >>> tl = Timeline(proj, assertions="policy")  # doctest: +SKIP
    >>> tl.claims_at(datetime(2024, 7, 1, tzinfo=UTC))  # ids of the claims valid then
    >>> tl.axis = "versions"    # one equal slot per index version (the header's button toggles it)
    >>> tl = Timeline(fed, query_id=fres.query_id)  # doctest: +SKIP
    >>> tl.chunks_at(5)         # a federation: one lane per member, a slot per member version
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
        proj: ragtt.Project | ragtt.Federation,
        query_id: str | None = None,
        *,
        version: int | None = None,
        assertions: str | None = None,
        axis: str = "auto",
    ) -> None:
        import ragtt

        if isinstance(proj, ragtt.Federation):  # one lane per member; its slots are the members' versions
            if assertions is not None:
                raise TypeError("a federation's Timeline has no assertion lanes: Timeline(fed, query_id=...)")
            data, versions, results = build_federation(proj, query_id)
            claims, version_s = None, []
        elif isinstance(proj, ragtt.Project):
            claims = read_claims(proj, assertions) if assertions is not None else None
            data, versions, results = build(proj, query_id, claims)
            version_s = [float(x) for x in epoch_ms(proj.versions()["committed_at"]) / 1000.0]
        else:
            raise TypeError(
                "Timeline takes a ragtt.Project or a ragtt.Federation (and optionally a query id); "
                f"got {type(proj).__name__}"
            )
        self._versions = versions
        self._results = results
        self._claims = claims
        self._version_s = version_s
        start = opening_version(data, versions) if version is None else version
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
            f"Timeline({counted(len(self._versions), 'version')}, "
            f"{counted(self._data['events']['kind']['shape'][0], 'event')}"
            f"{about}{claims}, cursor at v{self.version})"
        )
