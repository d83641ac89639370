"""Issue 15.4: bisect on a query with no history is a report, not an exception (Flask docs)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ragtt
from ragtt.cli import main
from tests.conftest import flask_releases


def test_bisect_over_one_version_says_so_and_the_cli_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = flask_releases()[-1]
    with ragtt.Project.open(tmp_path / "p", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest(release)
        query_id = proj.query("SECRET_KEY", mode="bm25", generate=False).query_id
        report = proj.bisect(query_id, "source:docs/config.rst")
        assert report.versions_searched == 1 and report.first_version is None
        assert report.replays_used == 1 and report.start_value is True and report.end_value is True
        assert "nothing to bisect: one version" in report.to_text()
        assert report.to_dict()["steps"] == [[proj.version, True]]
        with pytest.raises(ragtt.ConfigError, match="empty list of versions"):
            proj.bisect(query_id, "source:docs/config.rst", versions=[])
    capsys.readouterr()
    assert (
        main(
            [
                "bisect",
                query_id,
                "--predicate",
                "source:docs/config.rst",
                "--project",
                str(tmp_path / "p"),
                "--embedder",
                "hash",
            ]
        )
        == 0
    )
    assert "nothing to bisect: one version" in capsys.readouterr().out


def test_bisect_on_a_project_with_no_data_says_ingest_first(tmp_path: Path) -> None:
    with (
        ragtt.Project.open(tmp_path / "empty", embedder=ragtt.HashEmbedder(), progress=False) as proj,
        pytest.raises(ragtt.ConfigError, match="ingest before bisecting"),
    ):
        proj.bisect("SECRET_KEY", "source:docs/config.rst")
