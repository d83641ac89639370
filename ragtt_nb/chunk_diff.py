"""``ChunkDiff``: then and now side by side, edited passages paired into "changed" cards.

The pairing is the report's (``DiffReport.changed``, ``ragtt.timetravel.passages``): a
removed and an added chunk of one source that carry the same passage, edited, are one
"changed" card whose word diff travels as grouped runs (one deletion run, one insertion run
per edit); the chunks left unpaired are "added" or "removed" with no counterpart. Everything
is in the state, so clicking through an exported report needs no kernel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anywidget
import traitlets as t

from ragtt.views.chunk_diff import build
from ragtt.views.wire import static_file

if TYPE_CHECKING:
    import ragtt

__all__ = ["ChunkDiff"]


class ChunkDiff(anywidget.AnyWidget):
    """Two runs side by side: changed passages (paired, with grouped word runs), added and
    removed chunks with no counterpart, kept chunks with rank arrows and score deltas.

    >>> ChunkDiff(proj.diff(then.query_id, now.query_id), proj=proj)  # doctest: +SKIP
    >>> ChunkDiff(proj, then.query_id, now.query_id)                   # the same  # doctest: +SKIP
    """

    _esm = static_file("chunk_diff.js")
    _css = static_file("chunk_diff.css")

    selected = t.List(t.Unicode()).tag(sync=True)
    """Chunk ids selected in the view; the first one's change (and why) is shown below the runs."""
    _data = t.Dict().tag(sync=True)
    """The private wire format: both runs, the chunk table (buffers), the changed pairs and their runs."""

    def __init__(
        self,
        source: ragtt.DiffReport | ragtt.Project,
        left_id: str | None = None,
        right_id: str | None = None,
        *,
        proj: ragtt.Project | None = None,
    ) -> None:
        import ragtt

        if isinstance(source, ragtt.Project):
            if not (isinstance(left_id, str) and isinstance(right_id, str)):
                raise TypeError("ChunkDiff(proj, left_id, right_id) needs both query ids as strings")
            proj, report = source, source.diff(left_id, right_id)
        elif isinstance(source, ragtt.DiffReport):
            if left_id is not None or right_id is not None:
                raise TypeError(
                    "ChunkDiff(diff_report) takes no query ids (they are in the report); "
                    "did you mean ChunkDiff(proj, left_id, right_id)?"
                )
            report = source
        else:
            raise TypeError(
                "ChunkDiff accepts a ragtt.DiffReport, or a ragtt.Project with two query ids; "
                f"got {type(source).__name__}"
            )
        self.report = report
        super().__init__(_data=build(report, proj))

    @property
    def chunk_ids(self) -> list[str]:
        """Every chunk in the view: the left run's, then the ones only the right run has."""
        return list(self._data["chunks"]["ids"])

    def word_diff(self, chunk_id: str) -> list[tuple[str, str]] | None:
        """The grouped word runs ``(op, text)`` (op "equal", "delete" or "insert") of the changed
        passage ``chunk_id`` belongs to, then or now; None for a chunk with no counterpart."""
        for pair in self.report.changed:
            if chunk_id in (pair.left.chunk_id, pair.right.chunk_id):
                return list(pair.runs)
        return None

    def __repr__(self) -> str:
        r, n = self.report, self.report.counts
        return (
            f"ChunkDiff({r.left_id} v{r.left_version} -> {r.right_id} v{r.right_version}: "
            f"~{n['changed']} +{n['added']} -{n['removed']} ={n['kept']}, {len(self.selected)} selected)"
        )
