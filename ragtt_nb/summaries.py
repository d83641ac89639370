"""Altair summaries of a project's event log: queries over time, latency, and retrieval
overlap of a baseline suite of questions between two index versions.

Each ``*_frame`` function returns the polars frame its chart draws; each chart function
returns an ``alt.Chart``. Charts are offline-exportable: in a notebook call
``alt.JupyterChart.enable_offline()`` and show ``alt.JupyterChart(chart)`` (the chart's
JavaScript goes into the notebook, not a CDN), or ``alt.renderers.enable("svg")`` for a
static picture made by vl-convert. ``offline(chart)`` does the first.

>>> from ragtt_nb import summaries                                # doctest: +SKIP
>>> summaries.offline(summaries.latency(proj))                    # doctest: +SKIP
>>> summaries.retrieval_overlap(proj, ["refund window?", ...], baseline="release-1")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from ragtt.events import types as ev

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

    import ragtt

__all__ = [
    "count_axis",
    "latency",
    "latency_frame",
    "offline",
    "overlap_frame",
    "queries_frame",
    "queries_over_time",
    "retrieval_overlap",
    "time_axis",
]


def offline(chart: Any) -> Any:
    """``chart`` as a JupyterChart whose JavaScript is inlined (renders in an offline report)."""
    import altair as alt

    alt.JupyterChart.enable_offline()
    return alt.JupyterChart(chart)


def queries_frame(proj: ragtt.Project, every: str = "1h") -> pl.DataFrame:
    """Logged queries and replays per ``every`` (a polars duration: "1m", "1h", "1d")."""
    import polars as pl

    events = proj.events.frame(types=[ev.QUERY_RECEIVED, ev.REPLAY_PREFIX + ev.QUERY_RECEIVED])
    kind = pl.when(pl.col("type") == ev.QUERY_RECEIVED).then(pl.lit("query")).otherwise(pl.lit("replay"))
    return (
        events.select(pl.col("ts"), kind.alias("kind"))
        .sort("ts")
        .group_by_dynamic("ts", every=every, group_by="kind")
        .agg(pl.len().alias("queries"))
        .sort("ts", "kind")
    )


def time_axis(frame: pl.DataFrame, field: str = "ts") -> alt.X:
    """A temporal x channel in UTC whose labels fit the span of ``frame[field]``: whole
    seconds, minutes, days or months (never ".500" sub-second ticks), one label format."""
    import altair as alt
    import polars as pl

    span = float(frame.select((pl.col(field).max() - pl.col(field).min()).dt.total_seconds()).item() or 0)
    fmt, interval = next((f, i) for limit, f, i in _TIME_FORMATS if span < limit)
    return alt.X(
        f"{field}:T",
        title="time (UTC)",
        scale=alt.Scale(type="utc"),
        axis=alt.Axis(format=fmt, tickCount=interval, labelOverlap=True),
    )  # a utc scale formats in UTC


# (span below which it applies, label format, smallest tick interval)
_Interval = Literal["second", "minute", "day", "month"]
_TIME_FORMATS: tuple[tuple[float, str, _Interval], ...] = (
    (120.0, "%H:%M:%S", "second"),
    (2 * 86400.0, "%H:%M", "minute"),
    (120 * 86400.0, "%Y-%m-%d", "day"),
    (float("inf"), "%Y-%m", "month"),
)


def count_axis(field: str, title: str) -> alt.Y:
    """A count on the y axis: integer ticks only."""
    import altair as alt

    return alt.Y(field, title=title, axis=alt.Axis(format="d", tickMinStep=1))


def queries_over_time(proj: ragtt.Project, every: str = "1h") -> alt.Chart:
    import altair as alt

    frame = queries_frame(proj, every)
    return (
        alt.Chart(frame, title=f"Queries per {every}")
        .mark_bar()
        .encode(
            x=time_axis(frame),
            y=count_axis("queries:Q", "queries"),
            color=alt.Color("kind:N", title=None),
            tooltip=[
                alt.Tooltip("utcyearmonthdatehoursminutesseconds(ts):T", title="time (UTC)"),
                "kind:N",
                "queries:Q",
            ],
        )
    )


def latency_frame(proj: ragtt.Project) -> pl.DataFrame:
    """One row per completed query or replay: ts, query_id, kind, latency_ms, retrieve_ms, generate_ms."""
    import polars as pl

    events = proj.events.frame(types=[ev.QUERY_COMPLETED, ev.REPLAY_PREFIX + ev.QUERY_COMPLETED])
    return events.select(
        "ts",
        "query_id",
        pl.when(pl.col("type") == ev.QUERY_COMPLETED).then(pl.lit("query")).otherwise(pl.lit("replay")).alias("kind"),
        pl.col("payload").str.json_path_match("$.latency_ms").cast(pl.Float64).alias("latency_ms"),
        pl.col("payload").str.json_path_match("$.timings_ms.retrieve").cast(pl.Float64).alias("retrieve_ms"),
        pl.col("payload").str.json_path_match("$.timings_ms.generate").cast(pl.Float64).alias("generate_ms"),
    ).sort("ts")


def latency(proj: ragtt.Project) -> alt.HConcatChart:
    """Latency of each query over time, beside its distribution."""
    import altair as alt

    frame = latency_frame(proj)
    over_time = (
        alt.Chart(frame, title="Query latency")
        .mark_circle(size=40)
        .encode(
            x=time_axis(frame),
            y=alt.Y("latency_ms:Q", title="latency (ms)"),
            color=alt.Color("kind:N", title=None),
            tooltip=["query_id:N", "latency_ms:Q", "retrieve_ms:Q"],
        )
    )
    histogram = (
        alt.Chart(frame, title="Distribution")
        .mark_bar()
        .encode(
            x=alt.X("latency_ms:Q", bin=alt.Bin(maxbins=30), title="latency (ms)"),
            y=count_axis("count():Q", "queries"),
            color=alt.Color("kind:N", title=None),
        )
    )
    return alt.hconcat(over_time, histogram)


def overlap_frame(
    proj: ragtt.Project, suite: Sequence[str], baseline: Any, at: Any = None, *, top_k: int | None = None
) -> pl.DataFrame:
    """Each question of ``suite`` retrieved at ``baseline`` and at ``at`` (default: latest)
    without logging a query: how many of the baseline's chunks are still retrieved.

    Columns: question, baseline_version, version, k, kept, overlap (kept / baseline's k),
    jaccard, added, removed.
    """
    import polars as pl

    if isinstance(suite, str) or not all(isinstance(q, str) for q in suite):
        raise TypeError("suite must be a list of question strings")
    left = proj.resolve_version(baseline)
    right = proj.version if at is None else proj.resolve_version(at)
    plan = proj.plan(top_k=top_k) if top_k is not None else proj.plan()
    rows = []
    for question in suite:
        before = [c.chunk_id for c in proj.retrieve_at(question, left, plan)]
        after = [c.chunk_id for c in proj.retrieve_at(question, right, plan)]
        kept = len(set(before) & set(after))
        union = len(set(before) | set(after))
        rows.append(
            {
                "question": question,
                "baseline_version": left,
                "version": right,
                "k": len(before),
                "kept": kept,
                "overlap": kept / len(before) if before else None,
                "jaccard": kept / union if union else None,
                "added": len(set(after) - set(before)),
                "removed": len(set(before) - set(after)),
            }
        )
    schema = {
        "question": pl.String,
        "baseline_version": pl.Int64,
        "version": pl.Int64,
        "k": pl.Int64,
        "kept": pl.Int64,
        "overlap": pl.Float64,
        "jaccard": pl.Float64,
        "added": pl.Int64,
        "removed": pl.Int64,
    }
    return pl.DataFrame(rows, schema=schema, orient="row")


def retrieval_overlap(
    proj: ragtt.Project, suite: Sequence[str], baseline: Any, at: Any = None, *, top_k: int | None = None
) -> alt.Chart:
    """One bar per question: the share of its baseline chunks still retrieved."""
    import altair as alt

    frame = overlap_frame(proj, suite, baseline, at, top_k=top_k)
    title = "Retrieval overlap with the baseline" + (
        f" ({proj.version_label(frame['baseline_version'][0])} → {proj.version_label(frame['version'][0])})"
        if len(frame)
        else ""
    )
    return (
        alt.Chart(frame, title=title)
        .mark_bar()
        .encode(
            x=alt.X("overlap:Q", title="share of baseline chunks still retrieved", scale=alt.Scale(domain=[0, 1])),
            y=alt.Y("question:N", sort="x", title=None, axis=alt.Axis(labelLimit=360)),
            color=alt.Color("overlap:Q", scale=alt.Scale(scheme="redyellowgreen", domain=[0, 1]), legend=None),
            tooltip=["question:N", "kept:Q", "k:Q", "added:Q", "removed:Q", alt.Tooltip("jaccard:Q", format=".2f")],
        )
    )
