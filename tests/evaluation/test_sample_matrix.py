"""The bundled sample's three releases: the judge under litellm's mock_response, a process
that dies mid-matrix, answers and the rendered matrix."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import ragtt
from ragtt.events import types as ev

SAMPLE = Path(ragtt.__file__).parent / "sample"
REFUND_THEN = "You can ask for a full refund within 30 days of any purchase, on any plan, monthly or annual."
ROWS = [
    {
        "question": "How long is the refund window?",
        "reference": "A full refund within 30 days of any purchase, on any plan.",
        "reference_contexts": [REFUND_THEN],
        "must_contain": ["30 days"],
    },
    {
        "question": "How do I ask for a refund?",
        "reference": "Write to billing@nimbus-notes.example with the order number.",
        "reference_contexts": [
            "Write to billing@nimbus-notes.example from the address on your account and include the order number "
            "from your receipt."
        ],
    },
]


def sample_project(path: Path) -> ragtt.Project:
    proj = ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False)
    for release in ("release-1", "release-2", "release-3"):
        proj.ingest(SAMPLE / release)
        proj.snapshot(release)
    return proj


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ragtt.Project]:
    with sample_project(tmp_path_factory.mktemp("sample") / "proj") as proj:
        yield proj


def test_the_refund_window_regresses_at_release_3_with_its_reason(sample: ragtt.Project) -> None:
    matrix = sample.evaluate(ROWS, mode="bm25")
    assert [c.label for c in matrix.columns] == ["release-1", "release-2", "release-3"]
    assert matrix.metrics == ["context_recall", "context_precision", "answer_match", "contains"]
    assert matrix.cells["contains"][0][0] == 1.0  # the answer at release 1 says "30 days"
    assert matrix.cells["contains"][1] == [None, None, None]  # nothing it must contain: absent
    found = matrix.regressions()
    assert found["question"].to_list() == ["How long is the refund window?"]
    row = found.row(0, named=True)
    assert row["first_bad_label"] == "release-3"
    assert row["reason"].startswith(
        'the reference passage "You can ask for a full refund within …" was in refund-policy.md at release-2 (v'
    ), row["reason"]
    assert "refund-policy.md was re-ingested at release-3" in row["reason"] and "no longer holds it" in row["reason"]
    contains = matrix.regressions("contains", threshold=1.0)
    assert contains["first_bad_label"].to_list() == ["release-2"]
    # the answer's lost string, then why retrieval changed (its reference passage was still found: the lineage)
    assert contains["reason"][0].startswith('the answer lost "30 days"; chunk '), contains["reason"][0]
    assert "refund-policy.md was re-ingested at release-2" in contains["reason"][0]
    # the text and HTML views say it too: which question, since when, and why
    text = matrix.to_text()
    worse = text[text.index("got worse (context_recall fell below 0.5") :]
    assert "How long is the refund window?: 1.00 at release-2 (v" in worse and "0.00 from release-3 (v" in worse
    assert f"why: {row['reason']}" in worse
    assert "got worse (context_recall" in matrix._repr_html_()


def test_the_judge_runs_once_and_is_read_back(sample: ragtt.Project, monkeypatch: pytest.MonkeyPatch) -> None:
    verdict = '{"faithfulness": 0.75, "correctness": 0.5}'
    judge = ragtt.LiteLLMJudge("openai/gpt-4o-mini", mock_response=verdict)
    matrix = sample.evaluate(ROWS, mode="bm25", judge=judge)
    assert matrix.cells["faithfulness"] == [[0.75] * 3, [0.75] * 3]
    assert matrix.cells["correctness"] == [[0.5] * 3, [0.5] * 3]
    logged = sample.events.query(types=ev.JUDGE_VERDICT)
    assert len(logged) == 6
    assert {e.payload["raw"] for e in logged} == {verdict}
    assert logged[0].payload["model"] == "openai/gpt-4o-mini"
    assert "How long is the refund window?" in logged[0].payload["messages"][1]["content"]
    assert {e.query_id for e in logged} == {q for row in matrix.query_ids for q in row}

    import litellm

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the judge was called again")

    monkeypatch.setattr(litellm, "completion", refuse)
    again = sample.evaluate(ROWS, mode="bm25", judge=ragtt.LiteLLMJudge("openai/gpt-4o-mini", mock_response=verdict))
    assert again.computed_versions == 0
    assert again.frame().equals(matrix.frame())


def test_a_verdict_that_does_not_parse_is_marked_with_its_raw_text(sample: ragtt.Project) -> None:
    raw = "I would say it is mostly faithful."
    matrix = sample.evaluate(ROWS, mode="bm25", judge=ragtt.LiteLLMJudge("openai/gpt-4o-mini", mock_response=raw))
    assert {"faithfulness", "correctness"} <= set(matrix.metrics)
    assert matrix.cells["faithfulness"][0] == [None, None, None]
    assert len(matrix.unparseable) == 12  # 2 questions x 3 versions x 2 metrics
    assert {u["raw"] for u in matrix.unparseable} == {raw}
    assert matrix.unparseable[0].keys() == {"question_id", "version", "metric", "raw"}
    frame = matrix.frame()
    marked = frame.filter(frame["metric"] == "faithfulness")
    assert marked.height == 6 and marked["value"].null_count() == 6
    assert set(marked["unparseable"].to_list()) == {raw}
    assert "did not parse" in matrix.to_text()


def test_a_process_dying_mid_matrix_leaves_whole_versions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with sample_project(tmp_path / "proj") as proj:
        log = proj.events
        real = log.append_many
        appended: list[int] = []

        def dies_on_the_second_version(events, conn=None):  # type: ignore[no-untyped-def]
            if conn is None and any(e.type == ev.EVALUATION_CELLS for e in events):  # (it calls itself with conn)
                appended.append(1)
                if len(appended) == 2:
                    raise KeyboardInterrupt  # the process dies while the second version is written
            return real(events, conn)

        monkeypatch.setattr(log, "append_many", dies_on_the_second_version)
        with pytest.raises(KeyboardInterrupt):
            proj.evaluate(ROWS, mode="bm25")
        monkeypatch.undo()
        cells = log.query(types=ev.EVALUATION_CELLS)
        runs = log.query(types="replay.query.completed")
        assert len(cells) == 1 and len(runs) == 2  # the first version whole, nothing of the second
        matrix = proj.evaluate(ROWS, mode="bm25")
        assert (matrix.computed_versions, matrix.reused_versions) == (2, 1)
        assert all(q is not None for row in matrix.query_ids for q in row)
        for row in matrix.query_ids:
            for query_id in row:
                assert proj.replay(str(query_id)).matches_original


def test_at_takes_lists_latest_and_versions(sample: ragtt.Project) -> None:
    both = sample.evaluate(ROWS, mode="bm25", at=["release-3", "release-1"])
    assert [c.label for c in both.columns] == ["release-1", "release-3"]
    latest = sample.evaluate(ROWS, mode="bm25", at="latest")
    assert [c.version for c in latest.columns] == [sample.version]
    every = sample.evaluate(ROWS, mode="bm25", at="versions")
    assert [c.version for c in every.columns] == [3, 4, 5]  # 1 and 2 made the empty table
    with pytest.raises(ragtt.NotFoundError, match="no snapshot labelled 'release-9'"):
        sample.evaluate(ROWS, at=["release-9"])
    with pytest.raises(ragtt.ConfigError, match="unknown metric 'ndgc'"):
        sample.evaluate(ROWS, metrics=["ndgc"])
    with pytest.raises(ragtt.ConfigError, match="judge"):
        sample.evaluate(ROWS, metrics=["faithfulness"])
    # a metric no question can be scored on, or none at all, searched every cell for an empty matrix
    with pytest.raises(ragtt.ConfigError, match=r"mrr is scored against relevant, and no question of 'records'"):
        sample.evaluate(ROWS, metrics="mrr")
    with pytest.raises(ragtt.ConfigError, match="names no metric"):
        sample.evaluate(ROWS, metrics=[])
    with pytest.raises(ragtt.ConfigError, match="correctness is scored against reference"):
        sample.evaluate([{"question": "q", "must_contain": ["x"]}], metrics=["correctness"], judge="openai/gpt-4o-mini")


def test_the_matrix_renders_escaped(sample: ragtt.Project, tmp_path: Path) -> None:
    rows = [{"question": "<script>alert(1)</script> refund?", "reference_contexts": [REFUND_THEN]}]
    matrix = sample.evaluate(rows, mode="bm25")
    html = matrix._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html
    page = matrix.to_html()  # the interactive page: the payload only in its JSON state, escaped
    assert "<script>" not in page and "\\u003cscript\\u003ealert(1)" in page
    saved = matrix.save_html(tmp_path / "m.html", metric="context_recall")
    assert saved.read_text(encoding="utf-8").count("<script") == page.count("<script") == 3
    with pytest.raises(ragtt.ConfigError, match=r"does not know its project: .*matrix.to_html\(proj\)"):
        dataclasses.replace(matrix, project=None).to_html()
    assert dataclasses.replace(matrix, project=None).to_html(sample).startswith("<!DOCTYPE html>")
    assert "release-3" in matrix.to_text()
    wide = matrix.wide("context_recall")
    assert wide.columns == ["question_id", "question", "release-1", "release-2", "release-3"]
    assert repr(matrix).startswith("HistoryMatrix('records', 1 question x 3 versions")


def test_a_page_of_a_matrix_whose_project_closed_says_so(tmp_path: Path) -> None:
    with sample_project(tmp_path / "proj") as proj:
        matrix = proj.evaluate(ROWS[:1], mode="bm25")
    assert proj.closed
    closed = (
        rf"the project this HistoryMatrix was evaluated on \({re.escape(str(proj.path))}\) is closed: "
        "write the page before it closes, or reopen it"
    )
    with pytest.raises(ragtt.ConfigError, match=closed):
        matrix.to_html()
    with pytest.raises(ragtt.ConfigError, match=closed):
        matrix.save_html(tmp_path / "m.html")
    assert list(tmp_path.glob("*m.html*")) == []  # nothing written, not even a temporary file
    with ragtt.Project.open(tmp_path / "proj", embedder=ragtt.HashEmbedder(), progress=False) as again:
        assert not again.closed
        with pytest.raises(ragtt.ConfigError, match=closed):  # its reasons would read the closed one
            matrix.to_html(again)
        evaluated = again.evaluate(ROWS[:1], mode="bm25")  # what the message says to do
        assert evaluated.computed_versions == 0
        assert evaluated.save_html(tmp_path / "m.html", embed_timelines=False).read_text().startswith("<!DOCTYPE")


def test_an_empty_dataset_is_refused_before_any_page(sample: ragtt.Project, tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(ragtt.ValidationError, match="the dataset has no questions"):
        sample.evaluate(empty).save_html(tmp_path / "m.html")
    assert list(tmp_path.glob("*m.html*")) == []


def test_cells_whose_runs_were_pruned_are_searched_again(tmp_path: Path) -> None:
    from datetime import timedelta

    with sample_project(tmp_path / "proj") as proj:
        proj.evaluate(ROWS, mode="bm25")
        assert proj.prune(max_age=timedelta(0)).queries_pruned == 6
        again = proj.evaluate(ROWS, mode="bm25")
        assert (again.computed_versions, again.reused_versions) == (3, 0)
        assert all(proj.replay(str(q)).matches_original for row in again.query_ids for q in row)


def test_a_fall_of_exactly_the_threshold_passes_the_gate(sample: ragtt.Project) -> None:
    # 8 of 10 passages at release-1, 7 of 10 at release-3: a fall of 0.1, which is not MORE
    # than --threshold 0.1; in floats 0.8 - 0.7 > 0.1, and the gate failed it.
    matrix = sample.evaluate(ROWS, mode="bm25")
    cells = {m: [list(row) for row in rows] for m, rows in matrix.cells.items()}
    cells["context_recall"][1] = [0.8, 0.8, 0.7]
    changed = dataclasses.replace(matrix, cells=cells)
    assert [f["question"] for f in changed.against("release-1", threshold=0.1).gate.fallen] == [ROWS[0]["question"]]
    assert changed.against("release-1", threshold=0.0999).gate.exit_code == 1
    assert [f["now"] for f in changed.against("release-1", threshold=0.0999).gate.fallen] == [0.0, 0.7]


def test_only_a_lost_passage_searches_deeper_and_a_failed_reason_costs_no_other(
    sample: ragtt.Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ragtt.timetravel.run as run

    matrix = sample.evaluate(ROWS, mode="bm25")
    asked: list[list[str]] = []

    def pruned(ctx: object, questions: list[str], *args: object, **kwargs: object) -> list[object]:
        asked.append(list(questions))
        raise ragtt.errors.ReplayError("version 5 was pruned")

    monkeypatch.setattr(run, "execute_many", pruned)
    # the answer lost "30 days" while its passage was still found: nothing to search deeper for
    contains = matrix.regressions("contains", threshold=1.0)
    assert asked == [] and contains["reason"][0].startswith('the answer lost "30 days"; chunk ')
    # the passage left: its deeper search fails, and the reason says so in its place
    recall = matrix.regressions()
    assert asked == [["How long is the refund window?"]]
    assert recall["reason"].to_list() == ["(no reason: version 5 was pruned)"]
    assert [r["reason"] for r in matrix.to_dict()["regressions"]] == ["(no reason: version 5 was pruned)"]
