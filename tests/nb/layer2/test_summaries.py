"""Altair summaries: the frames they draw, and charts that render with no network (vl-convert)."""

from __future__ import annotations

from typing import Any

import altair as alt
import pytest
import vl_convert as vlc

import ragtt
from ragtt_nb import summaries

from .conftest import QUESTION

SUITE = [QUESTION, "What uptime does the Pro plan guarantee?", "How long are backups kept?"]


def test_queries_and_latency_frames(proj: ragtt.Project) -> None:
    replay = proj.replay(proj.events.frame(types=["query.received"])["query_id"][0])
    queries = summaries.queries_frame(proj, every="1d")
    assert queries.filter(queries["kind"] == "query")["queries"].sum() == len(
        proj.events.frame(types=["query.received"])
    )
    assert queries.filter(queries["kind"] == "replay")["queries"].sum() >= 1
    lat = summaries.latency_frame(proj)
    assert replay.query_id in lat["query_id"].to_list()
    assert lat["latency_ms"].min() > 0 and (lat["retrieve_ms"] <= lat["latency_ms"]).all()


def test_overlap_against_a_baseline_suite(proj: ragtt.Project, sample: dict[str, Any]) -> None:
    before = len(proj.events.frame())
    frame = summaries.overlap_frame(proj, SUITE, baseline="release-2", at="release-3")
    assert len(proj.events.frame()) == before  # a summary logs no queries
    assert frame["question"].to_list() == SUITE
    for row in frame.iter_rows(named=True):
        left = {c.chunk_id for c in proj.replay_text(row["question"], at="release-2").chunks}
        right = {c.chunk_id for c in proj.replay_text(row["question"], at="release-3").chunks}
        assert row["kept"] == len(left & right) and row["overlap"] == pytest.approx(len(left & right) / len(left))
    same = summaries.overlap_frame(proj, SUITE, baseline="release-3")
    assert same["overlap"].to_list() == [1.0] * len(SUITE)
    with pytest.raises(TypeError, match="list of question strings"):
        summaries.overlap_frame(proj, QUESTION, baseline=1)


def test_charts_render_offline(proj: ragtt.Project) -> None:
    charts = [
        summaries.queries_over_time(proj, "1d"),
        summaries.latency(proj),
        summaries.retrieval_overlap(proj, SUITE, baseline="release-1"),
    ]
    for chart in charts:
        svg = vlc.vegalite_to_svg(chart.to_json())
        assert svg.startswith("<svg") and "http" not in svg.split(">", 1)[1].replace("http://www.w3.org", "")
    widget = summaries.offline(charts[0])
    assert isinstance(widget, alt.JupyterChart)
