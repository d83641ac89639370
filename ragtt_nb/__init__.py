"""ragtt_nb: the notebook layer of ragtt: ``%ragtt`` magics, widgets and offline reports.

>>> %load_ext ragtt_nb                       # doctest: +SKIP
>>> %ragtt open ./proj                       # doctest: +SKIP
>>> res = %ragtt query How many days for a refund?   # doctest: +SKIP
>>> %ragtt timeline last                     # doctest: +SKIP

Widgets: ``Timeline(proj, query_id, assertions=None)``, ``ChunkDiff(diff_report)``,
``DriftScatter(proj, a, b)``, ``PdfOverlay(proj, source)`` and ``HistoryMatrix(matrix, proj=proj)``. Reports:
``export_report("nb.ipynb", "report.html")`` or ``ragtt report nb.ipynb -o report.html``.
Names load on first use, so importing ragtt_nb does not import the widget stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "ChunkDiff": "ragtt_nb.chunk_diff",
    "DriftScatter": "ragtt_nb.drift_scatter",
    "HistoryMatrix": "ragtt_nb.history_matrix",
    "PdfOverlay": "ragtt_nb.pdf_overlay",
    "RagttMagics": "ragtt_nb.magics",
    "Timeline": "ragtt_nb.timeline",
    "export_report": "ragtt_nb.export",
}

# The public surface: the lazily exported names and the extension hook (tests pin it by equality).
__all__ = sorted([*_EXPORTS, "load_ipython_extension"])


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext ragtt_nb``: registers the ``%ragtt`` line and cell magic, and the input
    transformer that keeps a trailing ``?`` in ``%ragtt query ...?`` part of the question."""
    from ragtt_nb.magics import RagttMagics, question_mark_is_text

    ipython.register_magics(RagttMagics)
    if question_mark_is_text not in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.append(question_mark_is_text)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ragtt_nb' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from ragtt_nb.chunk_diff import ChunkDiff as ChunkDiff
    from ragtt_nb.drift_scatter import DriftScatter as DriftScatter
    from ragtt_nb.export import export_report as export_report
    from ragtt_nb.history_matrix import HistoryMatrix as HistoryMatrix
    from ragtt_nb.magics import RagttMagics as RagttMagics
    from ragtt_nb.pdf_overlay import PdfOverlay as PdfOverlay
    from ragtt_nb.timeline import Timeline as Timeline
