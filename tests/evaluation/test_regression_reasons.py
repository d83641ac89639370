"""Why a question got worse, on Flask's real history: a reference passage edited out of its
source by a re-ingest, one still in its source but ranked below the top-k, one whose source
was removed (renamed), a relevant id that left, ``ragtt eval --json`` carrying the same
``regressions`` as the matrix's frame, and the matrix read back from the log alone giving the
same reasons (the lineage for cells logged before the log kept datasets)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import ragtt
from ragtt.cli import main
from ragtt.evaluation.matrix import Fall
from ragtt.events import types as ev
from ragtt.timetravel.golden import DEFAULT_MATCH, REACH, containment, shingles, text_shingles
from tests.conftest import ingest_releases

RELEASES = ("flask-0.12", "flask-1.0", "flask-1.1.2", "flask-2.0.0", "flask-3.0.0", "flask-3.0.3")
MODE, TOP_K = "bm25", 5
# In installation.rst up to 1.1.2; 2.0.0 rewrote it ("Flask supports Python 3.6 and newer").
EDITED = "We recommend using the latest version of Python 3. Flask supports Python 3.4 and newer, Python 2.7, and PyPy."
# In config.rst at every one of these releases, verbatim.
KEPT = (
    "This first loads the configuration from the `yourapplication.default_settings` module and then overrides the "
    "values with the contents of the file the :envvar:`YOURAPPLICATION_SETTINGS` environment variable points to."
)
# In security.rst until 3.0.0; 3.0.3 renamed the file web-security.rst.
MOVED = "Flask configures Jinja2 to automatically escape all values unless explicitly told otherwise."
ROWS: list[dict[str, Any]] = [
    {"id": "python", "question": "Which Python versions does Flask support?", "reference_contexts": [EDITED]},
    {
        "id": "settings",
        "question": "settings from environment",
        "reference_contexts": [{"text": KEPT, "source": "docs/config.rst"}],
    },
    {
        "id": "escaping",
        "question": "Does Flask escape values in templates automatically?",
        "reference_contexts": [{"text": MOVED, "source": "docs/security.rst"}],
    },
    {"id": "xss", "question": "cross-site scripting XSS", "relevant": {"docs/security.rst": 1}},
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("reasons") / "proj"
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        ingest_releases(proj, RELEASES)
    return path


@pytest.fixture(scope="module")
def dataset(folder: Path) -> Path:
    path = folder.parent / "questions.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in ROWS), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def cli_json(folder: Path, dataset: Path) -> dict[str, Any]:
    """``ragtt eval --json`` through the real entry point, before the API reads the matrix back."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(
            [
                "--project",
                str(folder),
                "--embedder",
                "hash",
                "eval",
                str(dataset),
                "--mode",
                MODE,
                "--top-k",
                "5",
                "--json",
            ]
        )
    assert code == 0, out.getvalue()
    return dict(json.loads(out.getvalue()))


@pytest.fixture(scope="module")
def proj(folder: Path, cli_json: dict[str, Any]) -> Iterator[ragtt.Project]:
    with ragtt.Project.open(folder, embedder=ragtt.HashEmbedder(), progress=False) as p:
        yield p


@pytest.fixture(scope="module")
def matrix(proj: ragtt.Project, dataset: Path) -> ragtt.HistoryMatrix:
    found = proj.evaluate(dataset, mode=MODE, top_k=TOP_K)
    assert found.computed_versions == 0  # read back from what the CLI logged: the same runs
    return found


def regression(matrix: ragtt.HistoryMatrix, question_id: str, metric: str = "context_recall") -> dict[str, Any]:
    rows = matrix.regressions(metric).filter(pl.col("question_id") == question_id).to_dicts()
    assert len(rows) == 1, matrix.to_text()
    return rows[0]


def held(proj: ragtt.Project, passage: str, source: str, at: str) -> float:
    return containment(shingles(passage), text_shingles(proj.document(source, at=at).text))


def test_a_passage_edited_out_by_a_re_ingest_names_the_re_ingest(
    proj: ragtt.Project, matrix: ragtt.HistoryMatrix
) -> None:
    row = regression(matrix, "python")
    assert (row["last_good_label"], row["first_bad_label"]) == ("flask-1.1.2", "flask-2.0.0")
    assert held(proj, EDITED, "docs/installation.rst", "flask-1.1.2") >= DEFAULT_MATCH
    assert held(proj, EDITED, "docs/installation.rst", "flask-2.0.0") < DEFAULT_MATCH
    bad = f"flask-2.0.0 (v{row['first_bad_version']})"
    # the words 1.1.2's text held in the passage's place and 2.0.0's lacks: "3.5", not the reference's "3.4"
    assert row["reason"].startswith(
        f"docs/installation.rst at flask-1.1.2 (v{row['last_good_version']}) held the reference passage "
        'approximately, with the words "3" and "3.5 and newer, Python 2.7, and PyPy"; '
        f"docs/installation.rst was re-ingested at {bad} without them; "
    ), row["reason"]
    now = " ".join(proj.document("docs/installation.rst", at="flask-2.0.0").text.split())
    assert "We recommend using the latest version of Python" in now and "3.5 and newer, Python 2.7, and PyPy" not in now


def test_every_quoted_word_run_was_at_the_version_the_reason_names(
    proj: ragtt.Project, matrix: ragtt.HistoryMatrix
) -> None:
    """A reason quotes the good version's words, never the reference's where that version said
    otherwise: the reference "Python 3.4" matched 1.1.2's "Python 3.5" approximately."""
    rows = matrix.regressions().to_dicts()
    assert rows
    for row in rows:
        source = re.search(r"(docs/[\w.-]+) at ", row["reason"])  # the source that held the passage
        assert source, row["reason"]
        then = " ".join(proj.document(source[1], at=row["last_good_label"]).text.split())
        for quoted in re.findall(r'"([^"]+)"', row["reason"]):
            assert quoted.removesuffix(" …") in then, (quoted, row["reason"])


def test_a_passage_still_in_its_source_says_its_rank(proj: ragtt.Project, matrix: ragtt.HistoryMatrix) -> None:
    row = regression(matrix, "settings")
    assert (row["last_good_label"], row["first_bad_label"]) == ("flask-1.0", "flask-1.1.2")
    assert held(proj, KEPT, "docs/config.rst", "flask-1.1.2") == 1.0
    prefix = (
        'the reference passage "This first loads the configuration from the `yourapplication.default_settings` …" '
        f"is still in docs/config.rst at flask-1.1.2 (v{row['first_bad_version']}) but ranked below the top 5 (rank "
    )
    assert row["reason"].startswith(prefix), row["reason"]
    rank = int(row["reason"].removeprefix(prefix).rstrip(")"))
    assert rank > TOP_K
    # the chunk at that rank of a deeper replay is the first of config.rst to carry the passage
    deeper = proj.replay_text("settings from environment", at="flask-1.1.2", mode=MODE, top_k=50).chunks
    own = shingles(KEPT)
    carrying = [c.rank for c in deeper if c.source == "docs/config.rst" and containment(own, shingles(c.text)) >= REACH]
    assert carrying and carrying[0] == rank


def test_a_passage_whose_source_was_removed_says_so_and_where_it_is_now(matrix: ragtt.HistoryMatrix) -> None:
    row = regression(matrix, "escaping")
    assert (row["last_good_label"], row["first_bad_label"]) == ("flask-3.0.0", "flask-3.0.3")
    bad = f"flask-3.0.3 (v{row['first_bad_version']})"
    assert row["reason"].startswith(
        'the reference passage "Flask configures Jinja2 to automatically escape all values …" was in '
        f"docs/security.rst at flask-3.0.0 (v{row['last_good_version']}); docs/security.rst was removed at {bad}; "
        f"the passage is in docs/web-security.rst at {bad} (rank "
    ), row["reason"]


def test_a_relevant_id_that_left_is_named_with_its_lineage(matrix: ragtt.HistoryMatrix) -> None:
    row = regression(matrix, "xss", metric=f"ndcg@{TOP_K}")
    assert row["first_bad_label"] == "flask-3.0.3"
    assert row["reason"].startswith("relevant docs/security.rst (grade 1, was #1) left: chunk "), row["reason"]
    assert f"docs/security.rst was removed at flask-3.0.3 (v{row['first_bad_version']})" in row["reason"]


def test_json_carries_the_regressions_of_the_frame(cli_json: dict[str, Any], matrix: ragtt.HistoryMatrix) -> None:
    assert cli_json["regressions"] == matrix.regressions().to_dicts()
    assert {r["question_id"] for r in cli_json["regressions"]} == {"python", "settings", "escaping"}
    assert all(
        r["metric"] == "context_recall" and r["threshold"] == 0.5 and r["reason"] for r in cli_json["regressions"]
    )
    assert matrix.to_dict()["regressions"] == cli_json["regressions"]
    # the text view says the same reasons
    for r in cli_json["regressions"]:
        assert f"why: {r['reason']}" in matrix.to_text()


def test_a_matrix_read_back_from_the_log_alone_gives_the_same_reasons(
    proj: ragtt.Project, matrix: ragtt.HistoryMatrix
) -> None:
    """The log keeps the dataset's rows (once): the sidebar, /ui and a re-run of a logged id explain
    its regressions by the reference passages and qrels, as the evaluation did."""
    logged = proj.read_evaluation(matrix.evaluation_id)
    for metric in ("context_recall", f"ndcg@{TOP_K}"):
        mine, theirs = logged.regressions(metric), matrix.regressions(metric)
        assert mine.height > 0 and mine.equals(theirs), (mine["reason"].to_list(), theirs["reason"].to_list())
    assert logged.to_dict()["regressions"] == matrix.to_dict()["regressions"]
    assert len(proj.events.query(types=ev.EVALUATION_DATASET)) == 1  # the CLI's evaluation logged it, once


def test_an_evaluation_logged_before_datasets_were_reads_back_with_lineage_reasons(
    proj: ragtt.Project, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cells from an older ragtt (no dataset in the log) still read back, their reasons the lineage
    sentence; evaluating the same dataset and plan at more versions now logs it, and then the
    matrix read back explains every version's regressions as the evaluation does."""
    log = proj.events
    real = log.append_many

    def as_before(events, conn=None):  # type: ignore[no-untyped-def]
        """What ragtt wrote before: no evaluation.dataset event, cells that name no dataset."""
        for e in events:
            if e.type == ev.EVALUATION_CELLS:
                e.payload.pop("dataset_fingerprint", None)
        return real([e for e in events if e.type != ev.EVALUATION_DATASET], conn)

    metrics = ["context_recall"]  # another evaluation of the same dataset than the module's
    monkeypatch.setattr(log, "append_many", as_before)
    old = proj.evaluate(dataset, at=["flask-0.12", "flask-1.0", "flask-1.1.2"], mode=MODE, top_k=TOP_K, metrics=metrics)
    monkeypatch.undo()
    back = proj.read_evaluation(old.evaluation_id)
    assert back.frame().equals(old.frame())
    (fell,) = back.regressions().to_dicts()
    assert fell["question_id"] == "settings" and fell["reason"].startswith("chunk "), fell["reason"]
    assert "docs/config.rst was re-ingested at flask-1.1.2" in fell["reason"]
    assert old.regressions()["reason"][0].startswith('the reference passage "This first loads')

    every = proj.evaluate(dataset, mode=MODE, top_k=TOP_K, metrics=metrics)
    assert (every.evaluation_id, every.computed_versions) == (old.evaluation_id, 3)
    again = proj.read_evaluation(old.evaluation_id)
    assert again.regressions().height == 3 and again.regressions().equals(every.regressions())
    assert len(proj.events.query(types=ev.EVALUATION_DATASET)) == 1  # one per dataset, not per evaluation


def test_one_dataset_is_logged_once_under_each_name_it_is_evaluated_as(
    proj: ragtt.Project, matrix: ragtt.HistoryMatrix, dataset: Path
) -> None:
    """The dataset's rows are logged by their content: the same rows evaluated under another name
    (and plan) add no copy, and each evaluation reads back under its own name."""
    renamed = ragtt.EvalDataset.from_records(ROWS, name="renamed")
    assert renamed.fingerprint == ragtt.EvalDataset.load(dataset).fingerprint
    other = proj.evaluate(renamed, mode=MODE, top_k=TOP_K, metrics=["context_precision"])
    assert other.evaluation_id != matrix.evaluation_id
    assert len(proj.events.query(types=ev.EVALUATION_DATASET)) == 1
    assert proj.read_evaluation(other.evaluation_id).dataset == "renamed"
    assert proj.read_evaluation(matrix.evaluation_id).dataset == "questions"


def test_the_cell_views_draw_without_explaining(proj: ragtt.Project, matrix: ragtt.HistoryMatrix) -> None:
    """/ui and the lab tab draw the cells without paying for the regressions' reasons; the
    got-worse list of the metric picked comes after (``worse_answer``), that metric's alone."""
    from ragtt.views.history_matrix import model, worse_answer

    def refuse(falls: list[Fall]) -> list[str | None]:
        raise AssertionError(f"a cell view explained {len(falls)} regressions")

    quiet = dataclasses.replace(matrix, explain=refuse)
    data = model(proj, quiet)["_data"]
    assert data["questions"]["ids"] == [r["id"] for r in ROWS]
    assert data["worse"] == {"threshold": 0.5, "metrics": {}}  # the view asks for the list it shows
    assert "regressions" not in quiet.to_dict(regressions=False)
    with pytest.raises(AssertionError, match="explained 3 regressions"):
        quiet.to_dict()
    asked: list[Fall] = []
    explain = matrix.explain
    assert explain is not None

    def counted(falls: list[Fall]) -> list[str | None]:
        asked.extend(falls)
        return explain(falls)

    counting = dataclasses.replace(matrix, explain=counted)
    reply = worse_answer(lambda: counting, {"type": "worse", "key": "k", "metric": "context_recall"})
    assert reply is not None and {f.metric for f in asked} == {"context_recall"}
    expected = matrix.regressions("context_recall")
    assert [r["reason"] for r in reply["rows"]] == expected["reason"].to_list()
    questions = [r["id"] for r in ROWS]
    assert [questions[r["question"]] for r in reply["rows"]] == expected["question_id"].to_list()
    columns = [c.version for c in matrix.columns]
    assert [columns[r["bad"]] for r in reply["rows"]] == expected["first_bad_version"].to_list()
    failed = worse_answer(lambda: quiet, {"type": "worse", "key": "k", "metric": "context_recall"})
    assert failed is not None and "explained 3 regressions" in failed["error"]  # a reply that says why
