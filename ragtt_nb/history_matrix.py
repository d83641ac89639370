"""``HistoryMatrix``: a question set evaluated across the index's history, as a heatmap.

Questions are rows, evaluated versions columns (labelled as the Timeline's version axis
labels them), one metric at a time (the picker). A cell's colour is its value; an absent
metric (no references for that row) is hatched, never 0; an unparseable judge verdict is
crossed. Clicking a cell shows, in the widget, the ChunkDiff between its run and the same
question's run at the previous evaluated column; clicking a question shows its Timeline.
Below the heatmap, the picked metric's "got worse" list (each regression with its reason;
a click opens its cell).

What a click needs is in the state, so clicking works in an exported report with no kernel,
within bounds (``ragtt.views.history_matrix``): diffs only where a cell's chunks differ
from the previous column's, most changed first, up to ``embed_limit`` bytes; and the
questions' timelines (each a retrieval at every version the evaluation did not search, so only when asked:
``embed_timelines=True``, or by default when ``$RAGTT_REPORT`` is set, as ``ragtt report
--execute`` sets it; ``embed_timelines()`` adds them to a live widget before you save it).
What the state lacks is asked of the kernel (``model.send``) when one is live.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import anywidget
import numpy as np
import traitlets as t

from ragtt.values import counted
from ragtt.views.history_matrix import EMBED_LIMIT, answer, build, pick_metric
from ragtt.views.wire import split_buffers, static_file

if TYPE_CHECKING:
    import polars as pl

    import ragtt

__all__ = ["EMBED_LIMIT", "HistoryMatrix"]


class HistoryMatrix(anywidget.AnyWidget):
    """A ``ragtt.HistoryMatrix`` as a heatmap: questions x versions, one metric at a time.

    >>> m = proj.evaluate("questions.jsonl", at="snapshots")      # doctest: +SKIP
    >>> w = HistoryMatrix(m, proj=proj)                             # doctest: +SKIP
    >>> w.metric = "ndcg@10"    # what the picker shows; picking in the view sets it
    >>> w.selected              # the cell clicked in the view: {"question_id", "version", ...}
    """

    _esm = static_file("history_matrix.js")
    _css = static_file("history_matrix.css")

    metric = t.Unicode("").tag(sync=True)
    """The metric the heatmap colours by (one of ``metrics``); the view's picker sets it."""
    selected = t.Dict().tag(sync=True)
    """What was clicked in the view: ``{"question": i, "column": j}`` (a cell, whose diff the
    panel shows), ``{"question": i}`` (a question, its Timeline), or ``{}``."""
    _data = t.Dict().tag(sync=True)
    """The private wire format (``ragtt.views.history_matrix``'s docstring)."""

    def __init__(
        self,
        matrix: ragtt.HistoryMatrix,
        *,
        proj: ragtt.Project | None = None,
        metric: str | None = None,
        embed_limit: int = EMBED_LIMIT,
        embed_timelines: bool | None = None,
    ) -> None:
        import ragtt

        if not hasattr(matrix, "to_dict") or isinstance(matrix, ragtt.Project):
            raise TypeError(
                "HistoryMatrix takes the ragtt.HistoryMatrix that proj.evaluate(...) returned "
                f"(and proj=); got {type(matrix).__name__}"
            )
        proj = proj if proj is not None else getattr(matrix, "project", None)
        if not isinstance(proj, ragtt.Project):
            raise TypeError(
                "this HistoryMatrix does not know its project: pass the project it was evaluated on, "
                "HistoryMatrix(matrix, proj=proj)"
            )
        self.matrix = matrix
        self._proj = proj
        self.embed_limit = int(embed_limit)
        if embed_timelines is None:
            embed_timelines = bool(os.environ.get("RAGTT_REPORT"))
        data = build(
            proj,
            matrix.to_dict(regressions=list(matrix.metrics)),
            limit=self.embed_limit,
            metric=metric,
            timelines=embed_timelines,
            worse=matrix.metrics,
        )
        super().__init__(_data=data, metric=pick_metric(data, metric))
        self.on_msg(self._on_request)

    def embed_timelines(self) -> int:
        """Put the questions' timelines in the state (up to ``embed_limit``), for a notebook you
        will save and export without ``--execute``; returns how many the bound left out."""
        wire = self.matrix.to_dict(regressions=list(self.matrix.metrics))
        self._data = build(self._proj, wire, limit=self.embed_limit, metric=self.metric, worse=self.matrix.metrics)
        return int(self._data["embed"]["timelines_left_out"])

    @t.validate("metric")
    def _check_metric(self, proposal: dict[str, Any]) -> str:
        return pick_metric(self._data, str(proposal["value"])) if self._data else str(proposal["value"])

    @property
    def metrics(self) -> list[str]:
        return list(self._data["metrics"])

    @property
    def versions(self) -> list[int]:
        """The evaluated versions, the columns left to right."""
        return [int(v) for v in np.frombuffer(self._data["columns"]["version"]["view"], dtype="<i4")]

    @property
    def diff_cells(self) -> list[tuple[str, int]]:
        """The cells whose ChunkDiff is in the state, as ``(question_id, version)``."""
        ids, versions = self._data["questions"]["ids"], self.versions
        cells = np.frombuffer(self._data["diffs"]["cell"]["view"], dtype="<i4")
        return [(ids[c // len(versions)], versions[c % len(versions)]) for c in cells.tolist()]

    def cell(self, question: int, column: int) -> dict[str, Any]:
        """A cell as the view shows it: question, version, each metric's value (None: absent),
        the run's query id (None: no run) and its state against the previous column."""
        from ragtt.views import history_matrix as hm

        d = self._data
        n_c = len(self.versions)
        at = question * n_c + column
        state = int(np.frombuffer(d["cell"]["view"], dtype="u1")[at])
        values = {}
        for m, buf in d["values"].items():
            v = float(hm.unquantize(buf)[at])
            values[m] = None if np.isnan(v) else v
        names = {hm.NO_RUN: "no run", hm.FIRST: "first", hm.SAME: "same", hm.CHANGED: "changed"}
        return {
            "question_id": d["questions"]["ids"][question],
            "question": d["questions"]["texts"][question],
            "version": self.versions[column],
            "values": values,
            "query_id": None if state == hm.NO_RUN else self.matrix.query_ids[question][column],
            "state": names.get(state, "unknown"),
        }

    def frame(self) -> pl.DataFrame:
        """The matrix's long frame (``ragtt.HistoryMatrix.frame``)."""
        return self.matrix.frame()

    def _on_request(self, _widget: Any, content: dict[str, Any], _buffers: list[Any]) -> None:
        reply = answer(self._proj, content, self.matrix.query_ids)
        if reply is not None:
            self.send(*split_buffers(reply))

    def __repr__(self) -> str:
        d = self._data
        left = d["embed"]["diffs_left_out"]
        return (
            f"HistoryMatrix({counted(len(d['questions']['ids']), 'question')} x "
            f"{counted(len(self.versions), 'version')}, "
            f"metric {self.metric!r} of {len(d['metrics'])}, {len(d['diffs']['data'])} diffs embedded"
            + (f", {left} left to the kernel)" if left else ")")
        )
