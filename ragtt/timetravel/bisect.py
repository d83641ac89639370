"""Bisect the index history: the first version where a predicate on a query's result flips.

Uses at most ceil(log2 n) + 2 retrievals over n versions (the two ends, then halving),
unlogged, through the same ``execute`` as live queries and replays. When budget is left,
one sample after the change point checks monotonicity and warns if it fails.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragtt._html import BOX, STYLE, esc, table
from ragtt.errors import ConfigError, NotFoundError
from ragtt.results import ReplayResult, Result, version_label
from ragtt.values import counted

if TYPE_CHECKING:
    from ragtt.context import Context
    from ragtt.index.retrieve import RetrievalPlan

__all__ = ["BisectReport", "bisect", "entered_at", "make_predicate", "resolve_chunk_id"]

Predicate = Callable[[ReplayResult], Any]


@dataclass(frozen=True)
class BisectReport(Result):
    query: str
    predicate: str
    first_version: int | None
    start_value: Any
    end_value: Any
    replays_used: int
    steps: list[tuple[int, Any]]
    versions_searched: int
    warnings: list[str] = field(default_factory=list)
    labels: dict[int, str] = field(default_factory=dict)  # version -> snapshot label
    # For "source:" and "chunk:" predicates: the version where that source or chunk last
    # entered the index (None: never, or not such a predicate).
    entered: int | None = None

    def _entered_text(self) -> str:
        if self.entered is None:
            return ""
        what = self.predicate.partition(":")[2]
        return f"; {what} entered the index at {version_label(self.entered, self.labels)}"

    def _headline(self) -> str:
        if self.versions_searched == 1:
            return (
                f"bisect {self.predicate} for {self.query!r}: nothing to bisect: one version "
                f"({version_label(self.steps[0][0], self.labels)}, where the predicate is {self.start_value!r})"
                + self._entered_text()
            )
        if self.first_version is None:
            return (
                f"bisect {self.predicate} for {self.query!r}: "
                f"no change over {counted(self.versions_searched, 'version')}" + self._entered_text()
            )
        return (
            f"bisect {self.predicate} for {self.query!r}: first changed at "
            f"{version_label(self.first_version, self.labels)} ({self.start_value!r} -> {self.end_value!r})"
            + self._entered_text()
        )

    def to_text(self) -> str:
        lines = [
            self._headline(),
            f"  {self.replays_used} replays: "
            + ", ".join(f"{version_label(v, self.labels)}={val!r}" for v, val in self.steps),
        ]
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        first = (
            "nothing to bisect: one version"
            if self.versions_searched == 1
            else "no change"
            if self.first_version is None
            else f"first changed at <b>{esc(version_label(self.first_version, self.labels))}</b>"
        ) + esc(self._entered_text())
        rows = [
            (version_label(v, self.labels), repr(val), "first changed" if v == self.first_version else "")
            for v, val in sorted(self.steps)
        ]
        warnings = "".join(f"<div class='rem'>warning: {esc(w)}</div>" for w in self.warnings)
        return (
            f"{STYLE}{BOX}<b>Bisect</b> <code>{esc(self.predicate)}</code> for <i>{esc(self.query)}</i>: "
            f"{first} ({esc(repr(self.start_value))} &rarr; {esc(repr(self.end_value))}); "
            f"{counted(self.replays_used, 'replay')} over {counted(self.versions_searched, 'version')}"
            + table(["version tried", "value", ""], rows)
            + warnings
            + "</div>"
        )


def make_predicate(predicate: Predicate | str) -> tuple[Predicate, str, bool]:
    """(function, description, needs an answer) from a callable or "chunk:", "source:", "answer:"."""
    if callable(predicate):
        return predicate, getattr(predicate, "__name__", "predicate"), bool(getattr(predicate, "needs_answer", False))
    if isinstance(predicate, str) and ":" in predicate:
        kind, _, arg = predicate.partition(":")
        if kind == "chunk":
            return (lambda r: arg in {c.chunk_id for c in r.chunks}), predicate, False
        if kind == "source":
            return (lambda r: arg in {c.source for c in r.chunks}), predicate, False
        if kind == "answer":
            return (lambda r: arg.casefold() in (r.answer or "").casefold()), predicate, True
    raise ConfigError(
        f"predicate must be a callable or 'chunk:<id>', 'source:<name>', 'answer:<substring>'; got {predicate!r}"
    )


def bisect(
    ctx: Context,
    query: str,
    predicate: Predicate | str,
    versions: Sequence[int] | None = None,
    *,
    generate: bool | None = None,
) -> BisectReport:
    from ragtt.index.snapshots import version_labels
    from ragtt.timetravel.run import load_run

    entered = None
    if isinstance(predicate, str) and predicate.partition(":")[0] in ("chunk", "source"):
        kind, _, arg = predicate.partition(":")
        if kind == "chunk":
            predicate = f"chunk:{resolve_chunk_id(ctx, arg)}"
        entered = entered_at(ctx, kind, predicate.partition(":")[2])
    fn, description, needs_answer = make_predicate(predicate)
    generate = needs_answer if generate is None else generate
    labels = version_labels(ctx)
    try:
        logged = load_run(ctx, query)
        text, plan = logged.query, logged.plan
        start = logged.index_version
    except NotFoundError:
        if len(query) == 32 and all(ch in "0123456789abcdef" for ch in query):
            raise
        text, plan, start = query, ctx.plan(), None
    candidates = sorted(set(versions)) if versions is not None else _data_versions(ctx, start)
    if not candidates:
        raise ConfigError(
            "bisect needs at least one version to look at; got an empty list of versions"
            if versions is not None
            else "the index holds no data yet: ingest before bisecting"
        )
    steps: list[tuple[int, Any]] = []
    seen: dict[int, Any] = {}

    def value_at(i: int) -> Any:
        if i not in seen:  # a version is never retrieved twice
            seen[i] = fn(_evaluate(ctx, text, plan, candidates[i], generate))
            steps.append((candidates[i], seen[i]))
        return seen[i]

    n = len(candidates)
    budget = math.ceil(math.log2(n)) + 2
    start_value, end_value = value_at(0), value_at(n - 1)
    warnings: list[str] = []
    if n == 1:  # a query with no history: a report, not an error (a CI job bisects whatever it has)
        return BisectReport(
            text, description, None, start_value, end_value, len(steps), steps, n, labels=labels, entered=entered
        )
    if end_value == start_value:
        return BisectReport(
            text,
            description,
            None,
            start_value,
            end_value,
            len(steps),
            steps,
            n,
            ["the predicate has the same value at both ends; a change that reverted is not found"],
            labels,
            entered,
        )
    lo, hi = 0, n - 1  # value(lo) == start, value(hi) != start
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if value_at(mid) == start_value:
            lo = mid
        else:
            hi = mid
    unseen_after = [i for i in range(hi + 1, n - 1) if i not in seen]
    if len(steps) < budget and unseen_after:
        probe = unseen_after[len(unseen_after) // 2]
        if value_at(probe) == start_value:
            warnings.append(
                f"not monotone: the value is back to {start_value!r} at "
                f"{version_label(candidates[probe], version_labels(ctx))}; "
                "the reported version is one change point, maybe not the only one"
            )
    return BisectReport(
        text, description, candidates[hi], start_value, end_value, len(steps), steps, n, warnings, labels, entered
    )


def resolve_chunk_id(ctx: Context, prefix: str) -> str:
    """The chunk id that ``prefix`` begins (as git takes a commit's prefix): any chunk the
    index ever held. Unknown or ambiguous is a NotFoundError that lists the candidates."""
    from ragtt.events import types as ev

    wanted = prefix.strip().casefold()
    if not wanted:
        raise NotFoundError("a chunk id (or a unique prefix of one) is needed; got an empty one")
    known: set[str] = set()
    for event in ctx.log.query(types=[ev.DOCUMENT_INGESTED]):
        known.update(event.payload.get("chunk_ids_added", []))
    known.update(ctx.table.chunk_sources(ctx.version))
    found = sorted(cid for cid in known if cid.startswith(wanted))
    if len(found) == 1:
        return found[0]
    if not found:
        raise NotFoundError(
            f"no chunk id starts with {prefix!r} in this project's history; chunk ids are hex, as "
            "the diff, lineage and query results print them (list them with proj.chunks())"
        )
    shown = ", ".join(found[:10]) + (f" and {len(found) - 10} more" if len(found) > 10 else "")
    raise NotFoundError(f"chunk id prefix {prefix!r} is ambiguous: {shown}; give more characters")


def entered_at(ctx: Context, kind: str, name: str) -> int | None:
    """The version where a source (``kind`` "source") or a chunk ("chunk") last entered the
    index, from the ingest events; None if it never did."""
    from ragtt.events import types as ev

    found = None
    for event in ctx.log.query(types=[ev.DOCUMENT_INGESTED]):
        p = event.payload
        if (kind == "source" and p.get("source") == name and p.get("status") == "added") or (
            kind == "chunk" and name in p.get("chunk_ids_added", [])
        ):
            found = event.index_version
    return found


def _evaluate(ctx: Context, text: str, plan: RetrievalPlan, version: int, generate: bool) -> ReplayResult:
    from ragtt.timetravel.run import execute

    run = execute(ctx, text, plan, version, generate=generate)
    gen = run.generation
    return ReplayResult(
        query_id="",
        text=text,
        index_version=version,
        config_id=ctx.config.config_id,
        chunks=run.chunks,
        answer=gen.answer if gen else None,
        model=gen.model if gen else None,
        latency_ms=run.latency_ms,
    )


def _data_versions(ctx: Context, start: int | None) -> list[int]:
    """Versions that changed the data (ingests, removals, re-embeds), from ``start`` on, that
    still exist (a prune deletes versions nothing retained needs)."""
    from ragtt.retention import deleted_versions

    gone = deleted_versions(ctx)
    versions = [v for v in ctx.log.versions.data_versions() if v not in gone]
    if start is not None:
        versions = [v for v in versions if v >= start]
        if start not in versions:
            versions.insert(0, start)
    return versions
