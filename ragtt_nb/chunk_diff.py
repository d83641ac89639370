"""``ChunkDiff``: then and now side by side, with word-level diffs precomputed for the view.

For each chunk that entered or left the top-k, the nearest counterpart from the same
source on the other side (among the other run's chunks, and, when a project is given,
among every chunk of that source at the other run's version) is found and diffed word by
word here, so clicking a chunk in an exported report needs no kernel.
"""

from __future__ import annotations

import difflib
import math
import re
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets as t

from ragtt_nb._wire import array, static_file

if TYPE_CHECKING:
    import ragtt

__all__ = ["ChunkDiff"]

_WORDS = re.compile(r"\s+|[^\s]+")


class ChunkDiff(anywidget.AnyWidget):
    """Two runs side by side: added, removed and kept chunks with rank arrows and score deltas.

    >>> ChunkDiff(proj.diff(then.query_id, now.query_id), proj=proj)  # doctest: +SKIP
    >>> ChunkDiff(proj, then.query_id, now.query_id)                   # the same  # doctest: +SKIP
    """

    _esm = static_file("chunk_diff.js")
    _css = static_file("chunk_diff.css")

    selected = t.List(t.Unicode()).tag(sync=True)
    """Chunk ids selected in the view; the first one's word-level diff is shown."""
    _data = t.Dict().tag(sync=True)
    """The private wire format: both runs, the chunk table (buffers) and precomputed diffs."""

    def __init__(self, source: ragtt.DiffReport | ragtt.Project, left_id: str | None = None,
                 right_id: str | None = None, *, proj: ragtt.Project | None = None) -> None:
        import ragtt

        if isinstance(source, ragtt.Project):
            if not (isinstance(left_id, str) and isinstance(right_id, str)):
                raise TypeError("ChunkDiff(proj, left_id, right_id) needs both query ids as strings")
            proj, report = source, source.diff(left_id, right_id)
        elif isinstance(source, ragtt.DiffReport):
            if left_id is not None or right_id is not None:
                raise TypeError("ChunkDiff(diff_report) takes no query ids (they are in the report); "
                                "did you mean ChunkDiff(proj, left_id, right_id)?")
            report = source
        else:
            raise TypeError("ChunkDiff accepts a ragtt.DiffReport, or a ragtt.Project with two query ids; "
                            f"got {type(source).__name__}")
        self.report = report
        super().__init__(_data=_build(report, proj))

    @property
    def chunk_ids(self) -> list[str]:
        """Every chunk in the view: the left run's, then the ones only the right run has."""
        return list(self._data["chunks"]["ids"])

    def word_diff(self, chunk_id: str) -> list[tuple[str, str]] | None:
        """The precomputed word diff of a changed chunk: ``(op, text)`` with op ``=``, ``+`` or ``-``."""
        entry = self._data["word_diffs"].get(chunk_id)
        return None if entry is None else list(zip(entry["ops"], entry["segments"], strict=True))

    def __repr__(self) -> str:
        r = self.report
        return (f"ChunkDiff({r.left_id} v{r.left_version} -> {r.right_id} v{r.right_version}: "
                f"+{len(r.added)} -{len(r.removed)} ={len(r.kept)}, {len(self.selected)} selected)")


def _build(report: Any, proj: Any) -> dict[str, Any]:
    ids: list[str] = []
    sources: list[str] = []
    texts: list[str] = []
    rank_l: list[int] = []
    rank_r: list[int] = []
    score_l: list[float] = []
    score_r: list[float] = []

    def add(cid: str, source: str, text: str, rl: int, rr: int, sl: float, sr: float) -> None:
        ids.append(cid)
        sources.append(source)
        texts.append(text)
        rank_l.append(rl)
        rank_r.append(rr)
        score_l.append(sl)
        score_r.append(sr)

    nan = math.nan
    for c in report.removed:
        add(c.chunk_id, c.source, c.text, c.rank, 0, c.score, nan)
    for k in report.kept:
        add(k.chunk_id, k.source, k.text, k.rank_before, k.rank_after, k.score_before, k.score_after)
    for c in report.added:
        add(c.chunk_id, c.source, c.text, 0, c.rank, nan, c.score)

    left_side = [(c.chunk_id, c.source, c.text) for c in [*report.removed, *report.kept]]
    right_side = [(c.chunk_id, c.source, c.text) for c in [*report.added, *report.kept]]
    word_diffs: dict[str, Any] = {}
    for c in report.added:
        word_diffs[c.chunk_id] = _against(c, left_side, proj, report.left_version, then_side=True)
    for c in report.removed:
        word_diffs[c.chunk_id] = _against(c, right_side, proj, report.right_version, then_side=False)

    return {
        "left": {"id": report.left_id, "query": report.left_query, "version": report.left_version,
                 "answer": report.left_answer},
        "right": {"id": report.right_id, "query": report.right_query, "version": report.right_version,
                  "answer": report.right_answer},
        "summary": {"rbo": report.rbo, "jaccard": report.jaccard, "added": len(report.added),
                    "removed": len(report.removed), "kept": len(report.kept),
                    "answer_similarity": report.answer_similarity, "notes": list(report.notes)},
        "chunks": {"ids": ids, "sources": sources, "texts": texts,
                   "rank_left": array(rank_l, "int32"), "rank_right": array(rank_r, "int32"),
                   "score_left": array(score_l, "float32"), "score_right": array(score_r, "float32")},
        "word_diffs": word_diffs,
        "reasons": _lineage_reasons(proj, report),
    }


def _against(chunk: Any, other_run: list[tuple[str, str, str]], proj: Any, other_version: int,
             *, then_side: bool) -> dict[str, Any]:
    """Diff ``chunk`` against the most similar chunk of its source on the other side."""
    candidates = {cid: text for cid, source, text in other_run if source == chunk.source}
    if proj is not None:
        frame = proj.chunks(at=other_version, source=chunk.source)
        candidates.update(zip(frame["chunk_id"].to_list(), frame["text"].to_list(), strict=True))
    words = _WORDS.findall(chunk.text)
    best_id, best_ratio, best_words = None, -1.0, []
    for cid, text in candidates.items():
        if cid == chunk.chunk_id:
            continue
        other = _WORDS.findall(text)
        ratio = difflib.SequenceMatcher(None, other, words, autojunk=False).ratio()
        if ratio > best_ratio:
            best_id, best_ratio, best_words = cid, ratio, other
    if best_id is None:
        where = "then" if then_side else "now"
        return {"counterpart": None, "similarity": 0.0, "ops": "+" if then_side else "-",
                "segments": [chunk.text], "note": f"no chunk from {chunk.source} {where}"}
    old, new = (best_words, words) if then_side else (words, best_words)
    ops, segments = [], []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("delete", "replace"):
            ops.append("-")
            segments.append("".join(old[i1:i2]))
        if tag in ("insert", "replace"):
            ops.append("+")
            segments.append("".join(new[j1:j2]))
        if tag == "equal":
            ops.append("=")
            segments.append("".join(old[i1:i2]))
    return {"counterpart": best_id, "similarity": round(best_ratio, 4), "ops": "".join(ops),
            "segments": segments, "note": ""}


def _lineage_reasons(proj: Any, report: Any) -> dict[str, str]:
    """Why each chunk entered or left, when the core has lineage (the analysis issue)."""
    if proj is None or not hasattr(proj, "lineage"):
        return {}
    frame = proj.lineage(report.left_id, report.right_id).frame()
    reasons = {}
    for row in frame.iter_rows(named=True):
        version = f" at v{row['version']}" if row.get("version") is not None else ""
        reasons[row["chunk_id"]] = f"{row['change']}: {row['cause']}{version}"
    return reasons
