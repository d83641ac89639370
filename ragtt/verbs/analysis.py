"""Analysis: what changed between two runs or two versions, and where it started."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragtt.verbs import Arg, Verb, VerbUsageError, verb
from ragtt.verbs import results as r
from ragtt.verbs.args import LEFT, RIGHT, A, B
from ragtt.verbs.render import as_dict, as_text

if TYPE_CHECKING:
    from ragtt.index.embedders import Embedder


def _compare_configs(embedder: Embedder | None, a: dict[str, Any]) -> Any:
    from ragtt.config import PipelineConfig
    from ragtt.timetravel.compare import compare_configs

    if bool(a["corpus"]) == bool(a["texts"]):
        raise VerbUsageError(
            "compare_configs takes either a corpus (files and folders) or texts ({source: text}), not both"
        )
    config_a, config_b = (PipelineConfig.from_dict(a[name]) for name in ("config_a", "config_b"))
    return compare_configs(a["texts"] or a["corpus"], config_a, config_b, a["queries"], embedder=embedder)


verb(
    Verb(
        name="diff",
        help="diff two queries or replays",
        args=(LEFT, RIGHT),
        call=lambda p, a: p.diff(a["left"], a["right"]),
        to_json=as_dict,
        to_text=as_text,
        result=r.DiffReport,
        route=("POST", "/diff"),
        html=lambda r: str(r.to_html()),
        html_route="/diff/{left}/{right}/html",
    )
)

verb(
    Verb(
        name="lineage",
        help="why chunks entered or left the top-k between two runs",
        args=(LEFT, RIGHT),
        call=lambda p, a: p.lineage(a["left"], a["right"]),
        to_json=as_dict,
        to_text=as_text,
        result=r.LineageReport,
        route=("GET", "/lineage/{left}/{right}"),
    )
)

verb(
    Verb(
        name="snapshot_diff",
        help="documents and chunks changed between two versions",
        args=(A, B),
        call=lambda p, a: p.snapshot_diff(a["a"], a["b"]),
        to_json=as_dict,
        to_text=as_text,
        result=r.SnapshotDiff,
        route=("GET", "/snapshots/{a}/{b}/diff"),
    )
)

verb(
    Verb(
        name="drift",
        help="embedding drift per source between two versions",
        args=(
            A,
            B,
            Arg(
                "threshold",
                float,
                "cosine below which a chunk counts as drifted",
                default=0.9,
                flags=("--threshold",),
                minimum=0.0,
                maximum=1.0,
            ),
        ),
        call=lambda p, a: p.drift(a["a"], a["b"], threshold=a["threshold"]),
        to_json=as_dict,
        to_text=as_text,
        result=r.DriftReport,
        route=("GET", "/drift/{a}/{b}"),
    )
)

verb(
    Verb(
        name="bisect",
        help="first version where a predicate on a query's result changes",
        args=(
            Arg("query", str, "a query id (its recorded plan is used) or a query text", required=True),
            Arg(
                "predicate",
                str,
                "chunk:<id> | source:<name> | answer:<substring>",
                required=True,
                flags=("--predicate",),
            ),
            Arg("versions", list[int], "versions to search (default: every data version)", flags=("--versions",)),
        ),
        call=lambda p, a: p.bisect(a["query"], a["predicate"], a["versions"] or None),
        to_json=as_dict,
        to_text=as_text,
        result=r.BisectReport,
        route=("POST", "/bisect"),
    )
)

verb(
    Verb(
        name="compare_configs",
        help="two PipelineConfigs on one corpus (throwaway projects, one embedding cache), query by query",
        args=(
            Arg("corpus", list[str], "files and folders to ingest under both configs", default=[], server_path=True),
            Arg(
                "texts",
                dict[str, str],
                "an in-memory corpus: {source name: text}",
                default={},
                fronts=frozenset({"rest", "mcp"}),
            ),
            Arg(
                "config_a",
                dict[str, Any],
                'PipelineConfig fields as a JSON object, e.g. {"retrieval_mode": "vector"}',
                required=True,
                flags=("--config-a",),
            ),
            Arg("config_b", dict[str, Any], "the other config, the same way", required=True, flags=("--config-b",)),
            Arg("queries", list[str], "the queries to compare (repeatable)", required=True, flags=("--query",)),
        ),
        call=lambda p, a: _compare_configs(p.embedder, a),
        to_json=as_dict,
        to_text=as_text,
        result=r.ConfigComparison,
        route=("POST", "/compare-configs"),
        alone=_compare_configs,
    )
)
