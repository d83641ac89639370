"""EvalDataset in every form it reads, and the errors that say what is wrong."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

import ragtt
from tests.conftest import corpus

ROWS = [
    {
        "id": "refund",
        "question": "How long is the refund window?",
        "reference": "30 days on any plan",
        "reference_contexts": ["You can ask for a full refund within 30 days of any purchase."],
        "relevant": {"refund-policy.md": 2},
        "must_contain": ["30 days"],
    },
    {"id": "trash", "question": "How long are deleted notes kept?"},
]


def check(dataset: ragtt.EvalDataset) -> None:
    assert [i.id for i in dataset.items] == ["refund", "trash"]
    first, second = dataset.items
    assert first.reference == "30 days on any plan"
    assert [p.text for p in first.reference_contexts] == [
        "You can ask for a full refund within 30 days of any purchase."
    ]
    assert first.relevant == {"refund-policy.md": 2.0}
    assert first.must_contain == ["30 days"]
    assert second.reference is None and second.reference_contexts == [] and second.must_contain == []


def test_jsonl_json_csv_parquet_and_frames_read_the_same(tmp_path: Path) -> None:
    jsonl = tmp_path / "qs.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n", encoding="utf-8")
    listed = tmp_path / "qs.json"
    listed.write_text(json.dumps(ROWS), encoding="utf-8")
    csv = tmp_path / "qs.csv"
    pl.DataFrame(
        [{k: json.dumps(v) if isinstance(v, list | dict) else v for k, v in r.items()} for r in ROWS]
    ).write_csv(csv)
    parquet = tmp_path / "qs.parquet"
    frame = pl.DataFrame(
        [{**r, "relevant": json.dumps(r.get("relevant"))} if "relevant" in r else r for r in ROWS],
    )
    frame.write_parquet(parquet)
    loaded = [ragtt.EvalDataset.load(p) for p in (jsonl, listed, csv, parquet)]
    for dataset in loaded:
        check(dataset)
    assert len({d.fingerprint for d in loaded}) == 1
    check(ragtt.EvalDataset.from_frame(frame))
    check(ragtt.EvalDataset.from_frame(frame.to_arrow()))  # anything with __arrow_c_stream__
    assert isinstance(pa.table(frame.to_arrow()), pa.Table)


def test_ragas_names_are_aliases() -> None:
    rows = [
        {
            "user_input": "How long is the refund window?",
            "reference": "30 days",
            "retrieved_contexts": ["whatever a past run retrieved"],
            "reference_contexts": ["within 30 days of any purchase"],
            "response": "30 days",
        }
    ]
    item = ragtt.EvalDataset.from_records(rows).items[0]
    assert item.question == "How long is the refund window?"
    assert item.reference == "30 days" and [p.text for p in item.reference_contexts] == [
        "within 30 days of any purchase"
    ]


def test_a_mistyped_column_is_named_with_the_accepted_ones() -> None:
    with pytest.raises(ragtt.ValidationError) as caught:
        ragtt.EvalDataset.from_records([{"question": "q", "refrence": "a"}])
    message = str(caught.value)
    assert "'refrence'" in message
    for name in ("question", "reference", "reference_contexts", "relevant", "must_contain", "id", "user_input"):
        assert name in message


def test_a_missing_question_column_is_named() -> None:
    with pytest.raises(ragtt.ValidationError, match=r"missing column 'question'.*accepted columns are id, question"):
        ragtt.EvalDataset.from_records([{"reference": "a"}])


def test_a_wrong_type_names_the_row_and_column() -> None:
    with pytest.raises(ragtt.ValidationError) as caught:
        ragtt.EvalDataset.from_records(
            [{"question": "q1", "reference_contexts": 5}, {"question": "q2", "relevant": {"a.md": "high"}}]
        )
    assert caught.value.errors == [
        "row 1: column 'reference_contexts' must be a list of passages; got int 5",
        "row 2: column 'relevant' must be a mapping of source or chunk id -> grade (or a list of ids); "
        "got dict {'a.md': 'high'}",
    ]


def test_duplicate_ids_and_empty_sets_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ragtt.ValidationError, match="id 'x' is used by two questions"):
        ragtt.EvalDataset.from_records([{"id": "x", "question": "a"}, {"id": "x", "question": "b"}])
    with pytest.raises(ragtt.ValidationError, match="no questions"):
        ragtt.EvalDataset.from_records([])
    with pytest.raises(ragtt.ValidationError, match="expected a golden suite"):
        ragtt.EvalDataset.load(tmp_path / "missing.jsonl")
    odd = tmp_path / "qs.txt"
    odd.write_text("q\n", encoding="utf-8")
    with pytest.raises(ragtt.ValidationError, match=r"cannot read qs\.txt as a dataset"):
        ragtt.EvalDataset.load(odd)


def test_beir_reads_queries_and_qrels_only(tmp_path: Path) -> None:
    dataset = ragtt.EvalDataset.load(corpus("cranfield", "beir_format"))
    assert len(dataset) == 225
    first = dataset.items[0]
    assert first.id == "1" and first.question.startswith("what similarity laws")
    assert first.relevant["184"] == 3.0
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "refund window"}\n', encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\trefund-policy.md\t1\n")
    assert ragtt.EvalDataset.load(folder).items[0].relevant == {"refund-policy.md": 1.0}  # no corpus.jsonl needed


def test_a_golden_suite_carries_references(project: ragtt.Project, tmp_path: Path) -> None:
    project.ingest(Path(ragtt.__file__).parent / "sample" / "release-1")
    suite = project.regression.capture(
        ["How long is the refund window?", "How long are deleted notes kept?"],
        "nimbus",
        references=["30 days", None],
        must_contain=[["30 days"], []],
    )
    path = suite.save(tmp_path / "suite.json")
    dataset = ragtt.EvalDataset.load(path)
    assert dataset.name == "nimbus"
    refund, trash = dataset.items
    assert refund.reference == "30 days" and refund.must_contain == ["30 days"]
    assert trash.reference is None and trash.must_contain == []
    assert refund.reference_contexts and all(p.source and p.chunk_id for p in refund.reference_contexts)
    with pytest.raises(ragtt.ConfigError, match="one per query"):
        project.regression.capture(["a", "b"], "x", references=["only one"])


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("empty.csv", b"", r"cannot read dataset .*empty\.csv: empty CSV"),
        ("cut.parquet", b"PAR1 cut short", r"cannot read dataset .*cut\.parquet: "),
        ("text.parquet", b"question\nq\n", r"cannot read dataset .*text\.parquet: "),
        ("broken.jsonl", b'{"question": "a"}\n\n{"question": "b",\n', r"broken\.jsonl: line 3 is not JSON"),
    ],
)
def test_a_file_that_does_not_parse_is_a_validation_error(
    tmp_path: Path, name: str, content: bytes, expected: str
) -> None:
    # an empty CSV or a damaged Parquet file raised Polars's own error (a traceback and exit 1
    # from `ragtt eval`), and a bad JSONL line was reported as "line 1" whatever its number
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ragtt.ValidationError, match=expected):
        ragtt.EvalDataset.load(path)


def test_a_relevant_column_of_a_frame_or_parquet_file_reads(tmp_path: Path) -> None:
    # Polars, PyArrow and pandas store a column of mappings as a struct of every row's keys,
    # null where a row has none: each row was refused for its neighbours' ids ("got dict
    # {'x.md': 1, 'y.md': None}").
    import pandas as pd

    rows = [{"question": "a", "relevant": {"x.md": 1}}, {"question": "b", "relevant": {"y.md": 2, "z.md": 0}}]
    frame = pl.DataFrame(rows)
    frame.write_parquet(tmp_path / "qrels.parquet")
    for source in (frame, pa.Table.from_pylist(rows), pd.DataFrame(rows), tmp_path / "qrels.parquet"):
        dataset = ragtt.EvalDataset.load(source) if isinstance(source, Path) else ragtt.EvalDataset.from_frame(source)
        assert [i.relevant for i in dataset.items] == [{"x.md": 1.0}, {"y.md": 2.0, "z.md": 0.0}], type(source)


def test_a_csv_written_by_pandas_keeps_its_lists(tmp_path: Path) -> None:
    # pandas's to_csv (and so RAGAS's EvaluationDataset.to_csv) writes a list as a Python
    # literal; the cell was read as ONE passage, brackets and quotes included, silently.
    import pandas as pd

    passages = ["You can ask for a full refund within 30 days", "Write to billing@nimbus-notes.example"]
    pd.DataFrame([{"user_input": "refund?", "reference_contexts": passages, "relevant": {"refunds.md": 2}}]).to_csv(
        tmp_path / "ragas.csv", index=False
    )
    (item,) = ragtt.EvalDataset.load(tmp_path / "ragas.csv").items
    assert [p.text for p in item.reference_contexts] == passages and item.relevant == {"refunds.md": 2.0}
    markdown = "[WSGI]: https://wsgi.readthedocs.io/ is the interface"  # a passage that starts with "["
    pl.DataFrame({"question": ["q"], "reference_contexts": [markdown]}).write_csv(tmp_path / "md.csv")
    (item,) = ragtt.EvalDataset.load(tmp_path / "md.csv").items
    assert [p.text for p in item.reference_contexts] == [markdown]


@pytest.mark.parametrize(
    ("queries", "qrels", "expected"),
    [
        (b'{"_id": "1", "text": "a"}\n{broken\n', b"1\td1\t1\n", r"queries\.jsonl: line 2 is not JSON"),
        (b'{"id": "1", "text": "a"}\n', b"1\td1\t1\n", r"queries\.jsonl query 1: expected an object with '_id'"),
        (b'{"_id": "1"}\n', b"1\td1\t1\n", r"query 1: expected an object with '_id' and 'text'"),
        (b'["1", "a"]\n', b"1\td1\t1\n", r"query 1: expected an object"),
        (b'{"_id": "1", "text": "a"}\n', b"1\td\xe91\t1\n", r"cannot read dataset .*beir.*utf-8"),
    ],
)
def test_a_beir_folder_that_does_not_parse_is_a_validation_error(
    tmp_path: Path, queries: bytes, qrels: bytes, expected: str
) -> None:
    # each was Python's own error (JSONDecodeError, KeyError, TypeError, UnicodeDecodeError):
    # a traceback and exit 1 from `ragtt eval FOLDER`
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "queries.jsonl").write_bytes(queries)
    (folder / "qrels" / "test.tsv").write_bytes(qrels)
    with pytest.raises(ragtt.ValidationError, match=expected):
        ragtt.EvalDataset.load(folder)


def test_a_golden_suite_missing_a_field_names_it(tmp_path: Path) -> None:
    # the message was "cannot read golden suite g.json: 'name'" (a KeyError's bare key)
    path = tmp_path / "g.json"
    path.write_text(json.dumps({"queries": [{"text": "q"}], "plan": {}}), encoding="utf-8")
    with pytest.raises(ragtt.ConfigError, match=r"g\.json: it has no 'name' field"):
        ragtt.EvalDataset.load(path)
