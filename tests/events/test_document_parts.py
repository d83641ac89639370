"""Long document texts are stored in parts and read back whole, exactly, on both backends;
an events.db of schema 3 (texts stored whole) migrates and reads back the same."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragtt.events.documents import PART_CHARS
from tests.backends import backend_for, raw_log


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    with backend_for(request) as name:
        yield name


def long_text() -> str:
    """Over two parts, with 2-, 3- and 4-byte UTF-8 characters on both sides of each boundary
    and a multi-byte character as the very first and last one of a part."""
    edge = "é漢🙂"
    words = "Zürich 東京 naïve 🙂 plain words.\n\n"
    body = (words * (PART_CHARS // len(words) + 1))[: PART_CHARS - 3]
    return body + edge + edge + body + "漢" + "🙂" * 40 + "\n\nThe end, é."


def test_a_long_text_round_trips_exactly_through_its_parts(tmp_path: Path, backend: str, open_project) -> None:  # type: ignore[no-untyped-def]
    text = long_text()
    assert text[PART_CHARS - 1] == "🙂" and text[PART_CHARS] == "é" and len(text) > 2 * PART_CHARS
    proj = open_project()
    report = proj.ingest_texts({"long.md": text, "short.md": "A short text, é 漢 🙂."})
    assert report.failed == [] and set(report.documents_added) == {"long.md", "short.md"}
    assert proj.document("long.md").text == text and proj.document("short.md").text == "A short text, é 漢 🙂."
    assert proj.verify().ok
    proj.close()

    conn = raw_log(tmp_path / "proj")
    mark = "?" if backend == "sqlite" else "%s"
    stored = dict(conn.execute("SELECT source, parts FROM documents").fetchall())
    assert stored == {"long.md": 3, "short.md": 0}
    (key,) = conn.execute("SELECT doc_key FROM documents WHERE source = 'long.md'").fetchone()
    parts = conn.execute(
        f"SELECT part, text FROM document_text_parts WHERE doc_key = {mark} ORDER BY part", (key,)
    ).fetchall()
    assert [p for p, _ in parts] == [0, 1, 2] and "".join(t for _, t in parts) == text
    assert [len(t) for _, t in parts[:2]] == [PART_CHARS, PART_CHARS]
    for forgery in (
        "UPDATE document_text_parts SET text = 'forged' WHERE part = 0",
        "DELETE FROM document_text_parts WHERE part = 2",
        f"INSERT INTO document_text_parts (doc_key, part, text) VALUES ('{key}', 1, 'forged')",
    ):
        with pytest.raises(Exception, match="immutable"):
            conn.execute(forgery)
    conn.close()


def test_a_schema_3_log_migrates_and_its_texts_read_back_the_same(tmp_path: Path) -> None:
    from ragtt._sqlite import connect
    from ragtt.events.migrations import MIGRATIONS, SCHEMA_VERSION
    from ragtt.events.sql import run_script
    from ragtt.events.store import EventStore

    path = tmp_path / "events.db"
    conn = connect(path)
    for number, step in enumerate(MIGRATIONS[:3]):
        if callable(step):
            step(conn)
        else:
            run_script(conn, step)
        conn.execute(f"PRAGMA user_version = {number + 1}")
    old = "An old text, stored whole: é 漢 🙂\n\n" * 40_000  # longer than a part, as schema 3 kept it
    conn.execute(
        "INSERT INTO documents (doc_key, doc_id, source, content_hash, text, routes, created_at) "
        "VALUES ('k1', 'd1', 'old.md', 'h1', ?, ?, '2025-01-01T00:00:00.000000Z')",
        (old, json.dumps([])),
    )
    conn.close()
    store = EventStore(path)
    try:
        assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
        row = store.documents.get("k1")
        assert row is not None and row.text == old and store.documents.texts(["k1", "nope"]) == {"k1": old}
    finally:
        store.close()
