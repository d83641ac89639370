"""The dataset an evaluation logs is found again by its fingerprint, the event's indexed
``doc_id``: evaluating and reading a matrix back read that one dataset's rows, never every
dataset the log holds; and a matrix read back holds the questions its cells have. On both
event-log backends."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import ragtt
from ragtt.events import base
from ragtt.events import types as ev
from tests.evaluation.test_sample_matrix import ROWS, SAMPLE

MODE = "bm25"
METRICS = ["context_recall"]


class ParsedDatasets:
    """The log's JSON decoding, noting the fingerprint of each dataset payload it decodes."""

    JSONDecodeError = json.JSONDecodeError
    dumps = staticmethod(json.dumps)

    def __init__(self) -> None:
        self.fingerprints: list[str] = []

    def loads(self, text: str | bytes, **kwargs: Any) -> Any:
        data = json.loads(text, **kwargs)
        if isinstance(data, dict) and "items" in data and "fingerprint" in data:
            self.fingerprints.append(data["fingerprint"])
        return data


def sample(open_project: Callable[..., ragtt.Project]) -> ragtt.Project:
    proj = open_project()
    for release in ("release-1", "release-2", "release-3"):
        proj.ingest(SAMPLE / release)
        proj.snapshot(release)
    return proj


def test_a_dataset_is_found_by_its_fingerprint_without_reading_the_others(
    backend: str, open_project: Callable[..., ragtt.Project], monkeypatch: pytest.MonkeyPatch
) -> None:
    proj = sample(open_project)
    other = ragtt.EvalDataset.from_records([ROWS[1]], name="other")
    mine = ragtt.EvalDataset.from_records(ROWS, name="mine")
    proj.evaluate(other, mode=MODE, metrics=METRICS, at="latest")
    matrix = proj.evaluate(mine, mode=MODE, metrics=METRICS)  # logged after the other: a scan meets that one first
    logged = proj.events.query(types=ev.EVALUATION_DATASET)
    assert [(e.doc_id, e.payload["fingerprint"]) for e in logged] == [
        (other.fingerprint, other.fingerprint),
        (mine.fingerprint, mine.fingerprint),
    ]
    parsed = ParsedDatasets()
    monkeypatch.setattr(base, "json", parsed)
    back = proj.read_evaluation(matrix.evaluation_id)
    assert parsed.fingerprints == [mine.fingerprint]  # its own rows, and no other dataset's
    assert back.regressions().equals(matrix.regressions()) and back.regressions().height == 1
    third = ragtt.EvalDataset.from_records([ROWS[0]], name="third")
    proj.evaluate(third, mode=MODE, metrics=METRICS, at="latest")  # new: logged, after a check that reads no rows
    proj.evaluate(mine, mode=MODE, metrics=METRICS, top_k=3)  # another plan: searched, the dataset not logged again
    assert parsed.fingerprints == [mine.fingerprint]
    monkeypatch.undo()
    logged = proj.events.query(types=ev.EVALUATION_DATASET)
    assert [e.doc_id for e in logged] == [other.fingerprint, mine.fingerprint, third.fingerprint]
    assert proj.events.exists(ev.EVALUATION_DATASET, doc_id=third.fingerprint)
    never = ragtt.EvalDataset.from_records([{"question": "Never evaluated?"}])
    assert not proj.events.exists(ev.EVALUATION_DATASET, doc_id=never.fingerprint)
    assert not proj.events.exists(ev.EVALUATION_CELLS, doc_id=mine.fingerprint)


def test_a_matrix_read_back_holds_the_questions_its_cells_have(
    backend: str, open_project: Callable[..., ragtt.Project], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dataset row no cell names is no question of the matrix read back (not a row of empty
    cells); the questions that have cells keep their logged references, and so their reasons."""
    proj = sample(open_project)
    log = proj.events
    real = log.append_many

    def without_the_second_question(events, conn=None):  # type: ignore[no-untyped-def]
        """A log whose cells name fewer questions than the dataset's rows."""
        for e in events:
            if e.type == ev.EVALUATION_CELLS:
                e.payload["cells"] = e.payload["cells"][:1]
        return real(events, conn)

    monkeypatch.setattr(log, "append_many", without_the_second_question)
    matrix = proj.evaluate(ROWS, mode=MODE, metrics=METRICS)
    monkeypatch.undo()
    (logged,) = log.query(types=ev.EVALUATION_DATASET)
    assert len(logged.payload["items"]) == 2
    back = proj.read_evaluation(matrix.evaluation_id)
    assert back.questions == [ROWS[0]["question"]] and back.question_ids == matrix.question_ids[:1]
    assert back.frame().equals(matrix.frame().filter(question_id=matrix.question_ids[0]))
    (fell,) = back.regressions().to_dicts()
    assert fell["reason"].startswith('the reference passage "You can ask for a full refund within'), fell["reason"]
