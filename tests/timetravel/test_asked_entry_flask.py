"""The diff pairs the entry a question asks about with its rewrite, on Flask's docs 3.0.3 -> 3.1.3.

3.1 rewrote ``SERVER_NAME``'s entry and made it longer, so the chunk boundary moved: the 3.0.3
chunk holds the whole entry and the first paragraph of ``APPLICATION_ROOT``; in 3.1.3 the
entry's body is one chunk and ``APPLICATION_ROOT`` went whole into the next, which shares more
words (and rare terms) with the old chunk than the rewritten body does. Paired by words, the
diff showed ``SERVER_NAME`` deleted beside ``APPLICATION_ROOT`` and listed its rewrite as added.
"""

from __future__ import annotations

from typing import Any

import pytest

import ragtt
from tests.conftest import corpus

QUESTIONS = {
    "server_name": "What does SERVER_NAME do?",
    "max_content_length": "What is the default MAX_CONTENT_LENGTH?",
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = corpus("evolving", "flask")
    path = tmp_path_factory.mktemp("asked-entry") / "proj"
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest(root / "2024-04-07_flask-3.0.3")
        proj.snapshot("flask-3.0.3")
        then = {k: proj.query(q, top_k=10) for k, q in QUESTIONS.items()}
        proj.ingest(root / "2026-02-18_flask-3.1.3")
        proj.snapshot("flask-3.1.3")
        now = {k: proj.query(q, top_k=10) for k, q in QUESTIONS.items()}
        yield {k: proj.diff(then[k].query_id, now[k].query_id, generate=False) for k in QUESTIONS}


def _entry(text: str, name: str) -> str:
    """``name``'s ``.. py:data::`` block in a config.rst."""
    start = text.index(f".. py:data:: {name}\n")
    return text[start : text.index("\n\n.. py:data::", start)]


def test_the_server_name_entry_pairs_with_its_rewrite_not_the_next_entry(reports: Any) -> None:
    report = reports["server_name"]
    pair = next(p for p in report.changed if ".. py:data:: SERVER_NAME" in p.left.text)
    assert pair.source == "docs/config.rst"
    assert "Must be set if ``subdomain_matching`` is enabled" in pair.right.text  # not APPLICATION_ROOT's chunk
    assert ".. py:data:: APPLICATION_ROOT\n\n    Inform" not in pair.right.text
    assert pair.subject == "server_name" and pair.signals["bigrams"] < 0.6 <= pair.similarity
    root = corpus("evolving", "flask")
    for side, release in ((pair.left_text, "2024-04-07_flask-3.0.3"), (pair.right_text, "2026-02-18_flask-3.1.3")):
        assert side == _entry((root / release / "docs" / "config.rst").read_text(), "SERVER_NAME")
    deleted = " ".join(t for op, t in pair.runs if op == "delete")
    inserted = " ".join(t for op, t in pair.runs if op == "insert")
    assert "subdomain route matching support" in deleted and "subdomain_matching`` is enabled" in inserted
    assert "Does not restrict requests to only this domain" in inserted
    assert "APPLICATION_ROOT" not in deleted + inserted
    # Neither side of the entry is listed as having no counterpart.
    unpaired = report.removed_unpaired + report.added_unpaired
    assert not [c for c in unpaired if "py:data:: SERVER_NAME" in c.text or "subdomain_matching`` is enabled" in c.text]
    assert all(p.similarity >= 0.6 and p.left.source == p.right.source for p in report.changed)
    assert len({p.right.chunk_id for p in report.changed}) == len(report.changed)


def test_another_asked_entry_pairs_with_its_own_block(reports: Any) -> None:
    pair = next(p for p in reports["max_content_length"].changed if p.subject == "max_content_length")
    assert ".. py:data:: MAX_CONTENT_LENGTH\n\n    Don't read more" in pair.left.text
    assert ".. py:data:: MAX_CONTENT_LENGTH\n\n    The maximum number of bytes" in pair.right.text
    assert pair.left_text.endswith("read for security.\n\n    Default: ``None``")
    assert "413 :exc:`~werkzeug.exceptions.RequestEntityTooLarge`" in pair.right_text
