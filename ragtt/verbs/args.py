"""Arguments several verbs share, declared once."""

from __future__ import annotations

from ragtt.config import MAX_TOP_K
from ragtt.verbs.model import MODES, Arg, At

__all__ = ["LEFT", "MODE", "QUERY_ID", "RIGHT", "TOP_K", "A", "B"]

TOP_K = Arg(
    "top_k",
    int,
    "how many chunks to retrieve (default: the project's config)",
    flags=("--top-k",),
    minimum=1,
    maximum=MAX_TOP_K,
)
MODE = Arg("mode", str, "retrieval mode (default: the project's config)", flags=("--mode",), choices=MODES)
QUERY_ID = Arg("query_id", str, "id of a logged query or replay", required=True, flags=("--query-id",))
LEFT = Arg(
    "left",
    str,
    "query or replay id on the left ('last': the other's question, last run)",
    required=True,
    flags=("--left",),
)
RIGHT = Arg(
    "right",
    str,
    "query or replay id on the right ('last': the left's question, last run)",
    required=True,
    flags=("--right",),
)
A = Arg("a", At, "version, snapshot label or ISO datetime", required=True)
B = Arg("b", At, "version, snapshot label or ISO datetime", required=True)
