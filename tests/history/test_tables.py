"""A further chunk table in an existing project (``PipelineConfig(table_name=...)``): made under
the write lock, adopted when the log already records it, made again when a creation died
before its log transaction; each table keeps its own history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragtt
from ragtt.index.table import ChunkTable

pytestmark = pytest.mark.usefixtures("backend")


def _tables(path: Path) -> list[str]:
    return json.loads((path / "ragtt.json").read_text())["stores"]["tables"]


def test_a_second_table_keeps_its_own_history(tmp_path: Path, open_project) -> None:  # type: ignore[no-untyped-def]
    with open_project() as proj:
        proj.ingest_texts({"a.md": "# A\n\nRefunds take 14 days."})
        first = proj.version
    with open_project(config=ragtt.PipelineConfig(table_name="other")) as other:
        other.ingest_texts({"b.md": "# B\n\nBackups are kept for 35 days."})
        assert [c.source for c in other.query("backups", generate=False).chunks] == ["b.md"]
    assert _tables(tmp_path / "proj") == ["chunks", "other"]
    with open_project(config=ragtt.PipelineConfig()) as proj:  # the config names the table to open
        assert proj.version == first and [c.source for c in proj.query("refunds", generate=False).chunks] == ["a.md"]
        assert proj.verify().ok


def test_a_table_a_dead_creation_left_is_made_again(tmp_path: Path, open_project) -> None:  # type: ignore[no-untyped-def]
    with open_project() as proj:
        proj.ingest_texts({"a.md": "# A\n\nRefunds take 14 days."})
    path = tmp_path / "proj"
    ChunkTable.create(path / "lancedb", "other", ragtt.HashEmbedder().dim)  # it died after LanceDB made it
    with open_project(config=ragtt.PipelineConfig(table_name="other")) as other:
        other.ingest_texts({"b.md": "# B\n\nBackups are kept for 35 days."})
        created = [e for e in other.events.query(types="index.created") if e.payload["table"] == "other"]
        assert [e.payload["versions"] for e in created] == [[1, 2]] and other.verify().ok
    assert _tables(path) == ["chunks", "other"]


def test_a_table_the_log_records_but_the_marker_missed_is_adopted(tmp_path: Path, open_project) -> None:  # type: ignore[no-untyped-def]
    with open_project() as proj:
        proj.ingest_texts({"a.md": "# A\n\nRefunds take 14 days."})
    with open_project(config=ragtt.PipelineConfig(table_name="other")) as other:
        other.ingest_texts({"b.md": "# B\n\nBackups are kept for 35 days."})
        version = other.version
    path = tmp_path / "proj"
    marker = json.loads((path / "ragtt.json").read_text())
    marker["stores"]["tables"] = ["chunks"]  # the process died before it wrote the marker
    (path / "ragtt.json").write_text(json.dumps(marker))
    with open_project(config=ragtt.PipelineConfig(table_name="other")) as other:
        assert other.version == version and [c.source for c in other.query("backups", generate=False).chunks] == [
            "b.md"
        ]
        assert other.verify().ok
    assert _tables(path) == ["chunks", "other"]
