"""Issue 30 on a real history: what a newcomer saw on Flask's docs at six releases.

The newcomer's session: ingest 0.12, 1.0, 1.1.2, 2.0.0, 3.0.0 and 3.1.3 with a snapshot each,
ask about ``SEND_FILE_MAX_AGE_DEFAULT`` at the first and the last, ask other questions, then
diff, lineage, replay, bisect and the CLI. Between 0.12 and 3.1.3 the config page moved from
an RST table to ``.. py:data::`` blocks, and the default went from 43200 to ``None``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import ragtt
from ragtt.errors import NotFoundError
from ragtt.generate import excerpt
from ragtt.timetravel.passages import pair_passages
from ragtt.verbs import result_text
from tests.conftest import corpus

RELEASES = (
    "2016-12-21_flask-0.12",
    "2018-04-26_flask-1.0",
    "2020-04-03_flask-1.1.2",
    "2021-05-11_flask-2.0.0",
    "2023-09-30_flask-3.0.0",
    "2026-02-18_flask-3.1.3",
)
Q = "What is the default value of SEND_FILE_MAX_AGE_DEFAULT?"
OTHER = "How do I install Flask?"


@pytest.fixture(scope="module")
def flask(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = corpus("evolving", "flask")
    path = tmp_path_factory.mktemp("newcomer") / "proj"
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        asked = {}
        for release in RELEASES:
            proj.ingest(root / release)
            proj.snapshot(f"flask-{release.split('_flask-')[1]}")
            if release == RELEASES[0]:
                asked["first"] = proj.query(Q)
        asked["last"] = proj.query(Q)
        asked["other"] = proj.query(OTHER)  # the newest live query is now another question
        yield proj, asked


def _cli(proj: ragtt.Project, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    from ragtt.cli import main

    assert main([*args, "--project", str(Path(proj.path)), "--embedder", "hash"]) == 0
    return capsys.readouterr().out


# -- 1: diffs that survive reformatting ---------------------------------------------------------


def _send_file_pair(report: ragtt.DiffReport) -> Any:
    return next(p for p in report.changed if p.subject == "send_file_max_age_default")


def test_a_reformatted_and_edited_entry_is_one_changed_passage_with_43200_to_none(flask: Any) -> None:
    proj, asked = flask
    report = proj.diff(asked["first"].query_id, asked["last"].query_id)
    pair = _send_file_pair(report)
    assert "``SEND_FILE_MAX_AGE_DEFAULT``" in pair.left.text and ".. py:data:: SEND_FILE_MAX_AGE_DEFAULT" in (
        pair.right.text
    )
    # The retrieved 0.12 chunk ends before "Defaults to 43200": the passage is the whole entry.
    assert "43200" not in pair.left.text and "Defaults to 43200 (12 hours)" in pair.left_text
    assert pair.right_text.endswith("Default: ``None``")
    deleted = " ".join(t for op, t in pair.runs if op == "delete")
    inserted = " ".join(t for op, t in pair.runs if op == "insert")
    assert "43200" in deleted and "None" in inserted
    assert pair.signals["bigrams"] < 0.6 <= pair.similarity  # words alone never paired them
    assert pair_passages([pair.left], [pair.right]) == []  # (the bigram pairing the newcomer had)
    gone = {c.chunk_id for c in report.removed_unpaired} | {c.chunk_id for c in report.added_unpaired}
    assert pair.left.chunk_id not in gone and pair.right.chunk_id not in gone
    text = report.to_text()
    edit = next(line for line in text.splitlines() if "43200" in line)
    assert edit.index("[-") < edit.index("43200") < edit.index("-]") < edit.index("{+") < edit.rindex("None")


def test_card_excerpt_is_the_sentence_matching_the_query_and_text_is_not_cut_at_70(flask: Any) -> None:
    proj, asked = flask
    report = proj.diff(asked["first"].query_id, asked["last"].query_id)
    pair = _send_file_pair(report)
    # The now-chunk opens with USE_X_SENDFILE's entry; the card shows SEND_FILE_MAX_AGE_DEFAULT's.
    assert pair.right.text.startswith("Default: ``True``\n\n.. py:data:: USE_X_SENDFILE")
    assert pair.right.excerpt.startswith("SEND_FILE_MAX_AGE_DEFAULT: ")
    assert pair.right.excerpt == excerpt(Q, pair.right.text)
    assert report.to_dict()["changed"][0]["right"]["excerpt"] == pair.right.excerpt
    text = report.to_text()
    for c in report.added_unpaired + report.removed_unpaired:
        flat = " ".join(c.excerpt.split())
        assert c.excerpt and flat in text, flat  # whole, not its first 70 characters
    assert any(len(c.excerpt) > 70 for c in report.added_unpaired + report.removed_unpaired)


# -- 2: both answers, always --------------------------------------------------------------------


def test_a_diff_generates_the_answer_a_replay_did_not_and_logs_it(flask: Any) -> None:
    proj, asked = flask
    then = proj.replay(asked["first"].query_id)  # replays do not generate by default
    assert then.answer is None
    report = proj.diff(then.query_id, asked["last"].query_id)
    made = report.generated["left"]
    assert report.left_answer is not None and report.left_answer == proj.run(made).answer
    assert "43200" not in report.right_answer and "``None``" in report.right_answer
    assert report.answer_runs and any(op != "equal" for op, _ in report.answer_runs)
    assert report.to_dict()["generated"] == {"left": made} and "generated for this diff" in report.to_text()
    replays = proj.events.frame(types=["replay.query.received"]).height
    again = proj.diff(then.query_id, asked["last"].query_id)  # reuses the logged answer
    assert again.generated == {"left": made} and proj.events.frame(types=["replay.query.received"]).height == replays
    bare = proj.diff(then.query_id, asked["last"].query_id, generate=False)
    assert bare.left_answer is None and bare.generated == {}


# -- 3: no false alarms -------------------------------------------------------------------------


def test_replay_text_has_no_original_and_says_so(flask: Any) -> None:
    proj, _ = flask
    run = proj.replay_text(Q, at="flask-1.0")
    assert run.original_query_id is None and run.matches_original is None
    assert run.to_dict()["original_query_id"] is None and run.to_dict()["matches_original"] is None
    for shown in (run._repr_html_(), result_text(run)):
        assert "DIFFERS" not in shown and "no original" in shown
    replayed = proj.replay(run.query_id)  # a replay of it has an original: itself
    assert replayed.original_query_id == run.query_id and replayed.matches_original is True
    assert f"replay matches original {run.query_id}" in result_text(replayed)


# -- 4: the same question, or a warning ---------------------------------------------------------


def test_diff_and_lineage_warn_when_the_questions_differ(flask: Any, capsys: pytest.CaptureFixture[str]) -> None:
    proj, asked = flask
    first, other = asked["first"].query_id, asked["other"].query_id
    for report in (proj.diff(first, other), proj.lineage(first, other)):
        assert not report.same_question and Q in report.warning and OTHER in report.warning
        assert report.to_dict()["warning"] == report.warning and "WARNING" in report.to_text()
        assert "warning" in report._repr_html_()
    same = proj.diff(first, asked["last"].query_id)
    assert same.same_question and same.warning is None and "WARNING" not in same.to_text()
    assert "WARNING: the two runs asked different questions" in _cli(proj, capsys, "lineage", first, other)
    assert "WARNING: the two runs asked different questions" in _cli(proj, capsys, "diff", first, other)


def test_last_is_the_last_run_of_the_implied_question(flask: Any, capsys: pytest.CaptureFixture[str]) -> None:
    proj, asked = flask
    first = asked["first"].query_id
    assert proj.last_query() == asked["other"].query_id  # the newest live query is another question
    assert proj.last_query(Q) == asked["last"].query_id
    report = proj.diff(first, "last")
    assert report.right_id == asked["last"].query_id and report.warning is None
    lineage = proj.lineage("last", first)
    assert lineage.left_id == asked["last"].query_id and lineage.same_question
    assert asked["last"].query_id in _cli(proj, capsys, "lineage", first, "last")
    with pytest.raises(NotFoundError, match="no live query of"):
        proj.diff(proj.replay_text("never asked live", at="flask-1.0").query_id, "last")


# -- 5: chunk ids as printed --------------------------------------------------------------------


def test_bisect_takes_a_chunk_id_as_printed(flask: Any) -> None:
    proj, asked = flask
    top = asked["last"].chunks[0]
    printed = top.chunk_id[:10]  # how the diff, lineage and query results print it
    report = proj.bisect(Q, f"chunk:{printed}")
    assert report.predicate == f"chunk:{top.chunk_id}" and report.end_value is True
    assert report.first_version is not None and report.entered == report.first_version
    assert report.to_dict() == proj.bisect(Q, f"chunk:{top.chunk_id}").to_dict()
    with pytest.raises(NotFoundError, match="ambiguous") as ambiguous:
        proj.bisect(Q, f"chunk:{top.chunk_id[:1]}")
    assert top.chunk_id[:1] in str(ambiguous.value) and "give more characters" in str(ambiguous.value)
    with pytest.raises(NotFoundError, match="no chunk id starts with 'zz'"):
        proj.bisect(Q, "chunk:zz")


def test_query_ids_take_a_unique_prefix_everywhere_as_git_does(flask: Any, capsys: pytest.CaptureFixture[str]) -> None:
    proj, asked = flask
    first, last = asked["first"].query_id, asked["last"].query_id
    logged = proj.events.frame(types=["query.received", "replay.query.received"])["query_id"].unique().to_list()
    short = next(
        first[:n] for n in range(4, 33) if sum(q.startswith(first[:n]) for q in logged) == 1
    )  # the shortest prefix naming only the first run
    assert len(short) < len(first)
    assert proj.run(short).query_id == first and proj.run(short.upper()).query_id == first
    replayed = proj.replay(short)
    assert replayed.original_query_id == first and replayed.matches_original
    assert proj.run(replayed.query_id).query_id == replayed.query_id  # the full id was recorded
    assert proj.diff(short, "last").left_id == first and proj.lineage(short, last).left_id == first
    assert proj.trace(short)["query_id"].unique().to_list() == [first]
    assert first in _cli(proj, capsys, "replay", short)
    common = first[: next(i for i, (a, b) in enumerate(zip(first, last, strict=True)) if a != b)]
    assert len(common) >= 4  # ids are time-ordered: runs made seconds apart share their first digits
    with pytest.raises(NotFoundError, match="ambiguous") as ambiguous:
        proj.run(common)
    assert first in str(ambiguous.value) and last in str(ambiguous.value)
    with pytest.raises(NotFoundError, match="no query or replay with id"):
        proj.run("ffff")


def test_bisect_on_a_source_that_entered_at_the_last_version_says_when(flask: Any) -> None:
    proj, asked = flask
    report = proj.bisect(asked["last"].query_id, "source:docs/web-security.rst")
    last = proj.resolve_version("flask-3.1.3")
    assert report.versions_searched == 1 and report.entered == last
    assert f"docs/web-security.rst entered the index at flask-3.1.3 (v{last})" in report.to_text()
    over_all = proj.bisect(Q, "source:docs/web-security.rst")  # a text: every data version
    assert over_all.entered == last and "entered the index at flask-3.1.3" in over_all.to_text()


# -- 11: smaller --------------------------------------------------------------------------------


def test_cli_events_show_the_question_and_snapshots_print_a_table(
    flask: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    proj, asked = flask
    events = _cli(proj, capsys, "events", "--type", "query.received")
    line = next(x for x in events.splitlines() if asked["other"].query_id in x)
    assert line.endswith(repr(OTHER))
    table = _cli(proj, capsys, "snapshots").splitlines()
    assert table[0].split() == ["label", "version", "documents", "chunks", "created", "(UTC)", "as", "of", "(UTC)"]
    assert [row.split()[0] for row in table[1:]] == [f"flask-{r.split('_flask-')[1]}" for r in RELEASES]
    assert "Snapshot(" not in "\n".join(table)
    assert json.loads(_cli(proj, capsys, "snapshots", "--json"))[0]["label"] == "flask-0.12"


def test_the_extractive_answer_keeps_the_command_its_sentence_introduces(flask: Any) -> None:
    _, asked = flask
    answer = asked["other"].answer
    intro = "use the following command to install Flask:"
    assert intro in answer
    after = answer.split(intro, 1)[1]
    assert after.lstrip("\n").startswith("    $ pip install Flask")
