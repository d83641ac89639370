"""Question sets in the forms people have them: ``EvalDataset``.

``EvalDataset.load(path)`` reads a golden suite made by ``ragtt test capture`` (JSON), a
JSONL, CSV or Parquet table, or a BEIR folder (``queries.jsonl`` and ``qrels/*.tsv``; the
corpus is not read: its documents are the project's sources). ``from_frame`` takes a Polars
frame or anything with ``__arrow_c_stream__``; ``from_records`` a list of dicts.

Columns: ``question`` (required), ``id``, ``reference`` (a reference answer),
``reference_contexts`` (passages that must be retrieved: texts, or ``{"text", "source",
"chunk_id"}`` objects), ``relevant`` (qrels: source or chunk id -> grade) and
``must_contain`` (strings the answer must hold). RAGAS's ``user_input`` is ``question``;
its ``retrieved_contexts`` and ``response`` are accepted and not used (ragtt retrieves and
answers at each version itself). In CSV, list and mapping cells are JSON text (or Python
literals, as pandas writes them).
"""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt._hashing import sha256_hex
from ragtt.errors import ValidationError
from ragtt.results import Result
from ragtt.timetravel.golden import GoldenPassage
from ragtt.values import first_line

if TYPE_CHECKING:
    import polars as pl

__all__ = ["ACCEPTED", "EvalDataset", "EvalItem", "as_dataset"]

COLUMNS = ("id", "question", "reference", "reference_contexts", "relevant", "must_contain")
# RAGAS's names -> ours; None: accepted and not used.
ALIASES: dict[str, str | None] = {"user_input": "question", "retrieved_contexts": None, "response": None}
ACCEPTED = ", ".join(COLUMNS) + " (RAGAS's user_input, retrieved_contexts, response also)"
_MAX_ERRORS = 10
_FORMS = "a golden suite (.json), a table (.jsonl, .csv, .parquet, or a .json list of objects) or a BEIR folder"


@dataclass(frozen=True)
class EvalItem(Result):
    """One question and what a good run at any version must show for it."""

    id: str
    question: str
    reference: str | None = None
    reference_contexts: list[GoldenPassage] = field(default_factory=list)
    relevant: dict[str, float] = field(default_factory=dict)
    must_contain: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvalItem:
        """The item ``to_dict()`` gave (as an ``evaluation.dataset`` event logs it)."""
        return cls(
            str(data["id"]),
            str(data["question"]),
            data.get("reference"),
            [GoldenPassage.from_dict(p) for p in data.get("reference_contexts") or []],
            {str(k): float(g) for k, g in (data.get("relevant") or {}).items()},
            [str(s) for s in data.get("must_contain") or []],
        )


@dataclass(frozen=True)
class EvalDataset(Result):
    """A question set: ``EvalDataset.load(path)``, ``from_frame(df)`` or ``from_records(rows)``."""

    name: str
    items: list[EvalItem]

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        has = [c for c in COLUMNS[2:] if any(getattr(i, c) for i in self.items)]
        return f"EvalDataset({self.name!r}, {len(self.items)} questions, with {', '.join(has) or 'questions only'})"

    @property
    def fingerprint(self) -> str:
        """A hash of every item: the same questions and references give the same fingerprint."""
        return sha256_hex(json.dumps([i.to_dict() for i in self.items], sort_keys=True, ensure_ascii=False))

    def frame(self) -> pl.DataFrame:
        import polars as pl

        return pl.DataFrame(
            [
                {
                    "id": i.id,
                    "question": i.question,
                    "reference": i.reference,
                    "reference_contexts": [p.text for p in i.reference_contexts],
                    "relevant": json.dumps(i.relevant) if i.relevant else None,
                    "must_contain": i.must_contain,
                }
                for i in self.items
            ],
            schema={
                "id": pl.String,
                "question": pl.String,
                "reference": pl.String,
                "reference_contexts": pl.List(pl.String),
                "relevant": pl.String,
                "must_contain": pl.List(pl.String),
            },
        )

    # -- constructors ------------------------------------------------------------------------

    @classmethod
    def load(cls, path: str | Path) -> EvalDataset:
        """Read a golden suite, a JSONL / CSV / Parquet table, or a BEIR folder."""
        path = Path(path).expanduser()
        if not path.is_dir() and not path.is_file():
            raise ValidationError(f"no dataset at {path}: expected {_FORMS}")
        suffix = path.suffix.lower()
        try:
            if path.is_dir():
                return _beir(path)
            if suffix == ".json":
                data = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(data, dict) and "queries" in data and "plan" in data:
                    return _golden(path)
                if not isinstance(data, list):
                    raise ValidationError(f"{path.name} is JSON but neither a golden suite nor a list of objects")
                return cls.from_records(data, name=path.stem)
            if suffix == ".jsonl":
                return cls.from_records(_jsonl(path), name=path.stem)
            if suffix in (".csv", ".parquet"):
                return cls.from_frame(_table(path), name=path.stem)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValidationError(f"cannot read dataset {path}: {exc}") from None
        raise ValidationError(f"cannot read {path.name} as a dataset: expected {_FORMS}")

    @classmethod
    def from_frame(cls, frame: Any, name: str = "frame") -> EvalDataset:
        """From a Polars frame, or any table with ``__arrow_c_stream__`` (pandas, PyArrow, DuckDB)."""
        import polars as pl

        if not isinstance(frame, pl.DataFrame):
            if not hasattr(frame, "__arrow_c_stream__"):
                raise ValidationError(
                    "from_frame takes a Polars DataFrame or an object with __arrow_c_stream__; "
                    f"got {type(frame).__name__}"
                )
            import pyarrow as pa

            converted = pl.from_arrow(pa.table(frame))
            assert isinstance(converted, pl.DataFrame)
            frame = converted
        return cls.from_records(frame.to_dicts(), name=name)

    @classmethod
    def from_records(cls, rows: Iterable[Mapping[str, Any]], name: str = "records") -> EvalDataset:
        """From a list of dicts, one per question (the columns above as keys)."""
        rows = list(rows)
        if not rows:
            raise ValidationError("the dataset has no questions")
        bad = [k for k, r in enumerate(rows, start=1) if not isinstance(r, Mapping)]
        if bad:
            raise ValidationError(f"row {bad[0]} is not an object; each row is one question with columns {ACCEPTED}")
        keys = list(dict.fromkeys(k for r in rows for k in r))
        rename = _columns(keys)
        errors: list[str] = []
        items = []
        for number, row in enumerate(rows, start=1):
            values = {str(rename[k]): v for k, v in row.items() if rename.get(k) and not _missing(v)}
            item = _item(number, values, errors)
            if item is not None:
                items.append(item)
        seen: set[str] = set()
        for item in items:
            if item.id in seen:
                errors.append(f"id {item.id!r} is used by two questions; ids must be unique")
            seen.add(item.id)
        if errors:
            more = f" (and {len(errors) - _MAX_ERRORS} more)" if len(errors) > _MAX_ERRORS else ""
            raise ValidationError("; ".join(errors[:_MAX_ERRORS]) + more, errors)
        return cls(name, items)


def _jsonl(path: Path) -> list[Any]:
    """One object per line; a line that does not parse is named by its number in the file."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValidationError(f"cannot read dataset {path}: line {number} is not JSON ({exc.msg})") from None
    return rows


def _table(path: Path) -> pl.DataFrame:
    """A CSV (every cell as text) or Parquet file; one that Polars cannot read (empty, cut
    short, another format under the suffix) is a ValidationError, not Polars's own error."""
    import polars as pl

    try:
        return pl.read_csv(path, infer_schema=False) if path.suffix.lower() == ".csv" else pl.read_parquet(path)
    except pl.exceptions.PolarsError as exc:
        reason = first_line(exc)
        raise ValidationError(f"cannot read dataset {path}: {reason}") from None


def _columns(keys: Sequence[str]) -> dict[str, str | None]:
    """Column name -> our name (None: accepted, unused); an unknown or missing column raises."""
    rename: dict[str, str | None] = {}
    unknown = []
    for key in keys:
        if key in COLUMNS:
            rename[key] = key
        elif key in ALIASES:
            rename[key] = ALIASES[key]
        else:
            unknown.append(key)
    if unknown:
        raise ValidationError(
            f"unknown column {unknown[0]!r}"
            + (f" (and {', '.join(map(repr, unknown[1:]))})" if unknown[1:] else "")
            + f"; the accepted columns are {ACCEPTED}"
        )
    targets = [v for v in rename.values() if v]
    if "question" not in targets:
        raise ValidationError(f"missing column 'question' (RAGAS: 'user_input'); the accepted columns are {ACCEPTED}")
    if targets.count("question") > 1:
        raise ValidationError("both 'question' and 'user_input' are given; keep one")
    return rename


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _decoded(value: Any) -> Any:
    """JSON text in a CSV cell (a list or an object) as the value it spells, or a Python
    literal (what pandas's ``to_csv``, and so RAGAS's, writes for a list: single quotes);
    any other text is itself (a passage may start with "[")."""
    if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            pass
        try:
            literal = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return value
        return literal if isinstance(literal, list | dict) else value
    return value


def _item(number: int, values: dict[str, Any], errors: list[str]) -> EvalItem | None:
    before = len(errors)

    def wrong(column: str, expected: str, got: Any) -> None:
        errors.append(f"row {number}: column {column!r} must be {expected}; got {type(got).__name__} {got!r:.60}")

    question = values.get("question")
    if not isinstance(question, str) or not question.strip():
        wrong("question", "a non-empty string", question)
    item_id = values.get("id", str(number))
    if not isinstance(item_id, str | int) or isinstance(item_id, bool):
        wrong("id", "a string or an integer", item_id)
    reference = values.get("reference")
    if reference is not None and not isinstance(reference, str):
        wrong("reference", "a string (the reference answer)", reference)
    contexts = []
    raw_contexts = _decoded(values.get("reference_contexts", []))
    if isinstance(raw_contexts, str):
        raw_contexts = [raw_contexts]
    if not isinstance(raw_contexts, list):
        wrong("reference_contexts", "a list of passages", raw_contexts)
    else:
        for ctx in raw_contexts:
            if isinstance(ctx, str):
                contexts.append(GoldenPassage("", "", sha256_hex(ctx), ctx))
            elif isinstance(ctx, Mapping) and isinstance(ctx.get("text"), str):
                text = str(ctx["text"])
                contexts.append(
                    GoldenPassage(str(ctx.get("chunk_id") or ""), str(ctx.get("source") or ""), sha256_hex(text), text)
                )
            else:
                wrong("reference_contexts", "a list of texts or {'text', 'source'} objects", ctx)
                break
    relevant: dict[str, float] = {}
    raw_relevant = _decoded(values.get("relevant", {}))
    if isinstance(raw_relevant, list) and all(isinstance(r, str) for r in raw_relevant):
        raw_relevant = dict.fromkeys(raw_relevant, 1)
    if isinstance(raw_relevant, Mapping):
        # A mapping column of a frame or Parquet file is a struct of every row's ids: an id
        # another row judged is null here, so a null grade means "not judged".
        raw_relevant = {k: g for k, g in raw_relevant.items() if not _missing(g)}
    if not isinstance(raw_relevant, Mapping) or not all(
        isinstance(g, int | float) and not isinstance(g, bool) for g in raw_relevant.values()
    ):
        wrong("relevant", "a mapping of source or chunk id -> grade (or a list of ids)", raw_relevant)
    else:
        relevant = {str(k): float(g) for k, g in raw_relevant.items()}
    must = _decoded(values.get("must_contain", []))
    if isinstance(must, str):
        must = [must]
    if not isinstance(must, list) or not all(isinstance(m, str) for m in must):
        wrong("must_contain", "a list of strings", must)
    if len(errors) > before or not isinstance(question, str):
        return None
    return EvalItem(str(item_id), question, reference, contexts, relevant, list(must))


def _golden(path: Path) -> EvalDataset:
    from ragtt.timetravel.regression import GoldenSuite

    suite = GoldenSuite.load(path)
    items = [
        EvalItem(str(n), q.text, q.reference, list(q.expected_passages), {}, list(q.must_contain))
        for n, q in enumerate(suite.queries, start=1)
    ]
    if not items:
        raise ValidationError(f"the golden suite {path.name} has no queries")
    return EvalDataset(suite.name, items)


def _beir(folder: Path) -> EvalDataset:
    """BEIR: queries.jsonl ({"_id", "text"}) and qrels/*.tsv (query-id, corpus-id, score):
    test.tsv when there is one, else every split. Queries with no judgment are left out."""
    queries_file, qrels_dir = folder / "queries.jsonl", folder / "qrels"
    if not queries_file.is_file() or not qrels_dir.is_dir():
        raise ValidationError(
            f"{folder} is not a dataset: a folder must be in BEIR's format, with queries.jsonl and qrels/*.tsv"
        )
    split = qrels_dir / "test.tsv"
    files = [split] if split.is_file() else sorted(qrels_dir.glob("*.tsv"))
    qrels: dict[str, dict[str, float]] = {}
    for file in files:
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
            parts = line.split("\t")
            if not line.strip() or (number == 1 and not _is_number(parts[-1])):
                continue  # blank, or the header
            if len(parts) != 3 or not _is_number(parts[2]):
                raise ValidationError(f"{file.name} line {number}: expected query-id, corpus-id, score; got {line!r}")
            qrels.setdefault(parts[0], {})[parts[1]] = float(parts[2])
    rows = []
    for number, query in enumerate(_jsonl(queries_file), start=1):
        if not isinstance(query, dict) or "_id" not in query or not isinstance(query.get("text"), str):
            raise ValidationError(
                f"{queries_file.name} query {number}: expected an object with '_id' and 'text'; got {query!r:.80}"
            )
        qid = str(query["_id"])
        if qid in qrels:
            rows.append({"id": qid, "question": query["text"], "relevant": qrels[qid]})
    if not rows:
        raise ValidationError(f"no query in {queries_file} has a judgment in {', '.join(f.name for f in files)}")
    return EvalDataset.from_records(rows, name=folder.name)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def as_dataset(value: Any) -> EvalDataset:
    """An ``EvalDataset`` from what ``proj.evaluate`` accepts: one, a path, a frame or a list of dicts."""
    if isinstance(value, EvalDataset):
        return value
    if isinstance(value, str | Path):
        return EvalDataset.load(value)
    if isinstance(value, list):
        return EvalDataset.from_records(value)
    if hasattr(value, "__arrow_c_stream__") or type(value).__module__.startswith("polars"):
        return EvalDataset.from_frame(value)
    raise ValidationError(
        f"a dataset is an EvalDataset, a path ({_FORMS}), a frame or a list of dicts; got {type(value).__name__}"
    )
