"""``ragtt eval`` as a CI gate (exit 1 regression, 0 fine, 2 bad input), ``--out``, and
``ragtt test capture`` / ``test run`` with references and ``--at``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

import ragtt
from ragtt.cli import main
from tests.evaluation.test_sample_matrix import REFUND_THEN, sample_project

STABLE = (
    "Write to billing@nimbus-notes.example from the address on your account and include the order number "
    "from your receipt."
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("gate") / "proj"
    sample_project(path).close()
    yield path


def dataset(tmp_path: Path, passage: str) -> Path:
    path = tmp_path / "qs.jsonl"
    rows = [{"question": "How long is the refund window and how do I ask?", "reference_contexts": [passage]}]
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return path


def ragtt_cli(folder: Path, *args: str) -> int:
    return main(["--project", str(folder), "--embedder", "hash", *args])


def test_a_question_that_fell_exits_1(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qs = dataset(tmp_path, REFUND_THEN)
    code = ragtt_cli(folder, "eval", str(qs), "--at", "latest", "--baseline", "release-1", "--mode", "bm25")
    out = capsys.readouterr().out
    assert code == 1, out
    assert (
        "gate on context_recall: 1 question fell more than 0 (the gate's threshold) below release-1 (the baseline) "
        "at release-3; exit 1"
    ) in out
    # the got-worse list says its own threshold is another one (it read "fell below 0.5" beside the gate's 0)
    assert "got worse (context_recall fell below 0.5, the got-worse threshold;" in out


def test_the_got_worse_list_follows_the_gates_metric(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Gated on context_precision, the got-worse list and ``regressions`` are context_precision's
    (they were context_recall's whatever the gate's metric)."""
    qs = dataset(tmp_path, REFUND_THEN)
    args = ("eval", str(qs), "--at", "latest", "--baseline", "release-1", "--mode", "bm25")
    assert ragtt_cli(folder, *args, "--metric", "context_precision") == 1
    out = capsys.readouterr().out
    assert "got worse (context_precision fell below 0.5, the got-worse threshold;" in out
    assert "gate on context_precision:" in out
    assert ragtt_cli(folder, *args, "--metric", "context_precision", "--json") == 1
    data = json.loads(capsys.readouterr().out)
    assert data["gate"]["metric"] == "context_precision" and data["gate"]["threshold"] == 0.0
    assert [(r["metric"], r["threshold"]) for r in data["regressions"]] == [("context_precision", 0.5)]


def test_no_fall_exits_0_and_writes_the_cells(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qs = dataset(tmp_path, STABLE)
    out = tmp_path / "m.parquet"
    code = ragtt_cli(folder, "eval", str(qs), "--baseline", "release-1", "--mode", "bm25", "--out", str(out))
    assert code == 0, capsys.readouterr()
    cells = pl.read_parquet(out)
    assert set(cells["label"].to_list()) == {"release-1", "release-2", "release-3"}
    html = tmp_path / "m.html"
    assert ragtt_cli(folder, "eval", str(qs), "--mode", "bm25", "--out", str(html)) == 0
    assert html.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    capsys.readouterr()
    assert ragtt_cli(folder, "eval", str(qs), "--mode", "bm25", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["metrics"] == ["context_recall", "context_precision"] and data["gate"] is None


def test_a_threshold_lets_a_small_fall_pass(folder: Path, tmp_path: Path) -> None:
    qs = dataset(tmp_path, REFUND_THEN)
    args = ("eval", str(qs), "--at", "latest", "--baseline", "release-1", "--mode", "bm25")
    assert ragtt_cli(folder, *args, "--threshold", "1") == 0
    assert ragtt_cli(folder, *args, "--metric", "context_precision") == 1


@pytest.mark.parametrize(
    "args",
    [
        ("eval", "missing.jsonl"),
        ("eval", "{qs}", "--baseline", "release-9"),
        ("eval", "{qs}", "--metric", "ndgc"),
        ("eval", "{qs}", "--metric", "ndcg@10"),  # names --top-k 10, not only Python's top_k=10
        ("eval", "{bad}"),
        ("eval", "{qs}", "--at", "latest", "--judge", "no-such-provider/judge-model"),  # was litellm's traceback
    ],
)
def test_bad_input_exits_2(
    folder: Path, tmp_path: Path, args: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    qs = dataset(tmp_path, STABLE)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "refrence": "a"}\n', encoding="utf-8")
    filled = [a.format(qs=qs, bad=bad) for a in args]
    assert ragtt_cli(folder, *filled) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1  # one line, no traceback
    if "ndcg@10" in args:
        assert "--top-k 10" in err


def test_a_wrong_out_suffix_is_refused_before_evaluating(folder: Path, tmp_path: Path) -> None:
    qs = dataset(tmp_path, STABLE)
    with ragtt.Project.open(folder, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        before = proj.events.frame(types=["evaluation.cells"]).height
    with pytest.raises(SystemExit) as exited:
        ragtt_cli(folder, "eval", str(qs), "--out", str(tmp_path / "m.xlsx"))
    assert exited.value.code == 2
    with ragtt.Project.open(folder, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        assert proj.events.frame(types=["evaluation.cells"]).height == before


def test_test_capture_keeps_references_and_test_run_takes_at(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite.json"
    code = ragtt_cli(
        folder,
        *("test", "capture", "--name", "nimbus", "--at", "release-1", "-o", str(suite)),
        *("--query", "How long is the refund window?", "--reference", "30 days", "--must-contain", "30 days|refund"),
    )
    assert code == 0, capsys.readouterr()
    saved = json.loads(suite.read_text(encoding="utf-8"))
    assert saved["index_version"] == 3
    assert saved["queries"][0]["reference"] == "30 days"
    assert saved["queries"][0]["must_contain"] == ["30 days", "refund"]
    capsys.readouterr()
    assert ragtt_cli(folder, "test", "run", str(suite), "--at", "release-1", "--json") == 0
    assert json.loads(capsys.readouterr().out)["index_version"] == 3
    items = ragtt.EvalDataset.load(suite).items
    assert items[0].must_contain == ["30 days", "refund"]


def test_test_capture_and_run_name_the_version_by_its_label(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--at release-1`` reads back as "release-1 (v3)", as every other verb names a version
    (it printed "at v3"); ``--at 5`` by the label that names v5."""
    suite = tmp_path / "suite.json"
    args = ("--name", "nimbus", "-o", str(suite), "--query", "How long is the refund window?")
    assert ragtt_cli(folder, "test", "capture", "--at", "release-1", *args) == 0
    assert capsys.readouterr().out.strip() == "captured 1 golden query at release-1 (v3) (nimbus)"
    ragtt_cli(folder, "test", "run", str(suite), "--at", "release-1")
    assert capsys.readouterr().out.startswith("golden suite 'nimbus' at release-1 (v3): 1 of 1 passed")
    ragtt_cli(folder, "test", "run", str(suite), "--at", "5")
    assert capsys.readouterr().out.startswith("golden suite 'nimbus' at release-3 (v5): ")
    with ragtt.Project.open(folder, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        report = proj.regression.run(suite, at="release-2")
    assert report.to_text().startswith("golden suite 'nimbus' at v4: ")  # no project to name it by


def test_capture_reads_a_dataset_as_its_queries_file(folder: Path, tmp_path: Path) -> None:
    qs = tmp_path / "qs.jsonl"
    qs.write_text(
        json.dumps({"question": "How long is the refund window?", "reference": "30 days", "must_contain": ["30 days"]})
        + "\n",
        encoding="utf-8",
    )
    suite = tmp_path / "suite.json"
    assert ragtt_cli(folder, "test", "capture", "--name", "n", "--queries-file", str(qs), "-o", str(suite)) == 0
    query = json.loads(suite.read_text(encoding="utf-8"))["queries"][0]
    assert (query["text"], query["reference"], query["must_contain"]) == (
        "How long is the refund window?",
        "30 days",
        ["30 days"],
    )


def test_an_out_file_that_cannot_be_written_leaves_no_temporary_file(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ragtt.marker import write_atomic

    out = tmp_path / "out"
    out.mkdir()
    (out / "m.html").mkdir()  # the rename over it fails
    qs = dataset(tmp_path, STABLE)
    code = ragtt_cli(folder, "eval", str(qs), "--mode", "bm25", "--out", str(out / "m.html"))
    assert (code, "Is a directory" in capsys.readouterr().err) == (2, True)
    with pytest.raises(UnicodeEncodeError):  # the write itself fails: a lone surrogate has no UTF-8
        write_atomic(out / "page.html", "<p>\ud800</p>")
    assert sorted(p.name for p in out.iterdir()) == ["m.html"]
