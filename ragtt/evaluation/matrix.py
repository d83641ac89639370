"""``HistoryMatrix``: a question set's metrics at each evaluated version, and where each question broke.

A cell is one question at one column (a version, named by its snapshot label when it has
one); ``cells[metric][question][column]`` is its value, None when the metric could not be
computed there (no references) or the judge's verdict did not parse (then ``unparseable``
holds the raw reply). ``query_ids`` name each cell's logged run: replay, diff or trace it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ragtt._html import BOX, STYLE, esc
from ragtt.errors import ConfigError, NotFoundError
from ragtt.results import TRANSIENT, Result
from ragtt.values import counted, shorten

if TYPE_CHECKING:
    import polars as pl

__all__ = ["WORSE_THRESHOLD", "Column", "Fall", "Gate", "HistoryMatrix"]

_TEXT_ROWS, _TEXT_COLUMNS = 20, 8
_TEXT_LABEL = 16  # the widest column label the text view prints whole
WORSE_THRESHOLD = 0.5
"""The got-worse threshold: what the views call "got worse" (``regressions()``' default), a
level a question's metric fell below; not the CI gate's ``threshold``, how far it may fall."""
_HTML_ROWS, _HTML_COLUMNS = 100, 60
# A fall of exactly the threshold passes the gate: 0.8 - 0.7 is 0.10000000000000009 in floats.
_FALL_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Column(Result):
    """One evaluated version: its number, the snapshot label naming it (None: none), and its
    time (ISO 8601, UTC) as the Timeline places it: its ingest's ``as_of`` date where one was
    given, else when it was committed, never later than a later version's."""

    version: int
    label: str | None
    at: str

    @property
    def name(self) -> str:
        return self.label or f"v{self.version}"


@dataclass(frozen=True)
class Gate(Result):
    """The CI gate: which questions' ``metric`` at ``label`` fell below the baseline's by more than ``threshold``."""

    metric: str
    baseline_version: int
    baseline_label: str | None
    version: int
    label: str | None
    threshold: float
    fallen: list[dict[str, Any]]  # question_id, question, baseline, now, query_id

    @property
    def passed(self) -> bool:
        return not self.fallen

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    def to_text(self) -> str:
        base = self.baseline_label or f"v{self.baseline_version}"
        now = self.label or f"v{self.version}"
        head = (
            f"gate on {self.metric}: {counted(len(self.fallen), 'question')} fell more than {self.threshold:g} "
            f"(the gate's threshold) below {base} (the baseline) at {now}; exit {self.exit_code}"
        )
        return "\n".join(
            [head]
            + [
                f"  FELL {f['question']!r}: {f['baseline']:.3f} -> {f['now']:.3f} ({f['query_id']})"
                for f in self.fallen
            ]
        )


@dataclass(frozen=True)
class Fall:
    """A regression to explain (``HistoryMatrix.explain``): a question's ``metric`` fell between two of its runs."""

    question_id: str
    metric: str
    good_query_id: str
    bad_query_id: str


class Explainer(Protocol):
    """What explains a matrix (``ragtt.evaluation.reasons.Reasons``): why each fall happened, and
    where the reference passages of a question that never found them are ((question id, query id))."""

    def __call__(self, falls: list[Fall]) -> list[str | None]: ...

    def never_found(self, misses: list[tuple[str, str]]) -> list[str | None]: ...


@dataclass(frozen=True, eq=False)
class HistoryMatrix(Result):
    """``proj.evaluate(dataset)``: ``frame()``, ``wide(metric)``, ``regressions()``, ``to_dict()``."""

    dataset: str
    evaluation_id: str
    plan: dict[str, Any]
    metrics: list[str]
    question_ids: list[str]
    questions: list[str]
    columns: list[Column]
    cells: dict[str, list[list[float | None]]]
    query_ids: list[list[str | None]]
    unparseable: list[dict[str, Any]] = field(default_factory=list)
    computed_versions: int = 0  # versions this call searched; the rest were read back from the log
    reused_versions: int = 0
    gate: Gate | None = None
    # the regressions to explain -> why each fell (``ragtt.evaluation.reasons``); None: no reasons
    explain: Explainer | None = field(default=None, metadata=TRANSIENT, repr=False)
    # the Project it was evaluated on (``proj.evaluate`` sets it), so a view can draw it (``to_html``)
    project: Any = field(default=None, metadata=TRANSIENT, repr=False)

    def __repr__(self) -> str:
        return (
            f"HistoryMatrix({self.dataset!r}, {counted(len(self.questions), 'question')} x "
            f"{counted(len(self.columns), 'version')}, "
            f"metrics {', '.join(self.metrics) or 'none'})"
        )

    def to_dict(self, *, regressions: bool | Sequence[str] = True) -> dict[str, Any]:
        """The wire format (``ragtt eval --json``, ``POST /evaluate``, the MCP tool). ``regressions``:
        every regression the text's "got worse" lists (the gate's metric, else context_recall,
        below ``WORSE_THRESHOLD``), each with its reason, and every question ``never_found()``
        lists, each with where its passages are, computed once per matrix (about as long as a
        deeper search per question that lost or never found a passage); metric names: every
        regression of each below ``WORSE_THRESHOLD``, one metric after the other (the widget's
        got-worse lists); False: neither, for a view that draws the cells only (``/ui``)."""
        return {
            "dataset": self.dataset,
            "evaluation_id": self.evaluation_id,
            "plan": self.plan,
            "metrics": list(self.metrics),
            "questions": [{"id": i, "question": q} for i, q in zip(self.question_ids, self.questions, strict=True)],
            "columns": [c.to_dict() for c in self.columns],
            "cells": {m: [list(row) for row in rows] for m, rows in self.cells.items()},
            "query_ids": [list(row) for row in self.query_ids],
            "unparseable": [dict(u) for u in self.unparseable],
            "computed_versions": self.computed_versions,
            "reused_versions": self.reused_versions,
            "gate": self.gate.to_dict() if self.gate is not None else None,
        } | (
            {
                "regressions": self._worse_rows if regressions is True else self._worse_of(regressions),
                "never_found": self._never_rows,
            }
            if regressions
            else {}
        )

    @functools.cached_property
    def _reasons(self) -> dict[Fall, str | None]:
        """The reasons ``explain`` gave, by regression: each is worked out once per matrix, however
        many views (the text, the page, ``to_dict()``, ``regressions()``) ask for it."""
        return {}

    @functools.cached_property
    def _worse_rows(self) -> list[dict[str, Any]]:
        """The views' "got worse" (``_worse()``) as ``to_dict()`` carries it: every regression, each with
        its reason (once per matrix: a reason reads the log and the index)."""
        worse = self._worse(explained=None)
        return [] if worse is None else worse[2].to_dicts()

    @functools.cached_property
    def _never_rows(self) -> list[dict[str, Any]]:
        """``never_found()`` of context_recall as ``to_dict()`` carries it (none without that metric)."""
        return self.never_found().to_dicts() if "context_recall" in self.metrics else []

    def _worse_of(self, metrics: Sequence[str]) -> list[dict[str, Any]]:
        return [row for metric in metrics for row in self.regressions(metric, WORSE_THRESHOLD).to_dicts()]

    # -- frames ----------------------------------------------------------------------------------

    def frame(self) -> pl.DataFrame:
        """Long: one row per computed (or unparseable) cell and metric, in question, version,
        metric order; ``unparseable`` holds the judge's raw reply where its verdict did not parse."""
        import polars as pl

        raw = {(u["question_id"], u["version"], u["metric"]): u["raw"] for u in self.unparseable}
        rows = []
        for qi, (qid, question) in enumerate(zip(self.question_ids, self.questions, strict=True)):
            for ci, col in enumerate(self.columns):
                for metric in self.metrics:
                    value = self.cells[metric][qi][ci]
                    bad = raw.get((qid, col.version, metric))
                    if value is None and bad is None:
                        continue
                    rows.append(
                        (qid, question, col.version, col.label, col.at, metric, value, self.query_ids[qi][ci], bad)
                    )
        schema = {
            "question_id": pl.String,
            "question": pl.String,
            "version": pl.Int64,
            "label": pl.String,
            "at": pl.String,
            "metric": pl.String,
            "value": pl.Float64,
            "query_id": pl.String,
            "unparseable": pl.String,
        }
        frame = pl.DataFrame(rows, schema=schema, orient="row")
        return frame.with_columns(pl.col("at").str.to_datetime("%Y-%m-%dT%H:%M:%S%.fZ", time_zone="UTC"))

    def wide(self, metric: str) -> pl.DataFrame:
        """``metric`` as questions x columns (named by label, else ``v<version>``)."""
        import polars as pl

        rows = self._values(metric)
        data: dict[str, Any] = {"question_id": self.question_ids, "question": self.questions}
        for ci, col in enumerate(self.columns):
            data[col.name] = [row[ci] for row in rows]
        return pl.DataFrame(
            data, schema={k: pl.String if k in ("question_id", "question") else pl.Float64 for k in data}
        )

    def regressions(self, metric: str = "context_recall", threshold: float = WORSE_THRESHOLD) -> pl.DataFrame:
        """Each time a question's ``metric`` fell below ``threshold`` after being at or above it:
        the last good and first bad columns, their runs, and the ``reason``
        (``ragtt.evaluation.reasons``): what happened to the reference passages the good run found
        (edited out, its source removed, ranked below the top-k), the relevant ids that left, the
        strings the answer lost, else the lineage sentence between the two runs."""
        return self._regressions(metric, threshold, explained=None)

    def _regressions(self, metric: str, threshold: float, *, explained: int | None) -> pl.DataFrame:
        """``regressions()``, with the lineage reason of only the first ``explained`` (all: None):
        each reason reads the log, and a view shows a few."""
        import polars as pl

        rows: list[list[Any]] = []
        for qi, values in enumerate(self._values(metric)):
            good: int | None = None
            for ci, value in enumerate(values):
                if value is None:
                    continue
                if value >= threshold:
                    good = ci
                elif good is not None:
                    rows.append(self._regression(qi, good, ci, metric, threshold))
                    good = None
        # the reasons of the first ``explained``, asked together (their runs read in one go)
        falls = [
            (row, Fall(row[0], metric, row[10], row[11]))
            for row in rows[:explained]
            if row[10] is not None and row[11] is not None
        ]
        if self.explain is not None and falls:
            known = self._reasons
            asked = list(dict.fromkeys(f for _, f in falls if f not in known))
            if asked:
                known.update(zip(asked, self.explain(asked), strict=True))
            for row, fall in falls:
                row[-1] = known[fall]
        schema = {
            "question_id": pl.String,
            "question": pl.String,
            "metric": pl.String,
            "threshold": pl.Float64,
            "last_good_version": pl.Int64,
            "last_good_label": pl.String,
            "last_good_value": pl.Float64,
            "first_bad_version": pl.Int64,
            "first_bad_label": pl.String,
            "first_bad_value": pl.Float64,
            "last_good_query_id": pl.String,
            "first_bad_query_id": pl.String,
            "reason": pl.String,
        }
        return pl.DataFrame(rows, schema=schema, orient="row")

    def never_found(self, metric: str = "context_recall") -> pl.DataFrame:
        """Each question whose ``metric`` is 0 at every evaluated version where it was computed
        (never found, so ``regressions()`` has nothing to say), at the last of those versions:
        its run and ``reason``, where its missed reference passages are there (their source and
        rank in a search 50 deep with the run's plan, or that no document holds them) and, when
        no chunk holds one whole, the chunks it is split across (a chunking matter)."""
        return self._never_found(metric, explained=None)

    def _never_found(self, metric: str, *, explained: int | None) -> pl.DataFrame:
        import polars as pl

        rows: list[list[Any]] = []
        for qi, values in enumerate(self._values(metric)):
            scored = [ci for ci, v in enumerate(values) if v is not None]
            if scored and all(values[ci] == 0 for ci in scored):
                c = self.columns[scored[-1]]
                query_id = self.query_ids[qi][scored[-1]]
                rows.append([self.question_ids[qi], self.questions[qi], metric, c.version, c.label, query_id, None])
        asked = [row for row in rows[:explained] if row[5] is not None]
        if self.explain is not None and asked and metric in ("context_recall", "context_precision"):
            for row, reason in zip(asked, self.explain.never_found([(r[0], r[5]) for r in asked]), strict=True):
                row[-1] = reason
        schema = {
            "question_id": pl.String,
            "question": pl.String,
            "metric": pl.String,
            "version": pl.Int64,
            "label": pl.String,
            "query_id": pl.String,
            "reason": pl.String,
        }
        return pl.DataFrame(rows, schema=schema, orient="row")

    @functools.cached_property
    def _never_lines(self) -> list[str]:
        """The text and HTML views' "never found": the questions at 0 at every version, and where their
        passages are, once per matrix (``ragtt eval --out m.html`` shows it in the page and prints it)."""
        if "context_recall" not in self.metrics:
            return []
        found = self._never_found("context_recall", explained=_TEXT_ROWS)
        if found.is_empty():
            return []
        lines = ["never found (context_recall 0 at every evaluated version; never_found() has them all):"]
        for r in found.head(_TEXT_ROWS).iter_rows(named=True):
            lines.append(f"  {r['question'][:60]}: at {r['label'] or 'v' + str(r['version'])} (v{r['version']})")
            if r["reason"]:
                lines.append(f"    where: {r['reason']}")
        if found.height > _TEXT_ROWS:
            lines.append(f"  ... {found.height - _TEXT_ROWS} more")
        return lines

    def against(self, baseline: int | str, *, metric: str | None = None, threshold: float = 0.0) -> HistoryMatrix:
        """This matrix with a ``gate``: the questions whose ``metric`` at the last column fell below
        the ``baseline`` column's (a version or a label) by more than ``threshold``."""
        metric = metric or ("context_recall" if "context_recall" in self.metrics else (self.metrics or [""])[0])
        rows = self._values(metric)
        base = next((i for i, c in enumerate(self.columns) if baseline in (c.label, c.version, str(c.version))), None)
        if base is None:
            raise NotFoundError(f"the baseline {baseline!r} is not one of the evaluated columns")
        last = len(self.columns) - 1
        fallen = []
        for qi, row in enumerate(rows):
            then, now = row[base], row[last]
            if then is not None and now is not None and then - now > threshold + _FALL_TOLERANCE:
                fallen.append(
                    {
                        "question_id": self.question_ids[qi],
                        "question": self.questions[qi],
                        "baseline": then,
                        "now": now,
                        "query_id": self.query_ids[qi][last],
                    }
                )
        b, n = self.columns[base], self.columns[last]
        return dataclasses.replace(
            self, gate=Gate(metric, b.version, b.label, n.version, n.label, float(threshold), fallen)
        )

    def _values(self, metric: str) -> list[list[float | None]]:
        if metric not in self.cells:
            raise ConfigError(
                f"this matrix has no {metric!r}; it has {', '.join(self.metrics) or 'no metric'} "
                "(a metric with no references in the dataset is not computed)"
            )
        return self.cells[metric]

    def _regression(self, qi: int, good: int, bad: int, metric: str, threshold: float) -> list[Any]:
        """A ``regressions()`` row, its reason (the last) still None."""
        g, b = self.columns[good], self.columns[bad]
        values = self.cells[metric][qi]
        return [
            self.question_ids[qi],
            self.questions[qi],
            metric,
            float(threshold),
            g.version,
            g.label,
            values[good],
            b.version,
            b.label,
            values[bad],
            self.query_ids[qi][good],
            self.query_ids[qi][bad],
            None,
        ]

    # -- text and HTML ---------------------------------------------------------------------------

    def to_text(self) -> str:
        searched = counted(self.computed_versions, "version")
        lines = [f"{self!r}: {searched} searched now, {self.reused_versions} read back from the log"]
        shown = self.columns[-_TEXT_COLUMNS:]
        offset = len(self.columns) - len(shown)
        # a column is as wide as its label (up to a bound): "flask-2.0.3" and "flask-2.0.1" must differ
        widths = [max(6, min(len(c.name), _TEXT_LABEL)) for c in shown]
        for metric in self.metrics:
            rows = self.cells[metric]
            lines.append(
                f"{metric}" + (f" (last {len(shown)} of {counted(len(self.columns), 'version')})" if offset else "")
            )
            lines.append(
                "  " + " ".join(f"{shorten(c.name, w):>{w}}" for c, w in zip(shown, widths, strict=True)) + "  question"
            )
            for qi, row in enumerate(rows[:_TEXT_ROWS]):
                cells = " ".join(f"{_fmt(v):>{w}}" for v, w in zip(row[offset:], widths, strict=True))
                lines.append(f"  {cells}  {self.questions[qi][:60]}")
            if len(rows) > _TEXT_ROWS:
                lines.append(f"  ... {len(rows) - _TEXT_ROWS} more questions (frame() has them all)")
        lines.extend(self._worse_lines)
        lines.extend(self._never_lines)
        if self.unparseable:
            lines.append(f"{counted(len(self.unparseable), 'judge verdict')} did not parse (see .unparseable)")
        if self.gate is not None:
            lines.append(self.gate.to_text())
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def _worse(self, *, explained: int | None = _TEXT_ROWS) -> tuple[str, float, Any] | None:
        """The default ``regressions()`` (the gate's metric, else context_recall, else the first
        metric's, below ``WORSE_THRESHOLD``), for the text and HTML views (which explain the
        ``_TEXT_ROWS`` they print) and ``to_dict()`` (every one): which questions got worse,
        since when, and why."""
        if not self.metrics:
            return None
        metric = "context_recall" if "context_recall" in self.metrics else self.metrics[0]
        metric = self.gate.metric if self.gate is not None else metric
        return metric, WORSE_THRESHOLD, self._regressions(metric, WORSE_THRESHOLD, explained=explained)

    @functools.cached_property
    def _worse_lines(self) -> list[str]:
        """The views' "got worse" list, once per matrix (``ragtt eval --out m.html`` shows it in the
        page and prints it)."""
        worse = self._worse()
        if worse is None:
            return []
        metric, threshold, found = worse
        if found.is_empty():
            return [
                f"got worse: no question's {metric} fell below {threshold} (the got-worse threshold) after being "
                "at or above it"
            ]
        lines = [f"got worse ({metric} fell below {threshold}, the got-worse threshold; regressions() has them all):"]
        for r in found.head(_TEXT_ROWS).iter_rows(named=True):
            good = r["last_good_label"] or f"v{r['last_good_version']}"
            bad = r["first_bad_label"] or f"v{r['first_bad_version']}"
            lines.append(
                f"  {r['question'][:60]}: {_fmt(r['last_good_value'])} at {good} (v{r['last_good_version']}), "
                f"{_fmt(r['first_bad_value'])} from {bad} (v{r['first_bad_version']})"
            )
            if r["reason"]:
                lines.append(f"    why: {r['reason']}")
        if found.height > _TEXT_ROWS:
            lines.append(f"  ... {found.height - _TEXT_ROWS} more")
        return lines

    def to_html(
        self,
        proj: Any = None,
        *,
        metric: str | None = None,
        embed_limit: int | None = None,
        embed_timelines: bool = True,
    ) -> str:
        """The interactive heatmap as one self-contained HTML page that works offline (a file
        opened from disk: no server, no network): the HistoryMatrix widget, its metric picker
        and hover, and in its state what a click shows, each changed cell's ChunkDiff against
        the question's previous evaluated column and (``embed_timelines``) each question's
        Timeline, within ``embed_limit`` bytes (default ``ragtt.views.history_matrix.EMBED_LIMIT``:
        the most changed cells first; a click past it says so), and the "got worse" list of each
        metric (the picked one's shows); below it, the "never found" list. Computing what a click
        shows takes at least as long as evaluating the matrix again.
        ``proj``: the project it was evaluated on, open (default: the one ``proj.evaluate`` set)."""
        from ragtt.views import history_matrix as view

        proj = proj if proj is not None else self.project
        if proj is None:
            raise ConfigError(
                "this HistoryMatrix does not know its project: pass the one it was evaluated on, matrix.to_html(proj)"
            )
        # the reasons below the cells ("got worse") read the project the matrix was evaluated on
        closed = next((p for p in (proj, self.project) if p is not None and p.closed), None)
        if closed is not None:
            raise ConfigError(
                f"the project this HistoryMatrix was evaluated on ({closed.path}) is closed: write the page "
                "before it closes, or reopen it (ragtt.Project.open) and evaluate again (proj.evaluate reads "
                "the matrix back from the log, searching nothing)"
            )
        head = (
            f"{STYLE}{BOX}<div class='ragtt-page-head'><h1>{esc(self.dataset)}</h1>"
            f"<p>ragtt evaluation {esc(self.evaluation_id)}: hover a cell for its value, click it for the diff with "
            "the question's previous evaluated version, click a question for its timeline</p></div></div>"
        )
        foot = f"{BOX}<div class='ragtt-page-foot'>{self._notes_html(listed=False)}</div></div>"
        limit = view.EMBED_LIMIT if embed_limit is None else int(embed_limit)
        return view.page(proj, self, metric=metric, limit=limit, timelines=embed_timelines, head=head, foot=foot)

    def save_html(self, path: str | Path, proj: Any = None, **options: Any) -> Path:
        """Write ``to_html(proj, **options)`` to ``path``, whole or not at all; returns the path."""
        from ragtt.marker import write_atomic

        target = Path(path)
        write_atomic(target, self.to_html(proj, **options))
        return target

    def _repr_html_(self) -> str:
        parts = [
            f"{STYLE}{BOX}<b>History matrix</b> {esc(self.dataset)}: "
            f"{counted(len(self.questions), 'question')} &times; "
        ]
        parts.append(counted(len(self.columns), "version"))
        shown = self.columns[-_HTML_COLUMNS:]
        offset = len(self.columns) - len(shown)
        for metric in self.metrics:
            head = "".join(f"<th title='{esc(c.at)}'>{esc(c.name)}</th>" for c in shown)
            body = []
            for qi, row in enumerate(self.cells[metric][:_HTML_ROWS]):
                tds = "".join(_cell_html(v, self.query_ids[qi][offset + k]) for k, v in enumerate(row[offset:]))
                body.append(f"<tr><td>{esc(self.questions[qi], 80)}</td>{tds}</tr>")
            parts.append(
                f"<div><b>{esc(metric)}</b></div><table class='ragtt-t'><thead><tr><th>question</th>{head}</tr>"
                f"</thead><tbody>{''.join(body)}</tbody></table>"
            )
        if len(self.questions) > _HTML_ROWS or offset:
            parts.append(
                f"<div class='dim'>showing {counted(min(len(self.questions), _HTML_ROWS), 'question')} and the last "
                f"{counted(len(shown), 'version')}; frame() has every cell</div>"
            )
        return "".join(parts) + self._notes_html() + "</div>"

    def _notes_html(self, *, listed: bool = True) -> str:
        """What the HTML views say below the cells: which questions got worse, and why (unless
        ``listed`` is False: the widget lists them); the verdicts that did not parse; the gate's verdict."""
        parts = []
        worse = (self._worse_lines if listed else []) + self._never_lines
        if worse:
            parts.append(f"<pre>{esc(chr(10).join(worse))}</pre>")
        if self.unparseable:
            parts.append(f"<div>{counted(len(self.unparseable), 'judge verdict')} did not parse</div>")
        if self.gate is not None:
            parts.append(f"<pre>{esc(self.gate.to_text())}</pre>")
        return "".join(parts)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _cell_html(value: float | None, query_id: str | None) -> str:
    if value is None:
        return f"<td class='dim' title='{esc(query_id)}'>-</td>"
    hue = round(120 * value)  # red (0) to green (1)
    return f"<td style='background:hsl({hue},70%,85%)' title='{esc(query_id)}'>{value:.2f}</td>"
