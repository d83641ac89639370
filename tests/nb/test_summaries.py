"""Altair summaries: time axes typed as UTC time with whole-unit labels, counts as integers."""

from __future__ import annotations

import re
from typing import Any

import ragtt
from ragtt_nb import summaries


def _labels(chart: Any) -> list[str]:
    import vl_convert

    svg = vl_convert.vegalite_to_svg(chart.to_json())
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def test_time_and_count_axes(project: ragtt.Project) -> None:
    # A project of its own: queries other tests logged would stretch the span past the
    # seconds format this test pins.
    proj = project
    proj.ingest_texts({"refunds.md": "# Refunds\n\nThe refund window is 30 days.\n"})
    for _ in range(3):  # a burst inside one second: the case that drew ".500 .500" labels
        proj.query("refund window", generate=False)
    chart = summaries.queries_over_time(proj, every="1s")
    spec = chart.to_dict()
    x, y = spec["encoding"]["x"], spec["encoding"]["y"]
    assert x["type"] == "temporal" and x["scale"]["type"] == "utc" and x["axis"]["format"] == "%H:%M:%S"
    assert y["axis"]["format"] == "d" and y["axis"]["tickMinStep"] == 1
    labels = _labels(chart)
    times = [t for t in labels if re.fullmatch(r"\d\d:\d\d(:\d\d)?", t)]
    assert times and not [t for t in labels if t.startswith(".")], labels
    counts = [t for t in labels if re.fullmatch(r"[\d.]+", t)]
    assert counts and all(re.fullmatch(r"\d+", t) for t in counts), counts  # no 0.5 ticks
    latency = summaries.latency(proj).to_dict()
    over_time, histogram = latency["hconcat"]
    assert over_time["encoding"]["x"]["scale"]["type"] == "utc"
    assert histogram["encoding"]["y"]["axis"]["format"] == "d"


def test_overlap_chart_title_uses_version_labels(proj: ragtt.Project) -> None:
    chart = summaries.retrieval_overlap(proj, ["refund window?"], baseline="release-1")
    title = chart.to_dict()["title"]
    assert f"release-1 (v{proj.resolve_version('release-1')})" in title
