"""Issue 30.4 in the magics: ``%ragtt lineage <old> last`` after another question compared two
different questions; with one question implied, ``last`` is that question's last run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ragtt
from tests.conftest import corpus

Q = "What is the default value of SEND_FILE_MAX_AGE_DEFAULT?"


def test_last_is_the_last_run_of_the_question_the_other_id_asked(shell: Any, tmp_path: Path) -> None:
    root = corpus("evolving", "flask")
    with ragtt.Project.open(tmp_path / "proj", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        proj.ingest(root / "2016-12-21_flask-0.12")
        old = proj.query(Q).query_id
        proj.ingest(root / "2026-02-18_flask-3.1.3")
    shell.run_line_magic("ragtt", f"open {tmp_path / 'proj'}")
    now = shell.run_line_magic("ragtt", f"query {Q}").query_id
    shell.run_line_magic("ragtt", "query How do I install Flask?")  # the session's last query: another question
    lineage = shell.run_line_magic("ragtt", f"lineage {old} last")
    assert lineage.right_id == now and lineage.same_question and lineage.warning is None
    diff = shell.run_line_magic("ragtt", f"diff {old} last --table")
    assert diff.right_id == now and diff.warning is None
    other = shell.run_line_magic("ragtt", "diff last last --table")  # no question implied: the session's last
    assert other.left_query == other.right_query == "How do I install Flask?"
