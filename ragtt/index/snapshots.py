"""Snapshots: a LanceDB tag on a version plus its ``index.snapshot_taken`` event, made
together by the crash protocol (the tag is the table commit), so neither exists alone."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ragtt._hashing import time_ordered_id
from ragtt.commit import writing
from ragtt.errors import ConfigError, ProjectDamagedError, StoreError
from ragtt.events import types as ev
from ragtt.events.store import Event
from ragtt.results import Snapshot, Snapshots, version_names
from ragtt.values import check_label_length, check_text, quoted

if TYPE_CHECKING:
    from datetime import datetime

    from ragtt.context import Context
    from ragtt.events.base import EventLog

__all__ = [
    "list_snapshots",
    "maybe_auto_snapshot",
    "snapshot_events",
    "snapshot_events_in",
    "snapshot_if_changed",
    "take_snapshot",
    "version_labels",
]

_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def take_snapshot(ctx: Context, label: str) -> Snapshot:
    check_text("the snapshot label", label)
    check_label_length("the snapshot label", label)
    if not _LABEL.match(label) or label.isdigit():
        raise ConfigError(
            "snapshot label must be ASCII letters, digits, '.', '-' or '_', start with a letter or digit and not be "
            f"only digits; got {quoted(label)}"
        )
    with writing(ctx, "snapshot") as w:
        version = w.base
        tagged = ctx.table.tags().get(label)
        if tagged == version:  # taken already (an interrupted call run again): the same snapshot
            return _labelled(ctx, label)
        if tagged is not None:
            raise StoreError(f"a snapshot labelled {label!r} already exists (v{tagged}); pick another label")
        sources = ctx.table.scan(version, ["source"]).column("source")
        payload: ev.SnapshotTaken = {
            "snapshot_id": time_ordered_id(),
            "label": label,
            "doc_count": len(set(sources.to_pylist())),
            "chunk_count": len(sources),
        }
        w.stage([Event(ev.SNAPSHOT_TAKEN, dict(payload), index_version=version)], tag=label)
        ctx.table.tag(label, version)
        w.commit()
        return _labelled(ctx, label)


def _labelled(ctx: Context, label: str) -> Snapshot:
    found = next((s for s in list_snapshots(ctx) if s.label == label), None)
    if found is None:
        raise ProjectDamagedError(
            f"the index has a tag {label!r} that no snapshot event records (made outside "
            "ragtt?); `ragtt verify` lists such problems"
        )
    return found


def list_snapshots(ctx: Context) -> Snapshots:
    as_of = ctx.log.as_of_times()
    return Snapshots(_snapshot(e, as_of) for e in snapshot_events(ctx).values())


def snapshot_events(ctx: Context) -> dict[str, Event]:
    """Label -> the ``index.snapshot_taken`` event of each snapshot that still exists: a prune
    that dropped a snapshot (its tag) lists its label, and a later snapshot may reuse it."""
    return snapshot_events_in(ctx.log)


def snapshot_events_in(log: EventLog) -> dict[str, Event]:
    """``snapshot_events`` of the event log ``log``."""
    live: dict[str, Event] = {}
    for e in log.query(types=[ev.SNAPSHOT_TAKEN, ev.HISTORY_PRUNED]):
        if e.type == ev.HISTORY_PRUNED:
            for label in e.payload.get("snapshots_dropped", []):
                live.pop(label, None)
        else:
            live[str(e.payload["label"])] = e
    return live


def version_labels(ctx: Context) -> dict[int, str]:
    """Version -> the snapshot label that names it, for ``ragtt.results.version_label``."""
    return version_names([_snapshot(e, {}) for e in snapshot_events(ctx).values()])  # no dates asked


def maybe_auto_snapshot(ctx: Context) -> None:
    """A snapshot after every ``auto_snapshot_every`` document ingests since the last one."""
    last = ctx.log.last(ev.SNAPSHOT_TAKEN)
    since = ctx.log.query(types=ev.DOCUMENT_INGESTED, since=last.ts if last else None)
    if len(since) >= ctx.config.auto_snapshot_every:
        label = f"auto-v{ctx.version}"
        if label not in ctx.table.tags():
            take_snapshot(ctx, label)


def _snapshot(e: Event, as_of: dict[int, datetime]) -> Snapshot:
    p = e.payload
    version = int(e.index_version or 0)
    return Snapshot(p["snapshot_id"], p["label"], version, e.ts, p["doc_count"], p["chunk_count"], as_of.get(version))


def snapshot_if_changed(ctx: Context, label: str) -> Snapshot | None:
    """A snapshot of the latest version unless one already names it (None then).

    ``label`` may hold ``{ts}`` (UTC, ``20261201T083000Z``) and ``{version}``; a label that is
    taken gets ``-2``, ``-3``, ... so scheduled labels never collide.
    """
    last = ctx.log.last(ev.SNAPSHOT_TAKEN)
    version = ctx.version
    if last is not None and last.index_version == version:
        return None
    from ragtt.events.time import utc_now

    base = label.replace("{ts}", utc_now().strftime("%Y%m%dT%H%M%SZ")).replace("{version}", str(version))
    taken = ctx.table.tags()
    unique = base
    for n in range(2, 10_000):
        if unique not in taken:
            break
        unique = f"{base}-{n}"
    return take_snapshot(ctx, unique)
