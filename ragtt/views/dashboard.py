"""What every dashboard over a project shows beside the widgets: the logged queries (newest
first, searchable, paged), the versions with their labels and what each ingest changed, the
sources, and a widget's model state and message replies by the widget's name.

``ragtt serve``'s ``/ui`` and the JupyterLab sidebar (over the Jupyter server extension) both answer from
here, so the two show the same data. Bad arguments raise ragtt's errors (a missing argument
is a ``MissingArgumentError``, an unknown widget a ``NotFoundError``); the widgets' own
``ValueError``/``FileNotFoundError`` pass through for the front end to name.
"""

from __future__ import annotations

import base64
import json
import math
from typing import TYPE_CHECKING, Any

from ragtt.errors import MissingArgumentError, NotFoundError, ValidationError
from ragtt.generate import answer_content

if TYPE_CHECKING:
    from pathlib import Path

    from ragtt.project import Project

__all__ = ["WIDGETS", "logged_queries", "sources", "versions", "widget_model", "widget_reply", "wire"]

WIDGETS = ("timeline", "chunk_diff", "drift_scatter", "pdf_overlay", "history_matrix")
PREVIEW = 160  # characters of an answer a list shows


def wire(value: Any) -> Any:
    """Model state as JSON-able data: buffers as ``{"$buffer": base64}``, non-finite floats as null."""
    if isinstance(value, memoryview | bytes | bytearray):
        return {"$buffer": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, dict):
        return {str(k): wire(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [wire(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def logged_queries(
    proj: Project, search: str = "", *, offset: int = 0, limit: int = 100
) -> tuple[int, list[dict[str, Any]], int]:
    """``(total, page, evaluation_runs)``: the runs a person asked for (live queries, golden runs), newest first,
    each with its kind, retrieval mode, the start of its answer (None without one; an extractive
    answer's quoted text, without its label, with ``extractive`` true) and its ``replays``: the
    replays of it, newest first, in the same form. A replay belongs to the run
    it replays (``original_query_id``); a question asked of the past (``replay --text``, the
    sidebar's "Diff with now") to the newest run of the same question before it. A replay
    that belongs to none is a row of its own (kind ``replay``). An evaluation's cells are not
    listed (the history matrix shows them): ``evaluation_runs`` counts them. ``search`` keeps the
    runs whose text holds every one of its words, in any order, case-insensitive; ``total``
    counts rows."""
    import polars as pl

    from ragtt.events import types as ev

    replayed = ev.REPLAY_PREFIX + ev.QUERY_RECEIVED
    frame = proj.events.frame(types=[ev.QUERY_RECEIVED, replayed]).with_columns(
        pl.col("payload").str.json_path_match("$.text").alias("text"),
        pl.col("payload").str.json_path_match("$.purpose").alias("purpose"),
        pl.col("payload").str.json_path_match("$.original_query_id").alias("original_query_id"),
    )
    for word in search.lower().split():
        frame = frame.filter(pl.col("text").str.to_lowercase().str.contains(word, literal=True))
    cells = pl.col("purpose").fill_null("") == "evaluation"
    evaluation_runs = int(frame.select(cells.sum()).item())
    frame = frame.filter(~cells)
    owners = _replay_owners(frame, replayed)
    rows = frame.filter(~pl.col("query_id").is_in(list(owners))).sort("seq", descending=True)
    total = rows.height
    page = rows.slice(offset, limit)
    ids = page["query_id"].to_list()
    owned: dict[str, list[str]] = {}
    for replay_id, owner in reversed(owners.items()):  # newest first
        owned.setdefault(owner, []).append(replay_id)
    children = [r for i in ids for r in owned.get(i, [])]
    described = _describe(proj, frame.filter(pl.col("query_id").is_in(ids + children)), replayed)
    listed = [{**described[i], "replays": [described[r] for r in owned.get(i, [])]} for i in ids]
    return total, listed, evaluation_runs


def _question(text: Any) -> Any:
    """A question's text as two runs of it compare: case and spacing aside (polars expression)."""
    return text.str.to_lowercase().str.replace_all(r"\s+", " ").str.strip_chars()


def _replay_owners(frame: Any, replayed: str) -> dict[str, str]:
    """replay id -> the listed run it belongs to, oldest replay first (``logged_queries``).
    One pass in log order: a question asked of the past belongs to the newest run of the same
    question seen so far, so each run is looked at once however long the history."""
    import polars as pl

    if not frame.select((pl.col("type") == replayed).any()).item():
        return {}
    logged = set(frame["query_id"].to_list())
    newest: dict[str | None, str] = {}  # question -> its newest run so far (not a replay)
    owners: dict[str, str] = {}
    rows = frame.sort("seq").select(
        pl.col("type") == replayed, "query_id", "original_query_id", _question(pl.col("text"))
    )
    for is_replay, query_id, original, question in rows.iter_rows():
        if not is_replay:
            newest[question] = query_id
            continue
        if original is not None:  # a replay of a run: that run's (of a replay: what that one belongs to)
            owner = owners.get(original, original) if original in logged else None
        else:  # a question asked of the past: the newest run of it before
            owner = newest.get(question)
        if owner is not None:
            owners[query_id] = owner
    return owners


def _describe(proj: Project, runs: Any, replayed: str) -> dict[str, dict[str, Any]]:
    """query id -> the list's fields of each run in ``runs`` (its mode and answer read by id)."""
    from ragtt.events import types as ev

    ids = runs["query_id"].to_list()
    kinds = (ev.RETRIEVAL_EXECUTED, ev.GENERATION_EXECUTED)
    # Only the listed runs are read (by id, in SQL): reading every retrieval of a long history
    # to keep a hundred cost the sidebar's first paint most of a second at 10,000 queries.
    details = proj.events.runs(ids, types=[*kinds, *(ev.REPLAY_PREFIX + k for k in kinds)])
    modes: dict[str, str | None] = {}
    answers: dict[str, tuple[str, bool]] = {}
    for query_id, events in details.items():
        for event in events:
            if event.type.removeprefix(ev.REPLAY_PREFIX) == ev.RETRIEVAL_EXECUTED:
                plan = event.payload.get("plan")
                modes[query_id] = plan.get("mode") if isinstance(plan, dict) else None
            elif (answer := event.payload.get("answer")) is not None:
                content, extractive = answer_content(str(answer))
                answers[query_id] = (" ".join(content.split())[:PREVIEW], extractive)
    return {
        r["query_id"]: {
            "query_id": r["query_id"],
            "text": r["text"],
            "ts": r["ts"],
            "index_version": r["index_version"],
            "kind": "replay" if r["type"] == replayed else "golden" if r["purpose"] == "regression" else "live",
            "original_query_id": r["original_query_id"],
            "mode": modes.get(r["query_id"]),
            "answer": answers[r["query_id"]][0] if r["query_id"] in answers else None,
            "extractive": answers.get(r["query_id"], ("", False))[1],
        }
        for r in runs.iter_rows(named=True)
    }


def versions(proj: Project) -> list[dict[str, Any]]:
    """Every table version, oldest first: its operation, commit time, the date its ingest
    carried (``as_of``, or None), snapshot label (or None) and, for an ingest, the documents
    and chunk counts it changed (else None)."""
    import polars as pl

    from ragtt.events import types as ev

    labels = proj.version_labels()
    as_of = proj.events.as_of_times()
    changed: dict[int, dict[str, Any]] = {}
    ingests = proj.events.frame(types=[ev.INGEST_COMPLETED])
    for payload in ingests.select(pl.col("payload")).to_series().to_list():
        done = json.loads(payload)
        summary = {k: done.get(k) for k in ("documents", "removed", "chunks_added", "chunks_removed", "chunks_kept")}
        for v in done.get("versions") or []:
            changed[int(v)] = summary
    return [
        {
            "version": int(r["version"]),
            "operation": r["operation"],
            "committed_at": r["committed_at"],
            "as_of": as_of[int(r["version"])].isoformat() if int(r["version"]) in as_of else None,
            "label": labels.get(int(r["version"])),
            "changed": changed.get(int(r["version"])),
        }
        for r in proj.versions().iter_rows(named=True)
    ]


def sources(proj: Project) -> list[dict[str, Any]]:
    """The project's sources, sorted, each saying whether it is a PDF (the overlay's)."""
    if proj.versions().is_empty():
        return []
    names = sorted(set(proj.chunks()["source"].to_list()))
    return [{"source": s, "pdf": s.lower().endswith(".pdf")} for s in names]


def widget_model(
    proj: Project,
    widget: str,
    args: dict[str, str | None],
    *,
    files_root: Path | None = None,
    generate: bool = True,
) -> dict[str, Any]:
    """The traits a fresh ``widget`` (one of ``WIDGETS``) has, from its arguments by name.
    ``files_root``: the folder a server keeps its callers' paths in (``ragtt.server_paths``;
    None: ``$RAGTT_FILES_ROOT``, else the project's folder). ``generate=False`` writes nothing:
    a diffed run without an answer is shown without one (else it gets one through a logged
    replay, as ``proj.diff`` does)."""
    from ragtt.views import chunk_diff, drift_scatter, history_matrix, pdf_overlay, timeline

    def need(name: str) -> str:
        value = args.get(name)
        if not value:
            raise MissingArgumentError(f"{widget} needs the query parameter {name!r}")
        return value

    if widget == "timeline":
        return timeline.model(proj, args.get("query_id") or None)
    if widget == "chunk_diff":
        return chunk_diff.model(proj, need("left"), need("right"), generate=generate)
    if widget == "drift_scatter":
        return drift_scatter.model(proj, need("a"), need("b"), query=args.get("query") or None)
    if widget == "pdf_overlay":
        return pdf_overlay.model(proj, need("source"), query_id=args.get("query_id") or None)
    if widget == "history_matrix":
        return history_matrix.model(proj, _matrix(proj, args, files_root), metric=args.get("metric") or None)
    raise NotFoundError(f"no widget {widget!r}; the dashboard has {', '.join(WIDGETS)}")


def _matrix(proj: Project, args: dict[str, str | None], files_root: Path | None) -> Any:
    """The matrix a history_matrix's arguments name, read back from the log (never evaluated):
    ``evaluation`` (an id) at the versions ``at`` lists, else what ``POST /evaluate`` logged for
    ``dataset`` (a path under ``files_root``) at ``at``."""
    from ragtt.evaluation.run import at_spec

    if args.get("evaluation"):
        # at the versions it was opened on: the same id evaluated later at more versions has more
        versions = at_spec([args.get("at") or ""])
        if not isinstance(versions, list) or not all(isinstance(v, int) for v in versions):
            raise ValidationError(f"history_matrix: at lists version numbers with an evaluation; got {args['at']!r}")
        return proj.read_evaluation(str(args["evaluation"]), at=[int(v) for v in versions] or None)
    from ragtt.server_paths import confine_path
    from ragtt.server_paths import files_root as files_root_for

    if not args.get("dataset"):
        raise MissingArgumentError("history_matrix needs the query parameter 'dataset'")
    dataset = confine_path(str(args["dataset"]), files_root or files_root_for(proj.path), "history_matrix: dataset")
    return proj.evaluate(dataset, at=at_spec([args.get("at") or "snapshots"]), read_only=True)  # reads back only


def widget_reply(
    proj: Project,
    widget: str,
    args: dict[str, str | None],
    content: dict[str, Any],
    *,
    files_root: Path | None = None,
) -> list[dict[str, Any]]:
    """The replies the widget's Python side would send to a message its view sent
    (``msg:custom`` content and buffers): the PDF overlay's pages, and what the history
    matrix's state left out (diffs, timelines, a metric's got-worse list, from the matrix its
    ``args`` name: ``files_root`` as ``widget_model``'s)."""
    if widget not in WIDGETS:
        raise NotFoundError(f"no widget {widget!r}; the dashboard has {', '.join(WIDGETS)}")
    if widget == "history_matrix":  # diffs and timelines past its state's bound
        from ragtt.views import history_matrix
        from ragtt.views.wire import split_buffers

        answer = history_matrix.answer(proj, content) or history_matrix.worse_answer(
            lambda: _matrix(proj, args, files_root), content
        )
        if answer is None:
            return []
        content, buffers = split_buffers(answer)
        return [{"content": content, "buffers": buffers}]
    if widget != "pdf_overlay":
        return []  # the other views send nothing that needs an answer
    from ragtt.views import pdf_overlay

    source = args.get("source")
    if not source:
        raise MissingArgumentError("a pdf_overlay message needs args.source")
    path = pdf_overlay.find_pdf(proj, source, None)
    reply = pdf_overlay.page_reply(path, pdf_overlay.page_count(path), pdf_overlay.ZOOM, content)
    return [] if reply is None else [{"content": reply[0], "buffers": list(reply[1])}]
