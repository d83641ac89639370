"""Golden-query regression gates: capture what good retrieval looks like, fail when it drifts.

``capture`` records, per query, the sources, chunk ids and passages (id, source, text hash,
text) retrieved at a version, and the plan used; ``run`` re-asks every query with that plan
at the latest version and scores three recalls: sources, chunk ids, and passages (matched by
content, see ``ragtt.timetravel.golden``). One of them gates, chosen by ``match``:

* a number in (0, 1] (default 0.8): passage recall, a passage found when that share of it is
  retrieved; ``"passages"`` is the same at 0.8;
* ``"chunks"``: chunk-id recall; ``"sources"``: source recall (the gate before passages).

A suite saved before passages were recorded has none: its queries gate on source recall,
whatever ``match`` says, and the report says so (recapture to gate on passages).
Exit codes: 0 pass, 1 drift (a query below the threshold), 2 usage or I/O error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt._html import BOX, STYLE, esc, table
from ragtt.errors import ConfigError
from ragtt.events.store import format_ts, utc_now
from ragtt.index.retrieve import RetrievalPlan
from ragtt.results import Result
from ragtt.timetravel.golden import DEFAULT_MATCH, GoldenPassage, PassageRef, score_passages
from ragtt.values import counted

if TYPE_CHECKING:
    import polars as pl

    from ragtt.context import At, Context

__all__ = ["GoldenQuery", "GoldenSuite", "QueryOutcome", "Regression", "RegressionReport", "resolve_match"]

EXIT_PASS, EXIT_DRIFT, EXIT_ERROR = 0, 1, 2
GATES = ("passages", "chunks", "sources")


@dataclass(frozen=True)
class GoldenQuery(Result):
    text: str
    expected_sources: list[str]
    expected_chunk_ids: list[str]
    expected_passages: list[GoldenPassage] = field(default_factory=list)
    reference: str | None = None  # a reference answer (``ragtt eval`` scores answers against it)
    must_contain: list[str] = field(default_factory=list)  # strings the answer must hold

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GoldenQuery:
        return cls(
            str(data["text"]),
            list(data["expected_sources"]),
            list(data["expected_chunk_ids"]),
            [GoldenPassage.from_dict(p) for p in data.get("expected_passages") or []],
            data.get("reference"),
            list(data.get("must_contain") or []),
        )


@dataclass(frozen=True)
class GoldenSuite(Result):
    name: str
    created_at: str
    index_version: int
    config_id: str
    plan: dict[str, Any]
    queries: list[GoldenQuery]

    def __repr__(self) -> str:
        """One line, not the thousands of characters of every expected chunk id and passage."""
        sources = len({s for q in self.queries for s in q.expected_sources})
        passages = sum(len(q.expected_passages) for q in self.queries)
        return (
            f"GoldenSuite({self.name!r}: {len(self.queries)} golden queries captured at v{self.index_version}, "
            f"expecting {passages} passages from {sources} sources)"
        )

    def _repr_html_(self) -> str:
        rows = [
            (q.text, ", ".join(q.expected_sources), len(q.expected_chunk_ids), len(q.expected_passages))
            for q in self.queries
        ]
        return (
            f"{STYLE}{BOX}<b>Golden suite</b> {esc(self.name)}: "
            f"{counted(len(self.queries), 'query', 'queries')} captured at "
            f"v{self.index_version}" + table(["query", "expected sources", "chunks", "passages"], rows) + "</div>"
        )

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_dict(), indent=2, ensure_ascii=False), encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> GoldenSuite:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            return cls(
                name=data["name"],
                created_at=data["created_at"],
                index_version=int(data["index_version"]),
                config_id=data["config_id"],
                plan=data["plan"],
                queries=[GoldenQuery.from_dict(q) for q in data["queries"]],
            )
        except KeyError as exc:  # str() of a KeyError is the bare key: "'name'"
            raise ConfigError(f"cannot read golden suite {path}: it has no {exc} field") from None
        except (OSError, ValueError, TypeError) as exc:
            raise ConfigError(f"cannot read golden suite {path}: {exc}") from None


@dataclass(frozen=True)
class QueryOutcome(Result):
    text: str
    status: str  # pass | fail | error
    source_recall: float | None
    chunk_recall: float | None
    missing_sources: list[str]
    query_id: str | None
    error: str | None = None
    passage_recall: float | None = None
    gated_on: str = "sources"  # passages | chunks | sources: the recall the threshold judged
    missing_passages: list[PassageRef] = field(default_factory=list)
    replaced_by: list[PassageRef] = field(default_factory=list)  # retrieved, carrying no golden passage


@dataclass(frozen=True)
class RegressionReport(Result):
    suite: str
    index_version: int
    threshold: float
    outcomes: list[QueryOutcome] = field(default_factory=list)
    match: float | str = DEFAULT_MATCH  # the similarity a passage needs, or "chunks" / "sources"

    @property
    def passed(self) -> bool:
        return all(o.status == "pass" for o in self.outcomes)

    @property
    def exit_code(self) -> int:
        if any(o.status == "error" for o in self.outcomes):
            return EXIT_ERROR
        return EXIT_PASS if self.passed else EXIT_DRIFT

    def to_text(self, at: str | None = None) -> str:
        """The report as the CLI prints it; ``at`` is the version's label ("release-2 (v4)")
        when the caller knows it."""
        failed = [o for o in self.outcomes if o.status != "pass"]
        where = at if at is not None else f"v{self.index_version}"
        lines = [
            f"golden suite {self.suite!r} at {where}: {len(self.outcomes) - len(failed)} of "
            f"{len(self.outcomes)} passed (threshold {self.threshold}, match {self.match}); exit {self.exit_code}"
        ]
        if self.match != "sources" and any(o.gated_on == "sources" for o in self.outcomes):
            lines.append(
                "  note: queries captured without passages gate on source recall; recapture the suite "
                "to gate on passages"
            )
        for o in self.outcomes:
            if o.status == "error":
                lines.append(f"  ERROR {o.text!r}: {o.error}")
                continue
            recalls = ", ".join(
                f"{name} recall {_fmt(value)}" + ("*" if name == o.gated_on else "")
                for name, value in (
                    ("passage", o.passage_recall),
                    ("chunk", o.chunk_recall),
                    ("source", o.source_recall),
                )
            )
            gated = {"passages": "passage", "chunks": "chunk", "sources": "source"}[o.gated_on]
            lines.append(
                f"  {o.status.upper():<4} {o.text!r}: {recalls} (* gated: {gated} recall)"
                + (f"; missing sources {', '.join(o.missing_sources)}" if o.missing_sources else "")
            )
            if o.status == "fail":
                lines += [f"       missing passage {p}" for p in o.missing_passages]
                lines += [f"       replaced by {p}" for p in o.replaced_by]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def frame(self) -> pl.DataFrame:
        import polars as pl

        columns = ("text", "status", "gated_on", "passage_recall", "chunk_recall", "source_recall", "query_id", "error")
        return pl.DataFrame(
            [{k: getattr(o, k) for k in columns} for o in self.outcomes],
            schema={
                "text": pl.String,
                "status": pl.String,
                "gated_on": pl.String,
                "passage_recall": pl.Float64,
                "chunk_recall": pl.Float64,
                "source_recall": pl.Float64,
                "query_id": pl.String,
                "error": pl.String,
            },
            orient="row",
        )

    def _repr_html_(self) -> str:
        rows = [
            (
                o.status,
                o.text,
                o.gated_on,
                _fmt(o.passage_recall),
                _fmt(o.chunk_recall),
                _fmt(o.source_recall),
                o.error
                or "; ".join(
                    [f"missing {p}" for p in o.missing_passages]
                    + [f"replaced by {p}" for p in o.replaced_by]
                    + [f"missing source {s}" for s in o.missing_sources]
                ),
            )
            for o in self.outcomes
        ]
        return (
            f"{STYLE}{BOX}<b>Regression</b> {esc(self.suite)} exit {self.exit_code}"
            + table(["status", "query", "gated on", "passage recall", "chunk recall", "source recall", "detail"], rows)
            + "</div>"
        )


class Regression:
    """``proj.regression``: capture golden suites and run them as a gate."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    def capture(
        self,
        queries: list[str],
        name: str,
        *,
        top_k: int | None = None,
        mode: str | None = None,
        at: At | None = None,
        references: list[str | None] | None = None,
        must_contain: list[list[str]] | None = None,
    ) -> GoldenSuite:
        """Record what ``queries`` retrieve now (or ``at`` a past version, label or datetime).

        ``references`` (a reference answer per query) and ``must_contain`` (strings each
        answer must hold) go with the queries, in their order, for ``proj.evaluate``.
        """
        if isinstance(queries, str) or not queries:
            raise ConfigError("capture takes a non-empty list of query strings")
        refs = _aligned(references, queries, "references", None)
        musts = _aligned(must_contain, queries, "must_contain", [])
        plan = self._ctx.plan(top_k=top_k, mode=mode)
        version = self._ctx.version if at is None else self._ctx.resolve(at)
        golden = []
        for text, reference, must in zip(queries, refs, musts, strict=True):
            _, result = self._run(text, plan, version)
            golden.append(
                GoldenQuery(
                    text,
                    sorted({c.source for c in result}),
                    [c.chunk_id for c in result],
                    [GoldenPassage.from_chunk(c) for c in result],
                    reference or None,
                    list(must or []),
                )
            )
        return GoldenSuite(name, format_ts(utc_now()), version, self._ctx.config.config_id, plan.to_dict(), golden)

    def run(
        self,
        suite: GoldenSuite | str | Path,
        threshold: float = 0.8,
        match: float | str = DEFAULT_MATCH,
        *,
        at: At | None = None,
    ) -> RegressionReport:
        """Re-ask the suite at the latest version (or ``at`` a version, label or datetime);
        ``match`` picks the gate (see the module docstring)."""
        if not isinstance(suite, GoldenSuite):
            suite = GoldenSuite.load(suite)
        if not 0 <= threshold <= 1:
            raise ConfigError(f"threshold must be in [0, 1]; got {threshold}")
        gate, similarity = resolve_match(match)
        version = self._ctx.version if at is None else self._ctx.resolve(at)
        plan = RetrievalPlan.from_dict(suite.plan)
        texts: dict[str, str | None] = {}  # each source's current text, read once per run
        outcomes = []
        for golden in suite.queries:
            try:  # one failing query never stops the rest
                outcomes.append(self._score(golden, plan, version, threshold, gate, similarity, texts))
            except Exception as exc:
                reason = f"{type(exc).__name__}: {exc}"
                outcomes.append(QueryOutcome(golden.text, "error", None, None, [], None, reason, gated_on=gate))
        report = RegressionReport(suite.name, version, threshold, outcomes, similarity if gate == "passages" else gate)
        from ragtt.events import types as ev
        from ragtt.events.store import Event

        self._ctx.log.append(
            Event(
                ev.REGRESSION_COMPLETED,
                {
                    "suite": suite.name,
                    "threshold": threshold,
                    "exit_code": report.exit_code,
                    "passed": sum(o.status == "pass" for o in outcomes),
                    "total": len(outcomes),
                    "match": report.match,
                },
                index_version=report.index_version,
            )
        )
        return report

    def _run(self, text: str, plan: RetrievalPlan, version: int | None = None) -> tuple[str, list[Any]]:
        from ragtt._hashing import time_ordered_id
        from ragtt.timetravel.run import execute, record

        query_id = time_ordered_id()
        run = execute(self._ctx, text, plan, self._ctx.version if version is None else version, generate=False)
        record(
            self._ctx, run, query_id, prefix="", config_id=self._ctx.config.config_id, extra={"purpose": "regression"}
        )
        return query_id, run.chunks

    def _score(
        self,
        golden: GoldenQuery,
        plan: RetrievalPlan,
        version: int,
        threshold: float,
        gate: str,
        similarity: float,
        texts: dict[str, str | None],
    ) -> QueryOutcome:
        query_id, chunks = self._run(golden.text, plan, version)

        def source_text(source: str) -> str | None:
            if source not in texts:
                texts[source] = _text_at(self._ctx, version, source)
            return texts[source]

        return score_query(golden, chunks, query_id, threshold, gate, source_text, similarity)


def score_query(
    golden: GoldenQuery,
    chunks: list[Any],
    query_id: str | None,
    threshold: float,
    gate: str,
    source_text: Callable[[str], str | None],
    similarity: float = DEFAULT_MATCH,
) -> QueryOutcome:
    """One golden query's outcome from what it retrieved now."""
    sources = {c.source for c in chunks}
    source_recall = _recall(golden.expected_sources, sources)
    chunk_recall = _recall(golden.expected_chunk_ids, {c.chunk_id for c in chunks})
    passages = (
        score_passages(golden.expected_passages, chunks, source_text, similarity) if golden.expected_passages else None
    )
    if gate == "passages" and passages is None:
        gate = "sources"  # captured before passages were recorded: the old gate
    recall = {"passages": passages.recall if passages else None, "chunks": chunk_recall, "sources": source_recall}[gate]
    assert recall is not None
    return QueryOutcome(
        golden.text,
        "pass" if recall >= threshold else "fail",
        source_recall,
        chunk_recall,
        sorted(set(golden.expected_sources) - sources),
        query_id,
        passage_recall=passages.recall if passages else None,
        gated_on=gate,
        missing_passages=passages.missing if passages else [],
        replaced_by=passages.replaced_by if passages else [],
    )


def resolve_match(match: float | str) -> tuple[str, float]:
    """(gate, passage similarity) from ``match``: a number in (0, 1], or passages | chunks | sources."""
    if isinstance(match, str) and match in GATES:
        return match, DEFAULT_MATCH
    if isinstance(match, str):
        try:
            match = float(match)
        except ValueError:
            raise ConfigError(
                f"match must be a similarity in (0, 1] or one of {', '.join(GATES)}; got {match!r}"
            ) from None
    if isinstance(match, bool) or not isinstance(match, int | float) or not 0 < match <= 1:
        raise ConfigError(f"match must be a similarity in (0, 1] or one of {', '.join(GATES)}; got {match!r}")
    return "passages", float(match)


def _aligned(values: list[Any] | None, queries: list[str], name: str, empty: Any) -> list[Any]:
    if values is None or not values:
        return [empty] * len(queries)
    if len(values) != len(queries):
        raise ConfigError(f"{name} gives {len(values)} values for {len(queries)} queries: give one per query, in order")
    return list(values)


def _text_at(ctx: Context, version: int, source: str) -> str | None:
    """The parsed text of ``source`` at ``version``; None when it is not in the index then."""
    doc_key = ctx.table.doc_key_of(version, source)
    row = None if doc_key is None else ctx.log.documents.get(doc_key)
    return None if row is None else str(row.text)


def _recall(expected: list[str], got: set[str]) -> float:
    return 1.0 if not expected else len(set(expected) & got) / len(set(expected))


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"
