"""The ``evaluate`` verb: a question set across the history (``ragtt eval``, ``POST /evaluate``,
the MCP tool), and with ``--baseline`` a CI gate: exit 1 when a question fell below the
baseline by more than ``--threshold``, 0 otherwise, 2 on bad input."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragtt.verbs import Arg, At, Verb, verb
from ragtt.verbs import results as r
from ragtt.verbs.args import MODE, TOP_K

if TYPE_CHECKING:
    from ragtt.project import Project

__all__: list[str] = []


def _evaluate(proj: Project, a: dict[str, Any]) -> Any:
    from ragtt.evaluation.run import at_spec

    at = at_spec(a["at"] or ["snapshots"])
    baseline = a["baseline"]
    if baseline is not None:
        at = [baseline, *(at if isinstance(at, list) else [at])]
    matrix = proj.evaluate(a["dataset"], at=at, mode=a["mode"], top_k=a["top_k"], metrics=a["metric"], judge=a["judge"])
    if baseline is None:
        return matrix
    first = a["metric"][0] if a["metric"] else None  # the gate's metric: the first asked for
    gate_metric = next((m for m in matrix.metrics if first in (m, m.split("@")[0])), None)
    return matrix.against(baseline, metric=gate_metric, threshold=a["threshold"])


verb(
    Verb(
        name="evaluate",
        help=(
            "evaluate a question set at every snapshot (or version), one logged run per cell; with --baseline "
            "a CI gate: exit 1 when a question fell, 0 otherwise, 2 on bad input"
        ),
        args=(
            Arg(
                "dataset",
                str,
                "golden suite JSON, a JSONL / CSV / Parquet table, or a BEIR folder",
                required=True,
                server_path=True,
            ),
            Arg(
                "at",
                list[str],
                "snapshots (default) | versions | latest | versions, labels or ISO datetimes, comma-separated",
                flags=("--at",),
            ),
            Arg("metric", list[str], "compute only these metrics (the first one gates)", flags=("--metric",)),
            MODE,
            TOP_K,
            Arg("judge", str, "a litellm model that grades faithfulness and correctness", flags=("--judge",)),
            Arg("baseline", At, "CI gate: compare the last version with this version or label", flags=("--baseline",)),
            Arg(
                "threshold",
                float,
                "CI gate: how far a question may fall below the baseline before it fails",
                default=0.0,
                flags=("--threshold",),
                minimum=0.0,
                maximum=1.0,
            ),
        ),
        call=_evaluate,
        to_json=lambda matrix: matrix.to_dict(),
        to_text=lambda matrix: str(matrix.to_text()),
        result=r.HistoryMatrix,
        route=("POST", "/evaluate"),
        html=lambda matrix: str(matrix.to_html()),
        cli_name="eval",
        exit_code=lambda matrix: matrix.gate.exit_code if matrix.gate is not None else 0,
    )
)
