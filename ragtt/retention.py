"""Retention: ``proj.prune(max_snapshots=..., max_age=..., keep=...)`` forgets old runs and the
index versions nothing retained needs, and records that it did, in the hash chain.

What is retained (docs/ARCHITECTURE.md, "Retention", has the argument):

- snapshots: the ``max_snapshots`` newest (all when None), and any labelled in ``keep``;
- the cutoff: the later of ``now - max_age`` and the time of the oldest snapshot kept when
  ``max_snapshots`` dropped some (both are upper bounds on what stays);
- runs (queries and replays) that started at or after the cutoff, and those in ``keep``;
- versions: the latest, every kept snapshot's, every retained run's, those in ``keep``, the
  one current at the cutoff and every later one (the recent past stays whole, so "as of"
  any time after the cutoff resolves to a version that exists).

Everything else goes: the runs' events are deleted (the ``history.pruned`` event lists their
ids and the gaps they leave, so the chain still verifies), old snapshots lose their tag, old
versions are deleted from LanceDB. Document events, index events and document texts are never
touched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ragtt._html import STYLE, esc
from ragtt.commit import recover, writing
from ragtt.errors import ConfigError, NotFoundError
from ragtt.events import types as ev
from ragtt.events.retention import spans
from ragtt.events.store import Event
from ragtt.events.time import format_ts, parse_ts, utc_now
from ragtt.results import Result, iso_utc

if TYPE_CHECKING:
    from ragtt.context import Context

__all__ = ["PruneReport", "deleted_versions", "describe_policy", "parse_duration", "prune", "pruned_error", "prunes"]

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")


def parse_duration(value: str | timedelta | None) -> timedelta | None:
    """``"30d"``, ``"12h"``, ``"90m"``, ``"45s"``, ``"2w"`` (or a timedelta) as a timedelta."""
    if value is None or isinstance(value, timedelta):
        return value
    found = _DURATION.match(value) if isinstance(value, str) else None
    if found is None:
        raise ConfigError(f"a duration is a number and a unit s, m, h, d or w (e.g. '30d', '12h'); got {value!r}")
    return timedelta(seconds=float(found.group(1)) * _UNITS[found.group(2)])


@dataclass(frozen=True)
class PruneReport(Result):
    """What ``proj.prune`` forgot (``prune_id`` is its ``history.pruned`` event; None: nothing to do)."""

    prune_id: str | None
    cutoff: datetime | None
    queries_pruned: int
    events_pruned: int
    snapshots_dropped: list[str] = field(default_factory=list)
    versions_deleted: list[int] = field(default_factory=list)
    versions_kept: list[int] = field(default_factory=list)
    policy: dict[str, Any] = field(default_factory=dict)

    def to_text(self) -> str:
        if self.prune_id is None:
            return "prune: nothing to prune"
        return (
            f"prune: {self.queries_pruned} run(s) ({self.events_pruned} events) before {iso_utc(self.cutoff)}, "
            f"{len(self.snapshots_dropped)} snapshot(s), {len(self.versions_deleted)} version(s) deleted; "
            f"{len(self.versions_kept)} version(s) kept"
        )

    def __repr__(self) -> str:
        return f"PruneReport({self.to_text()})"

    def _repr_html_(self) -> str:
        return f"{STYLE}<div class='ragtt-r'>{esc(self.to_text())}</div>"


@dataclass(frozen=True)
class _Plan:
    cutoff: datetime | None
    doomed: list[str]  # query ids
    dropped: list[str]  # snapshot labels
    delete: list[int]
    kept: list[int]


def prune(
    ctx: Context,
    max_snapshots: int | None = None,
    max_age: str | timedelta | None = None,
    keep: Iterable[str | int] | str | int = (),
) -> PruneReport:
    """Forget what the policy does not retain, as one write (see the module docstring)."""
    if max_snapshots is not None and (isinstance(max_snapshots, bool) or not isinstance(max_snapshots, int)):
        raise ConfigError(f"max_snapshots must be an int >= 0 or None; got {max_snapshots!r}")
    if max_snapshots is not None and max_snapshots < 0:
        raise ConfigError(f"max_snapshots must be >= 0; got {max_snapshots}")
    age = parse_duration(max_age)
    if max_snapshots is None and age is None:
        raise ConfigError("prune needs a policy: max_snapshots=N, max_age='30d', or both")
    kept_items = [keep] if isinstance(keep, str | int) else list(keep)
    policy = {
        "max_snapshots": max_snapshots,
        "max_age": max_age if isinstance(max_age, str) else (None if age is None else f"{age.total_seconds():g}s"),
        "keep": [str(k) for k in kept_items],
    }
    with writing(ctx, "prune") as w:
        plan = _plan(ctx, max_snapshots, age, kept_items)
        if not (plan.doomed or plan.dropped or plan.delete):
            return PruneReport(None, plan.cutoff, 0, 0, versions_kept=plan.kept, policy=policy)
        log = ctx.log
        event = None
        with log.transaction() as conn:
            rows = log.retention.run_events(conn, plan.doomed)
            payload: ev.HistoryPruned = {
                "policy": policy,
                "cutoff": None if plan.cutoff is None else format_ts(plan.cutoff),
                "queries_pruned": len(plan.doomed),
                "query_ids": plan.doomed,
                "events_pruned": len(rows),
                "spans": spans(rows),
                "snapshots_dropped": plan.dropped,
                "versions_deleted": plan.delete,
                "versions_kept": plan.kept,
            }
            event = Event(ev.HISTORY_PRUNED, dict(payload), index_version=w.base)
            log.append_many([event], conn=conn)
            log.retention.delete(conn, [seq for seq, _ in rows])  # allowed: the newest event is this prune
            # Log first, table after: from here the table part is only ever rolled forward.
            log.intents.add(
                conn,
                event.event_id,
                "prune",
                w.base,
                event.ts,
                {
                    "events": [],
                    "table": ctx.table.table_name,
                    "forget": {"versions": plan.delete, "tags": plan.dropped},
                },
            )
        recover(log, ctx.table)  # runs the table part: the same code a crashed prune's recovery runs
    log.compact()
    return PruneReport(
        event.event_id, plan.cutoff, len(plan.doomed), len(rows), plan.dropped, plan.delete, plan.kept, policy
    )


def _plan(ctx: Context, max_snapshots: int | None, age: timedelta | None, keep: list[str | int]) -> _Plan:
    from ragtt.index.snapshots import list_snapshots

    now = utc_now()
    snapshots = sorted(list_snapshots(ctx), key=lambda s: (s.created_at, s.index_version))
    runs = ctx.log.retention.runs()
    run_ids = {r.query_id for r in runs}
    labels = {s.label for s in snapshots}
    rows = ctx.log.versions.rows()
    logged = {v for v, _, _ in rows}
    keep_runs, keep_labels, keep_versions = set(), set(), set()
    for item in keep:
        if isinstance(item, int) and not isinstance(item, bool) and item in logged:
            keep_versions.add(item)
        elif isinstance(item, str) and item in run_ids:
            keep_runs.add(item)
        elif isinstance(item, str) and item in labels:
            keep_labels.add(item)
        else:
            raise ConfigError(
                f"keep names {item!r}, which is no query id, snapshot label or index version of this project "
                "(a pruned query cannot be kept any more)"
            )
    dropped: list[str] = []
    cutoffs = [] if age is None else [now - age]
    if max_snapshots is not None and len(snapshots) > max_snapshots:
        newest = snapshots[len(snapshots) - max_snapshots :] if max_snapshots else []
        cutoffs.append(newest[0].created_at if newest else now)
        dropped = [s.label for s in snapshots if s not in newest and s.label not in keep_labels]
    cutoff = max(cutoffs) if cutoffs else None
    stamp = None if cutoff is None else format_ts(cutoff)
    doomed = [r.query_id for r in runs if stamp is not None and r.started < stamp and r.query_id not in keep_runs]
    gone = set(doomed)
    retained = {ctx.version} | keep_versions
    retained |= {s.index_version for s in snapshots if s.label not in dropped}
    retained |= {r.index_version for r in runs if r.query_id not in gone and r.index_version is not None}
    if cutoff is not None:
        at_cutoff = ctx.log.versions.at_or_before(cutoff)
        retained |= {v for v, committed, _ in rows if parse_ts(committed) >= cutoff}
        if at_cutoff is not None:
            retained.add(at_cutoff)
    else:
        retained |= logged  # no cutoff binds: every version stays
    deleted_before = deleted_versions(ctx)
    delete = sorted(logged - retained - deleted_before)
    return _Plan(cutoff, doomed, dropped, delete, sorted(logged & retained - deleted_before))


def prunes(ctx: Context) -> list[Event]:
    """The ``history.pruned`` events, oldest first."""
    return ctx.log.query(types=ev.HISTORY_PRUNED)


def deleted_versions(ctx: Context) -> set[int]:
    """Index versions a prune deleted (they stay in the version history, and are never reused)."""
    return {int(v) for e in prunes(ctx) for v in e.payload.get("versions_deleted", [])}


def pruned_error(ctx: Context, query_id: str) -> NotFoundError | None:
    """The error for a query id whose run a prune deleted (None: it was not pruned)."""
    seq = ctx.log.retention.pruned_in(query_id)
    event = next((e for e in prunes(ctx) if e.seq == seq), None) if seq is not None else None
    if event is None or query_id not in event.payload.get("query_ids", []):
        return None
    return NotFoundError(
        f"query {query_id} was pruned on {iso_utc(event.ts)} by {describe_policy(event.payload.get('policy', {}))}"
        " (retention deletes old runs' events; the prune event lists the id)"
    )


def describe_policy(policy: dict[str, Any]) -> str:
    """``prune(max_snapshots=5, max_age='30d')`` as recorded in a ``history.pruned`` event."""
    parts = [f"{k}={policy[k]!r}" for k in ("max_snapshots", "max_age") if policy.get(k) is not None]
    if policy.get("keep"):
        parts.append(f"keep={len(policy['keep'])} item(s)")
    return f"prune({', '.join(parts)})"
