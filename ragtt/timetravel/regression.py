"""Golden-query regression gates: capture what good retrieval looks like, fail when it drifts.

``capture`` records, per query, the sources and chunk ids retrieved now and the plan used;
``run`` re-asks every query with that plan at the latest version and scores recall@k.
Exit codes: 0 pass, 1 drift (a query below the threshold), 2 usage or I/O error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt._html import BOX, STYLE, esc, table
from ragtt.errors import ConfigError
from ragtt.events.store import format_ts, utc_now
from ragtt.index.retrieve import RetrievalPlan
from ragtt.results import _Result

if TYPE_CHECKING:
    import polars as pl

    from ragtt.context import Context

__all__ = ["GoldenQuery", "GoldenSuite", "QueryOutcome", "Regression", "RegressionReport"]

EXIT_PASS, EXIT_DRIFT, EXIT_ERROR = 0, 1, 2


@dataclass(frozen=True)
class GoldenQuery(_Result):
    text: str
    expected_sources: list[str]
    expected_chunk_ids: list[str]


@dataclass(frozen=True)
class GoldenSuite(_Result):
    name: str
    created_at: str
    index_version: int
    config_id: str
    plan: dict[str, Any]
    queries: list[GoldenQuery]

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_dict(), indent=2, ensure_ascii=False), encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> GoldenSuite:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            return cls(name=data["name"], created_at=data["created_at"], index_version=int(data["index_version"]),
                       config_id=data["config_id"], plan=data["plan"],
                       queries=[GoldenQuery(**q) for q in data["queries"]])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"cannot read golden suite {path}: {exc}") from None


@dataclass(frozen=True)
class QueryOutcome(_Result):
    text: str
    status: str  # pass | fail | error
    source_recall: float | None
    chunk_recall: float | None
    missing_sources: list[str]
    query_id: str | None
    error: str | None = None


@dataclass(frozen=True)
class RegressionReport(_Result):
    suite: str
    index_version: int
    threshold: float
    outcomes: list[QueryOutcome] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(o.status == "pass" for o in self.outcomes)

    @property
    def exit_code(self) -> int:
        if any(o.status == "error" for o in self.outcomes):
            return EXIT_ERROR
        return EXIT_PASS if self.passed else EXIT_DRIFT

    def to_text(self) -> str:
        failed = [o for o in self.outcomes if o.status != "pass"]
        lines = [f"golden suite {self.suite!r} at v{self.index_version}: {len(self.outcomes) - len(failed)} of "
                 f"{len(self.outcomes)} passed (threshold {self.threshold}); exit {self.exit_code}"]
        for o in self.outcomes:
            if o.status == "error":
                lines.append(f"  ERROR {o.text!r}: {o.error}")
            else:
                lines.append(f"  {o.status.upper():<4} {o.text!r}: source recall {o.source_recall:.2f}, chunk recall "
                             f"{o.chunk_recall:.2f}" + (f"; missing {', '.join(o.missing_sources)}"
                                                         if o.missing_sources else ""))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def frame(self) -> pl.DataFrame:
        import polars as pl

        return pl.DataFrame([{k: getattr(o, k) for k in ("text", "status", "source_recall", "chunk_recall",
                                                          "query_id", "error")} for o in self.outcomes],
                            schema={"text": pl.String, "status": pl.String, "source_recall": pl.Float64,
                                    "chunk_recall": pl.Float64, "query_id": pl.String, "error": pl.String},
                            orient="row")

    def _repr_html_(self) -> str:
        rows = [(o.status, o.text, "" if o.source_recall is None else f"{o.source_recall:.2f}",
                 "" if o.chunk_recall is None else f"{o.chunk_recall:.2f}", o.error or ", ".join(o.missing_sources))
                for o in self.outcomes]
        return (f"{STYLE}{BOX}<b>Regression</b> {esc(self.suite)} exit {self.exit_code}"
                + table(["status", "query", "source recall", "chunk recall", "detail"], rows) + "</div>")


class Regression:
    """``proj.regression``: capture golden suites and run them as a gate."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    def capture(self, queries: list[str], name: str, *, top_k: int | None = None,
                mode: str | None = None) -> GoldenSuite:
        if isinstance(queries, str) or not queries:
            raise ConfigError("capture takes a non-empty list of query strings")
        plan = self._ctx.plan(top_k=top_k, mode=mode)
        golden = []
        for text in queries:
            _, result = self._run(text, plan)
            golden.append(GoldenQuery(text, sorted({c.source for c in result}), [c.chunk_id for c in result]))
        return GoldenSuite(name, format_ts(utc_now()), self._ctx.version, self._ctx.config.config_id,
                           plan.to_dict(), golden)

    def run(self, suite: GoldenSuite | str | Path, threshold: float = 0.8) -> RegressionReport:
        if not isinstance(suite, GoldenSuite):
            suite = GoldenSuite.load(suite)
        if not 0 <= threshold <= 1:
            raise ConfigError(f"threshold must be in [0, 1]; got {threshold}")
        plan = RetrievalPlan.from_dict(suite.plan)
        outcomes = []
        for golden in suite.queries:
            try:  # one failing query never stops the rest
                outcomes.append(self._score(golden, plan, threshold))
            except Exception as exc:
                reason = f"{type(exc).__name__}: {exc}"
                outcomes.append(QueryOutcome(golden.text, "error", None, None, [], None, reason))
        report = RegressionReport(suite.name, self._ctx.version, threshold, outcomes)
        from ragtt.events import types as ev
        from ragtt.events.store import Event

        self._ctx.log.append(Event(ev.REGRESSION_COMPLETED, {
            "suite": suite.name, "threshold": threshold, "exit_code": report.exit_code,
            "passed": sum(o.status == "pass" for o in outcomes), "total": len(outcomes),
        }, index_version=report.index_version))
        return report

    def _run(self, text: str, plan: RetrievalPlan) -> tuple[str, list[Any]]:
        from ragtt._hashing import time_ordered_id
        from ragtt.timetravel.run import execute, record

        query_id = time_ordered_id()
        run = execute(self._ctx, text, plan, self._ctx.version, generate=False)
        record(self._ctx, run, query_id, prefix="", config_id=self._ctx.config.config_id,
               extra={"purpose": "regression"})
        return query_id, run.chunks

    def _score(self, golden: GoldenQuery, plan: RetrievalPlan, threshold: float) -> QueryOutcome:
        query_id, chunks = self._run(golden.text, plan)
        sources = {c.source for c in chunks}
        ids = {c.chunk_id for c in chunks}
        source_recall = _recall(golden.expected_sources, sources)
        chunk_recall = _recall(golden.expected_chunk_ids, ids)
        status = "pass" if source_recall >= threshold else "fail"
        return QueryOutcome(golden.text, status, source_recall, chunk_recall,
                            sorted(set(golden.expected_sources) - sources), query_id)


def _recall(expected: list[str], got: set[str]) -> float:
    return 1.0 if not expected else len(set(expected) & got) / len(set(expected))
