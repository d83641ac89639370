"""A watch that outlives what goes wrong: a failing batch is reported and tried again (with a
growing pause, never a spin), a change made while the catch-up reads the folder is not lost,
``stop()`` mid-batch finishes the batch first, and ``Project.close()`` stops the watches it
started."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import ragtt
import ragtt.feeds.watch as watch_module
import ragtt.ingest.pipeline as pipeline
from tests.feeds.test_watch import indexed, wait_until


def test_a_failing_batch_is_reported_retried_and_does_not_spin(tmp_path: Path, monkeypatch: Any) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("alpha")
    real = pipeline.run_ingest
    failing = threading.Event()
    calls: list[float] = []

    def run_ingest(*args: Any, **kwargs: Any) -> Any:
        calls.append(time.monotonic())
        if failing.is_set():
            raise OSError("No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "run_ingest", run_ingest)
    lines: list[str] = []
    with ragtt.Project.open(tmp_path / "proj", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        handle = proj.watch(docs, debounce="0.2s", on_batch=lambda b: lines.append(b.line()))
        try:
            wait_until(lambda: len(handle.batches) >= 1, "the catch-up")
            failing.set()
            start = len(calls)
            (docs / "b.md").write_text("bravo")
            wait_until(lambda: any(b.error for b in handle.batches), "the failed batch")
            time.sleep(2.5)  # the failure lasts: tries come after 0.5, 1, 2 s pauses, not in a loop
            assert handle.running
            tries = len(calls) - start
            assert 2 <= tries <= 4, tries
            failed = [b for b in handle.batches if b.error]
            assert "No space left on device" in failed[0].line() and "failed" in failed[0].line()
            assert not failed[0].changed and failed[0].retry_in_s == 0.5
            assert [b.retry_in_s for b in failed[:3]] == [0.5, 1.0, 2.0][: len(failed[:3])]
            assert any("No space left on device" in line for line in lines)
            failing.clear()  # the store recovers: the same batch lands with no new change
            wait_until(lambda: "b.md" in indexed(proj), "the retried batch")
            assert handle.batches[-1].added == ["b.md"] and handle.batches[-1].error is None
        finally:
            handle.stop()
        assert handle.errors == []


def test_a_callback_that_raises_does_not_end_the_watch(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()

    def on_batch(batch: Any) -> None:
        raise ValueError("a bug in the caller's callback")

    with ragtt.Project.open(tmp_path / "proj", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        handle = proj.watch(docs, debounce="0.2s", on_batch=on_batch)
        try:
            wait_until(lambda: len(handle.batches) >= 1, "the catch-up")
            (docs / "a.md").write_text("alpha")
            wait_until(lambda: "a.md" in indexed(proj), "the batch after the callback raised")
            assert handle.running
        finally:
            handle.stop()
        assert handle.errors and "a bug in the caller's callback" in handle.errors[0]


def test_a_change_during_the_catch_up_is_not_lost(tmp_path: Path, monkeypatch: Any) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("alpha")
    real = watch_module.mirror

    def mirror(ctx: Any, folder: Path, follow: bool, changed: set[str] | None, *, since: float) -> Any:
        batch = real(ctx, folder, follow, changed, since=since)
        if changed is None:  # the catch-up has read the folder: a file lands before it returns
            (folder / "late.md").write_text("written while the catch-up ran")
        return batch

    monkeypatch.setattr(watch_module, "mirror", mirror)
    with ragtt.Project.open(tmp_path / "proj", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        handle = proj.watch(docs, debounce="0.2s")
        try:
            wait_until(lambda: len(handle.batches) >= 1, "the catch-up")
            assert handle.batches[0].added == ["a.md"]
            wait_until(lambda: "late.md" in indexed(proj), "the file written during the catch-up")
        finally:
            handle.stop()


def test_stop_in_the_middle_of_a_batch_ends_after_it(tmp_path: Path, monkeypatch: Any) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    real = pipeline.run_ingest
    inside = threading.Event()

    def run_ingest(*args: Any, **kwargs: Any) -> Any:
        if any(i.source == "slow.md" for i in args[1]):
            inside.set()
            time.sleep(1.0)  # stop() arrives now
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "run_ingest", run_ingest)
    with ragtt.Project.open(tmp_path / "proj", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        handle = proj.watch(docs, debounce="0.2s")
        wait_until(lambda: len(handle.batches) >= 1, "the catch-up")
        (docs / "slow.md").write_text("a batch stopped while it is written")
        wait_until(inside.is_set, "the batch to start")
        handle.stop()
        assert not handle.running
        assert handle.batches[-1].added == ["slow.md"] and handle.batches[-1].changed
        assert "slow.md" in indexed(proj)
        assert proj.verify().ok


@pytest.mark.parametrize("kind", ["watch", "schedule"])
def test_close_stops_what_the_project_started(tmp_path: Path, kind: str) -> None:
    from datetime import timedelta

    docs = tmp_path / "docs"
    docs.mkdir()
    proj = ragtt.Project.open(tmp_path / "proj", embedder=ragtt.HashEmbedder(), progress=False)
    handle: Any = proj.watch(docs, debounce="0.2s") if kind == "watch" else proj.schedule_snapshots(timedelta(hours=1))
    assert handle.running
    proj.close()
    assert not handle.running


def test_snapshot_every_parses_durations_and_counts() -> None:
    from datetime import timedelta

    from ragtt.errors import ConfigError
    from ragtt.feeds.watch import parse_snapshot_every

    assert parse_snapshot_every("1h") == timedelta(hours=1)
    assert parse_snapshot_every("12") == parse_snapshot_every(12) == 12
    assert parse_snapshot_every(None) is None
    for bad in (0, "0", "soon", True):
        with pytest.raises(ConfigError):
            parse_snapshot_every(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("every", [2, "1.5s"])
def test_snapshots_on_a_schedule_during_a_watch(tmp_path: Path, every: int | str) -> None:
    """Every 2nd version the watch makes, or the first version made 1.5 s after the last
    snapshot (the watch's start counts as one)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    with ragtt.Project.open(tmp_path / "proj", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        handle = proj.watch(docs, debounce="0.2s", snapshot_every=every)
        try:
            wait_until(lambda: len(handle.batches) >= 1, "the catch-up")
            for i in range(4):
                (docs / f"page-{i}.md").write_text(f"page {i}")
                wait_until(lambda i=i: f"page-{i}.md" in indexed(proj), f"page {i}")
            if every == "1.5s":
                time.sleep(1.6)
                (docs / "late.md").write_text("after the pause")
                wait_until(lambda: "late.md" in indexed(proj), "the late page")
        finally:
            handle.stop()
        made = [b for b in handle.batches if b.changed]
        snapped = [b.snapshot for b in made]
        assert all(s is None or s.startswith("watch-") for s in snapped)
        if every == 2:  # the catch-up made no version (an empty folder): pages 1 and 3 are snapshotted
            assert [s is not None for s in snapped] == [False, True, False, True]
        else:  # never two snapshots within 1.5 s; the late page, after the pause, gets one
            times = [b.at for b in made if b.snapshot]
            assert all((b - a).total_seconds() >= 1.4 for a, b in itertools.pairwise(times))
            assert snapped[-1] is not None
        labels = {s.label for s in proj.snapshots()}
        assert {s for s in snapped if s} <= labels
