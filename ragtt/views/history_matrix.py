"""The HistoryMatrix widget's model state (``_data``), from a ``ragtt.HistoryMatrix`` and its Project.

No widget stack here: the notebook's ``HistoryMatrix`` widget and ``ragtt serve``'s ``/ui``
both build on it. The matrix is read through its ``to_dict()`` only (metrics, questions,
columns, cells, query_ids, unparseable, and the regressions of the metrics whose got-worse
lists the state carries). Wire format, for ``Q`` questions and ``C`` columns (cells row-major,
question by question: cell ``q * C + c``):

- ``questions``: ``{"ids", "texts"}``; ``columns``: ``{"version"`` (int32), ``"labels"``,
  ``"at"}``; ``names``: version (as a string) -> the snapshot label that names it;
- ``values``: metric -> uint16 (``Q * C``): a value in [0, 1] as ``round(v * QUANT)``
  (within 1e-5, closer than the view's three decimals; half the bytes of float32, which at
  500 x 1,000 cells is a quarter of the page), ``ABSENT`` where the metric is absent;
  ``unparseable``: ``{"cell"`` (int32), ``"metric"`` (int32 index into ``metrics``), ``"raw"}``;
- ``runs``: every cell's query id, packed (``_wire.packed_ids``; a filler where a cell has no
  run), or None past ``ids_limit`` cells (``IDS_LIMIT``: 16 bytes a cell would make half of
  a 500 x 1,000 matrix's page): the view then asks the kernel by question and column;
- ``cell``: uint8 per cell, how its run compares with the question's run at the previous
  evaluated column that has one (``NO_RUN``, ``FIRST``, ``SAME``: the same chunk ids in the
  same order, ``CHANGED``, ``UNKNOWN``: not compared here, the view asks the kernel);
- ``chunks``: ``{"ids", "sources", "texts"}``, every chunk a diff or a timeline shows, once;
- ``diffs``: ``{"cell"`` (int32), ``"data"}``: a ChunkDiff ``_data`` per CHANGED cell, its
  chunks' ``sources``/``texts`` replaced by ``rows`` (int32 indexes into ``chunks``);
- ``timeline``: ``{"base"`` (a Timeline ``_data`` without its focal part, or None),
  ``"question"`` (int32), ``"focal"}``: each question's Timeline focal part (its run at the
  last column), its ``chunks`` list replaced by ``rows``;
- ``worse``: ``{"threshold"`` (``WORSE_THRESHOLD``), ``"metrics"}``: metric -> its got-worse
  list, each regression as ``{"question", "good", "bad"`` (the last good and first bad column),
  ``"good_value", "bad_value", "reason"}``; a metric not there is asked for (``worse_answer``):
  the offline page and the notebook carry every metric's, ``/ui`` none (they come after the cells);
- ``embed``: what was left out and why (``limit``, ``diffs_left_out``, ``timelines_left_out``,
  ``timelines``: whether they were asked for, ``compared``), and ``advice``: what the panel
  says to do when a click needs what the state lacks and nothing answers (``"bound"``: past
  the bound; ``"timelines"``: timelines not asked for), in the words of where it is shown.

Bounds: a diff is precomputed only where a cell's chunks differ from the previous column's,
most changed metric first, until the diffs pass three quarters of ``limit`` bytes, or
``MAX_DIFFS`` (the most changed cell's diff is always in); the questions' timelines fill
the rest, in question order, up to ``MAX_RETRIEVALS`` retrievals. Cells are compared only
up to ``COMPARE_LIMIT`` runs. What is left out is asked of the kernel over ``model.send``
(``answer``) when one is live; an offline report says so in the panel.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ragtt.errors import RagttError
from ragtt.evaluation.matrix import WORSE_THRESHOLD
from ragtt.events import types as ev
from ragtt.views import chunk_diff, timeline
from ragtt.views.page import widget_page
from ragtt.views.wire import array, packed_ids, packed_strings

__all__ = [
    "ABSENT",
    "CHANGED",
    "COMPARE_LIMIT",
    "EMBED_LIMIT",
    "FIRST",
    "IDS_LIMIT",
    "MAX_DIFFS",
    "MAX_RETRIEVALS",
    "NOTEBOOK_ADVICE",
    "NO_RUN",
    "PAGE_ADVICE",
    "QUANT",
    "SAME",
    "UNKNOWN",
    "answer",
    "build",
    "cell_states",
    "model",
    "page",
    "previous_runs",
    "quantize",
    "unquantize",
    "worse_answer",
]

NO_RUN, FIRST, SAME, CHANGED, UNKNOWN = range(5)
QUANT = 65534
ABSENT = 65535
EMBED_LIMIT = 20_000_000
"""Default bound, in bytes (about: text and buffers), on the diffs and timelines in the state as the
widget holds them; a page or a saved notebook writes the buffers base64, a third larger."""
MAX_DIFFS = 2_000
MAX_RETRIEVALS = 20_000
COMPARE_LIMIT = 200_000
IDS_LIMIT = 100_000
NOTEBOOK_ADVICE = {
    "bound": "open the notebook with a live kernel, or build the widget with a larger embed_limit.",
    "timelines": "timelines are precomputed by ragtt report --execute, HistoryMatrix(..., embed_timelines=True) "
    "or widget.embed_timelines()",
}
PAGE_ADVICE = {
    "bound": "write the page again with a larger embed_limit (matrix.save_html(path, embed_limit=...)), or open "
    "the evaluation in ragtt serve's /ui, which computes what is clicked.",
    "timelines": "the page was written with embed_timelines=False; matrix.save_html(path) puts them in",
}
_RETRIEVALS = (ev.RETRIEVAL_EXECUTED, ev.REPLAY_PREFIX + ev.RETRIEVAL_EXECUTED)


def model(proj: Any, matrix: Any, *, metric: str | None = None, limit: int = EMBED_LIMIT) -> dict[str, Any]:
    """The HistoryMatrix widget's traits as ``/ui`` shows it: ``_data``, ``metric``, ``selected``.
    Every cell's query id travels (the server's answers need them), timelines come from the
    server when a question is clicked, and so do the got-worse lists (``worse_answer``): the
    cells paint without waiting for the regressions' reasons."""
    data = build(proj, matrix.to_dict(regressions=False), limit=limit, metric=metric, ids_limit=None, timelines=False)
    return _traits(data, metric)


def page(
    proj: Any,
    matrix: Any,
    *,
    metric: str | None = None,
    limit: int = EMBED_LIMIT,
    timelines: bool = True,
    head: str = "",
    foot: str = "",
) -> str:
    """The widget as a self-contained HTML page (``ragtt.views.page``): the state a click needs
    offline, within ``limit`` (``build``), every metric's got-worse list, the questions' timelines
    too unless ``timelines`` is False; ``head`` and ``foot``: HTML around it, built from escaped parts."""
    wire = matrix.to_dict(regressions=list(matrix.metrics))
    data = build(proj, wire, limit=limit, metric=metric, timelines=timelines, advice=PAGE_ADVICE, worse=matrix.metrics)
    title = f"{matrix.dataset}: ragtt history matrix"
    return widget_page("history_matrix", _traits(data, metric), title=title, head=head, foot=foot)


def _traits(data: dict[str, Any], metric: str | None) -> dict[str, Any]:
    return {"_data": data, "metric": pick_metric(data, metric), "selected": {}}


def pick_metric(data: dict[str, Any], metric: str | None) -> str:
    metrics = data["metrics"]
    if metric is None:
        return "context_recall" if "context_recall" in metrics else (metrics[0] if metrics else "")
    if metric not in metrics:
        raise ValueError(f"metric {metric!r} is not in this matrix; it has {', '.join(metrics) or 'no metrics'}")
    return metric


def build(
    proj: Any,
    wire: dict[str, Any],
    *,
    limit: int = EMBED_LIMIT,
    metric: str | None = None,
    ids_limit: int | None = IDS_LIMIT,
    timelines: bool = True,
    advice: Mapping[str, str] = NOTEBOOK_ADVICE,
    worse: Sequence[str] = (),
) -> dict[str, Any]:
    """``_data`` from ``HistoryMatrix.to_dict()`` (``wire``); ``proj`` answers the diffs and
    timelines. ``ids_limit``: the most cells whose query ids travel (None: all);
    ``timelines``: whether the questions' timelines are precomputed (each is a retrieval at
    every version of the project; at an evaluated column, the question's logged run is read
    back instead); ``advice``: ``embed``'s (the notebook widget's words by default);
    ``worse``: the metrics whose regressions ``wire`` carries (``to_dict(regressions=worse)``),
    their got-worse lists."""
    metrics = [str(m) for m in wire["metrics"]]
    questions = wire["questions"]
    columns = wire["columns"]
    n_q, n_c = len(questions), len(columns)
    qids: list[list[str | None]] = [list(row) for row in wire["query_ids"]]
    if len(qids) != n_q or any(len(row) != n_c for row in qids):
        raise ValueError(f"query_ids must be {n_q} rows of {n_c} (questions x columns)")
    values = {m: _grid(wire["cells"].get(m), n_q, n_c, m) for m in metrics}
    unparseable = _unparseable(wire.get("unparseable") or [], questions, columns, metrics)
    flat = [q or "" for row in qids for q in row]
    width = max((len(q) for q in flat), default=0)
    # a cell with no run gets a filler of the ids' width, so hex ids still pack as raw bytes
    runs = packed_ids([q or "0" * width for q in flat]) if ids_limit is None or len(flat) <= ids_limit else None
    states, ids = cell_states(proj, qids)
    data: dict[str, Any] = {
        "metrics": metrics,
        "questions": {"ids": [str(q["id"]) for q in questions], "texts": [str(q["question"]) for q in questions]},
        "columns": {
            "version": array([int(c["version"]) for c in columns], "int32"),
            "labels": [c.get("label") for c in columns],
            "at": [str(c.get("at") or "") for c in columns],
        },
        "names": {str(v): name for v, name in proj.version_labels().items()},
        "values": {m: array(quantize(v), "uint16") for m, v in values.items()},
        "unparseable": unparseable,
        "runs": runs,
        "cell": array(states, "uint8"),
        "worse": _worse(wire, worse if "regressions" in wire else ()),
    }
    table = _Chunks()
    order = _diff_order(states, values.get(pick_metric(data, metric)) if metrics else None, n_c)
    diff_cells: list[int] = []
    diff_data: list[dict[str, Any]] = []
    used = 0
    diff_budget = limit * 3 // 4
    prev = previous_runs(qids)
    bar = _progress(proj, len(order) + (n_q if timelines else 0))
    for cell in order:
        if len(diff_cells) >= MAX_DIFFS or (diff_cells and used >= diff_budget):
            break
        q, c = divmod(cell, n_c)
        left = qids[q][prev[q][c]] if prev[q][c] >= 0 else None
        right = qids[q][c]
        if left is None or right is None:
            continue
        compact, size = table.add(_diff, proj, left, right, room=diff_budget - used if diff_cells else None)
        if size < 0:
            break
        if compact is None:
            continue
        used += size
        diff_cells.append(cell)
        diff_data.append(compact)
        if bar is not None:
            bar.update()
    data["diffs"] = {"cell": array(diff_cells, "int32"), "data": diff_data}
    versions_of = [int(c["version"]) for c in columns]
    data["timeline"], timelines_left = _timelines(
        proj, qids, versions_of, table, limit - used if timelines else -1, bar
    )
    if bar is not None:
        bar.close()
    data["chunks"] = table.wire()
    data["embed"] = {
        "limit": limit,
        "diffs_left_out": len(order) - len(diff_cells),
        "timelines_left_out": timelines_left,
        "timelines": timelines,
        "compared": ids is not None,
        "advice": dict(advice),
    }
    return data


def cell_states(proj: Any, qids: list[list[str | None]]) -> tuple[list[int], dict[str, tuple[str, ...]] | None]:
    """Each cell's state (``NO_RUN`` ... ``UNKNOWN``, row-major) and the chunk ids each run
    retrieved (None when there are more than ``COMPARE_LIMIT`` runs: every run is ``UNKNOWN``)."""
    wanted = {q for row in qids for q in row if q}
    ids: dict[str, tuple[str, ...]] | None = None
    if len(wanted) <= COMPARE_LIMIT:  # (sorted only then: half a million ids take a second to sort)
        ids = {}
        for qid, events in proj.events.runs(sorted(wanted), types=_RETRIEVALS).items():
            if events:
                ids[qid] = tuple(c["chunk_id"] for c in events[-1].payload["chunks"])
    states: list[int] = []
    for row in qids:
        before: str | None = None
        for qid in row:
            if not qid:
                states.append(NO_RUN)
                continue
            if ids is None or qid not in ids or (before is not None and before not in ids):
                states.append(UNKNOWN if before is not None else FIRST)
            elif before is None:
                states.append(FIRST)
            else:
                states.append(SAME if ids[qid] == ids[before] else CHANGED)
            before = qid
    return states, ids


def previous_runs(qids: list[list[str | None]]) -> list[list[int]]:
    """For each cell, the column of the question's run at the previous evaluated column that has one (-1: none)."""
    if not qids or not qids[0]:
        return [[] for _ in qids]
    has = np.array([[bool(q) for q in row] for row in qids], dtype=bool)
    last = np.maximum.accumulate(np.where(has, np.arange(has.shape[1]), -1), axis=1)  # the run at or before
    prev = np.full(has.shape, -1, dtype=np.int64)
    prev[:, 1:] = last[:, :-1]
    return [list(map(int, row)) for row in prev]


def answer(
    proj: Any, content: dict[str, Any], query_ids: list[list[str | None]] | None = None
) -> dict[str, Any] | None:
    """The kernel's (or ``/ui``'s) reply to what the view asks when its state lacks it:
    ``{"type": "diff", "key", "left", "right"}`` (two query ids) or ``{"type": "timeline",
    "key", "query_id"}``; with the matrix's ``query_ids``, a cell may be named instead
    (``"question"``, ``"column"`` and, for a diff, ``"previous"``: the column to diff from).
    The reply echoes ``key``; None for anything else. Errors are replies that say what went wrong."""
    kind = content.get("type")
    if kind not in ("diff", "timeline"):
        return None
    key = str(content.get("key", ""))

    def run(column_key: str, id_key: str) -> str:
        if content.get(id_key):
            return str(content[id_key])
        if query_ids is None:
            raise ValueError(f"the request names no {id_key!r} query id")
        found = query_ids[int(content["question"])][int(content[column_key])]
        if not found:
            raise ValueError("that cell has no run")
        return found

    try:
        if kind == "diff":
            left, right = run("previous", "left"), run("column", "right")
            report = proj.diff(left, right, generate=False)
            same = not (report.added or report.removed or report.changed) and all(
                k.rank_before == k.rank_after for k in report.kept
            )
            reply = {"type": "diff", "key": key, "left": left, "right": right, "same": same}
            return reply if same else {**reply, "data": chunk_diff.build(report, proj)}
        query_id = run("column", "query_id")
        base, versions, _ = timeline.build(proj, None)
        return {
            "type": "timeline",
            "key": key,
            "query_id": query_id,
            "base": base,
            "focal": timeline.focal(proj, query_id, versions),
        }
    except Exception as exc:  # the view shows why, instead of waiting forever
        return {"type": kind, "key": key, "error": f"{type(exc).__name__}: {exc}"}


def worse_answer(read: Callable[[], Any], content: dict[str, Any]) -> dict[str, Any] | None:
    """The reply to ``{"type": "worse", "key", "metric"}`` (a got-worse list the state lacks):
    ``{"type", "key", "metric", "rows"}`` (``worse``'s rows), the regressions of the matrix
    ``read()`` returns; an error is a reply that says what went wrong; None for anything else."""
    if content.get("type") != "worse":
        return None
    key, metric = str(content.get("key", "")), str(content.get("metric", ""))
    try:
        wire = read().to_dict(regressions=[metric])
        return {"type": "worse", "key": key, "metric": metric, "rows": _worse(wire, [metric])["metrics"][metric]}
    except Exception as exc:  # the view shows why, instead of waiting forever
        return {"type": "worse", "key": key, "metric": metric, "error": f"{type(exc).__name__}: {exc}"}


def _worse(wire: dict[str, Any], metrics: Sequence[str]) -> dict[str, Any]:
    """``worse`` (the module's docstring): the regressions ``wire`` carries, by metric, each
    with its question's row and its two columns' indexes."""
    q_index = {str(q["id"]): i for i, q in enumerate(wire["questions"])}
    c_index = {int(c["version"]): i for i, c in enumerate(wire["columns"])}
    lists: dict[str, list[dict[str, Any]]] = {str(m): [] for m in metrics}
    for r in wire.get("regressions") or []:
        if r["metric"] in lists:
            lists[r["metric"]].append(
                {
                    "question": q_index[str(r["question_id"])],
                    "good": c_index[int(r["last_good_version"])],
                    "bad": c_index[int(r["first_bad_version"])],
                    "good_value": r["last_good_value"],
                    "bad_value": r["first_bad_value"],
                    "reason": r["reason"],
                }
            )
    return {"threshold": WORSE_THRESHOLD, "metrics": lists}


class _Chunks:
    """The chunk table the diffs and timelines share: each chunk's id, source and text once."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.ids: list[str] = []
        self.sources: list[str] = []
        self.texts: list[str] = []
        self.bytes = 0

    def row(self, chunk_id: str, source: str, text: str) -> int:
        found = self.index.get(chunk_id)
        if found is None:
            found = self.index[chunk_id] = len(self.ids)
            self.ids.append(chunk_id)
            self.sources.append(source)
            self.texts.append(text)
            self.bytes += len(chunk_id) + len(source.encode()) + len(text.encode())
        return found

    def mark(self) -> tuple[int, int]:
        return len(self.ids), self.bytes

    def since(self, mark: tuple[int, int]) -> int:
        return self.bytes - mark[1]

    def undo(self, mark: tuple[int, int]) -> None:
        n, self.bytes = mark
        for chunk_id in self.ids[n:]:
            del self.index[chunk_id]
        del self.ids[n:], self.sources[n:], self.texts[n:]

    def add(
        self, make: Callable[..., dict[str, Any]], *args: Any, room: int | None
    ) -> tuple[dict[str, Any] | None, int]:
        """``make(self, *args)`` (a compact diff or timeline) and the bytes it adds, its new chunk
        rows included: ``(None, 0)`` when a run it needs is not in the log (pruned: the kernel's
        answer will say so), ``(None, -1)`` when it would pass ``room`` bytes (None: no bound)."""
        mark = self.mark()
        try:
            compact = make(self, *args)
        except RagttError:
            return None, 0
        size = _size(compact) + self.since(mark)
        if room is not None and size > room:
            self.undo(mark)
            return None, -1
        return compact, size

    def diff(self, data: dict[str, Any]) -> dict[str, Any]:
        c = data["chunks"]
        rows = [self.row(i, s, t) for i, s, t in zip(c["ids"], c["sources"], c["texts"], strict=True)]
        kept = {k: v for k, v in c.items() if k not in ("ids", "sources", "texts")}
        return {**data, "chunks": {**kept, "rows": array(rows, "int32")}}

    def focal(self, focal: dict[str, Any]) -> dict[str, Any]:
        rows = [self.row(r["chunk_id"], r["source"], r["text"]) for r in focal["chunks"]]
        return {**{k: v for k, v in focal.items() if k != "chunks"}, "rows": array(rows, "int32")}

    def wire(self) -> dict[str, Any]:
        return {"ids": packed_ids(self.ids), "sources": self.sources, "texts": packed_strings(self.texts)}


def _diff(table: _Chunks, proj: Any, left: str, right: str) -> dict[str, Any]:
    return table.diff(chunk_diff.build(proj.diff(left, right, generate=False), proj))


def _progress(proj: Any, total: int) -> Any:
    """A progress bar over the diffs and timelines to precompute, shown once it takes 2 s."""
    if not total or not getattr(proj, "progress", False):
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="ragtt history matrix", unit="view", leave=False, delay=2.0)


def _timelines(
    proj: Any, qids: list[list[str | None]], versions_of: list[int], table: _Chunks, budget: int, bar: Any = None
) -> tuple[dict[str, Any], int]:
    """The Timeline of each question's run at its last column, within ``budget`` bytes: the
    questions' searches at each version run together, and at an evaluated column (``versions_of``:
    each column's version) the question's logged run there is read back, not searched again."""
    focal_qids = [next((q for q in reversed(row) if q), None) for row in qids]
    wanted = [(i, q) for i, q in enumerate(focal_qids) if q]
    out: dict[str, Any] = {"base": None, "question": array([], "int32"), "focal": []}
    if not wanted or budget < 0:  # none to show, or none asked for (the kernel answers)
        return out, len(wanted)
    base, versions, _ = timeline.build(proj, None)
    used = _size(base)
    if used > budget:
        return out, len(wanted)
    logged = proj.runs([q for _, q in wanted])  # (a question whose run was pruned has no timeline)
    fit = [(i, q) for i, q in wanted if q in logged][: MAX_RETRIEVALS // max(1, len(versions))]
    cells = {q: {v: c for v, c in zip(versions_of, qids[i], strict=True) if c} for i, q in fit}
    focals = timeline.focals(proj, [q for _, q in fit], versions, cells)
    done: list[int] = []
    parts: list[dict[str, Any]] = []
    for i, qid in fit:
        compact, size = table.add(_Chunks.focal, focals[qid], room=budget - used)
        if size < 0:
            break
        if compact is None:
            continue
        used += size
        done.append(i)
        parts.append(compact)
        if bar is not None:
            bar.update()
    return {"base": base, "question": array(done, "int32"), "focal": parts}, len(wanted) - len(done)


def quantize(values: np.ndarray) -> np.ndarray:
    """Values in [0, 1] (NaN: absent) as uint16 steps of 1 / QUANT, ``ABSENT`` for NaN."""
    out = np.full(values.shape, ABSENT, dtype=np.uint16)
    known = ~np.isnan(values)
    out[known] = np.round(np.clip(values[known], 0.0, 1.0) * QUANT).astype(np.uint16)
    return out


def unquantize(buffer: dict[str, Any]) -> np.ndarray:
    """``quantize``'s inverse, NaN where absent (float64)."""
    raw = np.frombuffer(buffer["view"], dtype="<u2")
    return np.where(raw == ABSENT, np.nan, raw / QUANT)


def _grid(rows: Any, n_q: int, n_c: int, metric: str) -> np.ndarray:
    out = np.full(n_q * n_c, np.nan, dtype=np.float32)
    if rows is None:
        return out
    if len(rows) != n_q or any(len(r) != n_c for r in rows):
        raise ValueError(f"cells[{metric!r}] must be {n_q} rows of {n_c} (questions x columns)")
    for q, row in enumerate(rows):
        out[q * n_c : (q + 1) * n_c] = [np.nan if v is None else v for v in row]
    out[~np.isfinite(out)] = np.nan  # inf: not a value either
    return out


def _unparseable(
    marks: list[dict[str, Any]], questions: list[dict[str, Any]], columns: list[dict[str, Any]], metrics: list[str]
) -> dict[str, Any]:
    """Cells whose judge verdict did not parse, and its raw text (shown on hover)."""
    q_index = {str(q["id"]): i for i, q in enumerate(questions)}
    c_index = {int(c["version"]): i for i, c in enumerate(columns)}
    cells, which, raw = [], [], []
    for m in marks:
        q, c = q_index.get(str(m.get("question_id"))), c_index.get(int(m.get("version", -1)))
        if q is None or c is None or m.get("metric") not in metrics:
            continue
        cells.append(q * len(columns) + c)
        which.append(metrics.index(m["metric"]))
        raw.append(str(m.get("raw", "")))
    return {"cell": array(cells, "int32"), "metric": array(which, "int32"), "raw": raw}


def _diff_order(states: list[int], values: np.ndarray | None, n_c: int) -> list[int]:
    """CHANGED cells, the ones whose metric moved most from the previous column first."""
    changed = [i for i, s in enumerate(states) if s == CHANGED]
    if values is None:
        return changed

    def moved(cell: int) -> float:
        c = cell % n_c
        before = next((values[cell - k] for k in range(1, c + 1) if states[cell - k] != NO_RUN), np.nan)
        delta = abs(float(values[cell]) - float(before))
        return -delta if math.isfinite(delta) else 0.0

    return sorted(changed, key=lambda cell: (moved(cell), cell))


def _size(value: Any) -> int:
    """About how many bytes ``value`` takes on the wire (strings and buffers; the rest is small)."""
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, memoryview | bytes):
        return len(value)
    if isinstance(value, dict):
        return sum(_size(v) + 8 for v in value.values())
    if isinstance(value, list | tuple):
        return sum(_size(v) + 2 for v in value)
    return 8
