"""Issue 30, item 8, Python's side: the Timeline's auto axis follows the versions, not the
queries, and an ingest can carry the date its content is of (``as_of``), which the axis and
``resolve_version`` use. (The labels and the diff card's "why": tests/nb/test_newcomer_browser.py.)"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragtt
from ragtt.errors import ConfigError
from ragtt.views.timeline import build
from ragtt.views.timeline_axis import auto_axis
from tests.nb.newcomer import releases


def _date(path: Path) -> datetime:
    return datetime.fromisoformat(path.name.split("_")[0]).replace(tzinfo=UTC)


def test_auto_axis_is_chosen_from_the_versions_not_the_queries() -> None:
    """6 ingests two minutes apart, then 18 minutes of queries: the old rule picked the wall
    clock and the releases filled 12% of the axis, losing their labels."""
    ingests = [0.0, 24.0, 48.0, 72.0, 96.0, 120.0]
    assert auto_axis(ingests) == "time"  # alone, they are evenly spread
    assert auto_axis(ingests, span_s=120.0 + 18 * 60) == "versions"
    releases_s = [_date(p).timestamp() for _, p in releases()]
    assert auto_axis(releases_s, span_s=releases_s[-1] - releases_s[0] + 300 * 86400) == "time"


@pytest.fixture(scope="module")
def dated(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("dated") / "flaskproj"
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False, create=True) as proj:
        for tag, release in releases():
            proj.ingest(release, as_of=_date(release))
            proj.snapshot(f"flask-{tag}")
        proj.query("What is the default for SEND_FILE_MAX_AGE_DEFAULT?", generate=False)
    return path


def test_as_of_is_recorded_and_resolves_datetimes(dated: Path) -> None:
    with ragtt.Project.open(dated, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        labels = {name: v for v, name in proj.version_labels().items()}
        as_of = proj.events.as_of_times()
        assert as_of[labels["flask-2.0.0"]] == datetime(2021, 5, 11, tzinfo=UTC)
        # a release's date finds its version, not "the index did not exist yet" (committed today)
        assert proj.resolve_version(datetime(2019, 1, 1, tzinfo=UTC)) == labels["flask-1.0"]
        assert proj.resolve_version(datetime(2021, 5, 11, tzinfo=UTC)) == labels["flask-2.0.0"]
        assert proj.resolve_version("2024-01-01") == labels["flask-2.3.0"]
        with pytest.raises(ragtt.NotFoundError):
            proj.resolve_version(datetime(2010, 1, 1, tzinfo=UTC))
        with pytest.raises(ConfigError, match="timezone-aware"):
            proj.ingest_texts({"x.md": "x"}, as_of=datetime(2020, 1, 1))


def test_the_timeline_places_versions_at_their_dates(dated: Path) -> None:
    with ragtt.Project.open(dated, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        data, versions, _ = build(proj, None)
        labels = {name: v for v, name in proj.version_labels().items()}
    t = np.frombuffer(data["versions"]["t"]["view"], dtype="<i4").astype(np.float64)
    ms = data["t0_ms"] + t * data["t_unit_ms"]
    at = {v: ms[i] for i, v in enumerate(versions)}
    for tag, release in releases():  # exactly: a few ms off read as 23:59:59.9 of the day before
        assert at[labels[f"flask-{tag}"]] == _date(release).timestamp() * 1000
    # the table's creation versions, committed today, sit with the first release, not after the
    # last one (the widget then said "Before the first index version" at every version)
    first = labels[f"flask-{releases()[0][0]}"]
    assert [at[v] for v in versions if v < first] == [at[first]] * (first - versions[0])
    assert list(t) == sorted(t)
    assert data["layout"]["auto"] == "time"  # releases years apart, evenly enough: the calendar reads


def test_undated_versions_never_sit_after_a_later_version(tmp_path: Path) -> None:
    """A compaction committed today between two dated ingests sits with the next one;
    ``resolve_version(datetime)`` still finds the same versions; an undated ingest after
    them keeps its commit time."""
    with ragtt.Project.open(tmp_path / "p", embedder=ragtt.HashEmbedder(), progress=False, create=True) as proj:
        proj.ingest_texts({"a.md": "# A\n\nfirst"}, as_of=datetime(2021, 5, 11, tzinfo=UTC))
        compacted = proj.optimize()
        proj.ingest_texts({"b.md": "# B\n\nsecond"}, as_of=datetime(2022, 2, 14, tzinfo=UTC))
        dated_last = proj.version
        proj.ingest_texts({"c.md": "# C\n\nthird"})
        times = proj.events.version_times()
        assert compacted and all(times[v] == datetime(2022, 2, 14, tzinfo=UTC) for v in compacted)
        assert list(times.values()) == sorted(times.values())
        assert times[proj.version] > datetime(2025, 1, 1, tzinfo=UTC)  # committed now
        assert proj.resolve_version(datetime(2021, 6, 1, tzinfo=UTC)) == min(compacted) - 1
        assert proj.resolve_version(datetime(2022, 2, 14, tzinfo=UTC)) == dated_last


def test_cli_and_magic_take_as_of_date(tmp_path: Path, shell: Any) -> None:
    import subprocess
    import sys

    release = releases()[0][1]
    ragtt_cli = str(Path(sys.executable).parent / "ragtt")
    done = subprocess.run(
        [
            ragtt_cli,
            "ingest",
            str(release),
            "--as-of-date",
            "2013-06-13",
            "--project",
            str(tmp_path / "cli"),
            "--embedder",
            "hash",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    shell.run_line_magic("ragtt", f"open {tmp_path / 'cli'}")
    shell.run_line_magic("ragtt", f"ingest {releases()[1][1]} --as-of-date 2016-12-21T00:00:00Z")
    with ragtt.Project.open(tmp_path / "cli", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        assert sorted(proj.events.as_of_times().values()) == [
            datetime(2013, 6, 13, tzinfo=UTC),
            datetime(2016, 12, 21, tzinfo=UTC),
        ]


def test_snapshots_show_the_date_their_ingest_was_dated_with(
    dated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ragtt snapshots` and `ragtt snapshot` show the release date (--as-of-date) next to when
    the snapshot was taken, as the sidebar and the timeline date the version."""
    import shutil

    from ragtt.cli import main

    path = tmp_path / "proj"
    shutil.copytree(dated, path)
    cli = ["--project", str(path), "--embedder", "hash"]
    assert main(["snapshots", *cli]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[-6:] == ["chunks", "created", "(UTC)", "as", "of", "(UTC)"]
    row = next(line for line in table if line.startswith("flask-2.0.0 "))
    assert row.rstrip().endswith("2021-05-11T00:00:00Z")
    assert main(["snapshots", "--json", *cli]) == 0
    rows = {s["label"]: s for s in json.loads(capsys.readouterr().out)}
    assert rows["flask-2.0.0"]["as_of"] == "2021-05-11T00:00:00+00:00"
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest_texts({"notes.md": "# Notes\n\nrelease notes"}, as_of=datetime(2026, 3, 1, tzinfo=UTC))
    assert main(["snapshot", "notes", *cli]) == 0
    assert capsys.readouterr().out.rstrip().endswith(", as of 2026-03-01T00:00:00Z)")
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest_texts({"todo.md": "# Todo\n\nundated"})
    assert main(["snapshot", "todo", *cli]) == 0
    assert "as of" not in capsys.readouterr().out


def test_the_time_axis_says_where_the_versions_end(dated: Path, offline: Any, screens: Path) -> None:
    """The releases end 2026-02-18; the question was asked today, months later. The time axis
    runs on to it, and shades and names that stretch rather than reading it as more history."""
    from ragtt.views import timeline
    from ragtt.views.page import widget_page
    from tests.nb.conftest import screenshot, settle

    with ragtt.Project.open(dated, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        asked = proj.events.query(types="query.received")[-1].query_id
        last = max(proj.events.version_times().values())
        page_html = widget_page("timeline", timeline.model(proj, asked), title="timeline")
    (path := dated.parent / "timeline.html").write_text(page_html, encoding="utf-8")
    page = offline.open(path)
    page.wait_for_selector(".ragtt-timeline canvas", timeout=30_000)
    settle(page)
    root = page.locator(".ragtt-timeline")
    assert root.get_attribute("data-axis-labels") and "time" in root.locator(".ragtt-tl-axis").inner_text().lower()
    after = json.loads(root.get_attribute("data-after-last") or "null")
    assert after and after["x1"] - after["x0"] > 20, after
    assert after["from"].startswith(f"{last:%Y-%m-%d}") and after["to"] > after["from"], after
    assert root.get_attribute("data-axis-end") == f"shaded: after the last version, to {after['to']}"
    screenshot(page, root, screens / "timeline_after_last_version.png")
    assert offline.errors == []
