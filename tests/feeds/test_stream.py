"""``proj.ingest_stream``: a version per batch, removals by ``None``, bounded memory and latency."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

import ragtt
from ragtt.results import IngestReport


def test_a_version_per_batch_and_none_removes(project: ragtt.Project) -> None:
    project.sync([("gone.md", "to be removed")])
    start = project.version
    feed = [(f"page-{i}.md", f"page {i} text") for i in range(6)]
    feed += [("gone.md", None), ("page-0.md", "edited"), ("extra.md", "one more")]
    seen: list[IngestReport] = []
    report = project.ingest_stream(iter(feed), batch_size=4, on_batch=seen.append)
    assert report.batches == 3 and report.versions == 3 and project.version == start + 3
    assert [r.index_version_after for r in seen] == [start + 1, start + 2, start + 3]
    # the removal and the edit share one version
    assert seen[1].documents_removed == ["gone.md"] and seen[1].documents_updated == ["page-0.md"]
    assert project.document("page-0.md").text == "edited"
    assert "gone.md" not in project.chunks()["source"].to_list()


def test_max_latency_closes_a_batch_and_memory_stays_bounded(project: ragtt.Project) -> None:
    pulled = 0
    at_first_batch: list[int] = []

    def feed() -> Iterator[tuple[str, str]]:
        nonlocal pulled
        for i in range(3):
            pulled += 1
            yield (f"slow-{i}.md", f"slow {i}")
        time.sleep(1.5)  # longer than max_latency: the first batch must not wait for more
        for i in range(40):
            pulled += 1
            yield (f"fast-{i}.md", f"fast {i}")

    def on_batch(report: IngestReport) -> None:
        at_first_batch.append(pulled)

    report = project.ingest_stream(feed(), batch_size=8, max_latency="0.3s", on_batch=on_batch)
    assert at_first_batch[0] == 3  # written while the feed was still waiting
    assert at_first_batch == sorted(at_first_batch) and at_first_batch[-1] <= 43  # never ahead of the feed
    assert report.records == 43 and report.failed == []
    assert max(b - a for a, b in zip([0, *at_first_batch], at_first_batch, strict=False)) <= 2 * 8 + 1
    assert len(project.chunks()["source"].unique()) == 43


def test_a_feed_that_raises_keeps_what_it_gave(project: ragtt.Project) -> None:
    def feed() -> Iterator[tuple[str, str]]:
        yield ("a.md", "alpha")
        raise RuntimeError("upstream closed")

    report = project.ingest_stream(feed(), batch_size=10, max_latency=0.1)
    assert report.failed and "upstream closed" in report.failed[0][1]
    assert project.chunks()["source"].to_list() == ["a.md"]


def _readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "ragtt-stream-reader" and t.is_alive()]


def test_the_reader_ends_and_closes_the_feed_when_a_write_raises(project: ragtt.Project) -> None:
    closed = threading.Event()

    def feed() -> Iterator[tuple[str, str]]:
        try:
            for i in range(10_000):
                yield (f"page-{i}.md", f"page {i}")
        finally:
            closed.set()

    def on_batch(report: IngestReport) -> None:
        raise RuntimeError("the caller gives up")

    with pytest.raises(RuntimeError, match="the caller gives up"):
        project.ingest_stream(feed(), batch_size=4, on_batch=on_batch)
    assert _readers() == []  # ended before the call returned, not some time later
    assert closed.is_set()  # the feed's own cleanup ran


def test_the_reader_ends_when_the_feed_is_exhausted(project: ragtt.Project) -> None:
    closed = threading.Event()

    def feed() -> Iterator[tuple[str, str]]:
        try:
            yield ("a.md", "alpha")
        finally:
            closed.set()

    project.ingest_stream(feed(), batch_size=4, max_latency=0.1)
    assert _readers() == [] and closed.is_set()
