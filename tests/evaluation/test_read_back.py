"""An evaluation read back from the log alone (``Project.read_evaluation``, what a GET in the lab
sidebar shows): the same matrix the evaluation returned, with nothing searched or written, even
after its dataset file is gone; ``Project.evaluations`` lists what is there to read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragtt
from ragtt.errors import NotFoundError
from tests.core.test_verb_writes import state
from tests.nb.test_history_matrix import DATASET, build_flask


def test_an_evaluation_reads_back_from_the_log_alone(tmp_path: Path) -> None:
    path = build_flask(tmp_path / "proj")
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(row) + "\n" for row in DATASET), encoding="utf-8")
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        assert proj.evaluations() == []
        first = proj.evaluate(questions, at=["flask-0.10", "flask-1.0"])
        evaluated = proj.evaluate(questions)  # every snapshot: two read back, two searched
        theirs = evaluated.to_dict()  # (its reasons read the project: a question never found has one)
    questions.unlink()
    before = state(tmp_path)
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        (listed,) = proj.evaluations()
        back = proj.read_evaluation(evaluated.evaluation_id)
        mine = back.to_dict()
        with pytest.raises(NotFoundError, match=r"eval-nope.*" + evaluated.evaluation_id):
            proj.read_evaluation("eval-nope")
    assert state(tmp_path) == before
    assert first.evaluation_id == evaluated.evaluation_id
    assert listed["evaluation_id"] == evaluated.evaluation_id
    assert listed["source"] == str(questions) and listed["dataset"] == "questions"
    assert listed["versions"] == [c.version for c in evaluated.columns] and listed["questions"] == len(DATASET)
    assert (listed["mode"], listed["top_k"]) == (evaluated.plan["mode"], evaluated.plan["top_k"])
    assert (back.computed_versions, back.reused_versions) == (0, len(evaluated.columns))
    for key in ("computed_versions", "reused_versions"):
        mine.pop(key), theirs.pop(key)
    theirs["plan"].pop("engines", None), mine["plan"].pop("engines", None)
    assert mine == theirs
    assert back.regressions().equals(evaluated.regressions())  # its reasons too: the dataset is in the log
