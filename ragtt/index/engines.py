"""Which engines ranked a run: recorded in its plan (``plan["engines"]``), compared on replay.

A logged query's scores come from code outside ragtt: vector search from Lance (pylance),
BM25 from the engine LanceDB bundles, reading the full-text index with the tokenizer settings
it was built with, and the query's vector from the embedder's runtime. ``run_engines`` names
each one a run used (by mode), and a replay whose result differs from the original's says
which of them is not what it was (``engine_changes``): an upgrade never shows up as a bare
mismatch.

    {"lance": "14.0.2", "embedder": {"model_id": ..., "runtime": "onnxruntime 1.32.0", "recipe": ...},
     "lancedb": "0.40.0", "fts_tokenizer": {"base_tokenizer": "simple", "stem": True, ...}}
"""

from __future__ import annotations

import functools
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from ragtt.results import EngineChange

if TYPE_CHECKING:
    from ragtt.index.embedders import Embedder
    from ragtt.index.retrieve import RetrievalPlan
    from ragtt.index.table import View

__all__ = ["ROLES", "embedder_identity", "engine_changes", "package_version", "run_engines"]

# What each recorded component does, as a replay's report names it.
ROLES = {
    "lance": "vector search, pylance",
    "embedder": "the query embedding",
    "lancedb": "BM25 full-text search, LanceDB",
    "fts_tokenizer": "the full-text index tokenizer",
}


@functools.cache
def package_version(distribution: str) -> str:
    """The installed version of ``distribution`` ("not installed" when it is not)."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"


def embedder_identity(embedder: Embedder) -> dict[str, str]:
    """What makes ``embedder``'s vectors: its model id, the runtime that runs it (library and
    version) and the recipe (precision, graph, quantization)."""
    from ragtt.index.embedders import HashEmbedder, LiteLLMEmbedder, OnnxEmbedder, SentenceTransformerEmbedder

    if isinstance(embedder, OnnxEmbedder):
        from ragtt.index.onnx_export import recipe

        runtime, how = f"onnxruntime {package_version('onnxruntime')}", recipe(embedder.precision)
    elif isinstance(embedder, HashEmbedder):
        runtime, how = f"numpy {package_version('numpy')}", "feature hashing v1 (blake2b, float32)"
    elif isinstance(embedder, SentenceTransformerEmbedder):
        st, torch = package_version("sentence-transformers"), package_version("torch")
        runtime, how = f"sentence-transformers {st}, torch {torch}", "fp32, normalized"
    elif isinstance(embedder, LiteLLMEmbedder):
        runtime, how = f"litellm {package_version('litellm')}", "the provider's model"
    else:
        kind = type(embedder)
        runtime, how = f"{kind.__module__}.{kind.__qualname__}", "unknown (a custom embedder)"
    return {"model_id": embedder.model_id, "runtime": runtime, "recipe": how}


def run_engines(view: View, plan: RetrievalPlan, embedder: Embedder) -> dict[str, Any]:
    """The engines a run of ``plan`` on ``view`` ranks with. The embedder's runtime and recipe
    are known when ``embedder`` is the plan's; a replay under another one reads the query's
    vector from the embedding cache, and records the model id alone."""
    engines: dict[str, Any] = {}
    if plan.mode in ("vector", "hybrid"):
        engines["lance"] = package_version("pylance")
        same = embedder.model_id == plan.embedder_id and embedder.dim == plan.embedder_dim
        engines["embedder"] = embedder_identity(embedder) if same else {"model_id": plan.embedder_id}
    if plan.mode in ("bm25", "hybrid"):
        engines["lancedb"] = package_version("lancedb")
        engines["fts_tokenizer"] = view.text_tokenizer
    return engines


def engine_changes(recorded: dict[str, Any] | None, today: dict[str, Any]) -> list[EngineChange]:
    """Each recorded component that is not what ``today``'s run used (components a side did not
    record are not compared: a settings key one version of an engine reports and another not
    is not a change)."""
    changes = []
    for component, then in sorted((recorded or {}).items()):
        if component not in today:
            continue
        now = today[component]
        role = ROLES.get(component, component)
        if isinstance(then, dict) and isinstance(now, dict):
            for key in sorted(then.keys() & now.keys()):
                if then[key] != now[key]:
                    changes.append(EngineChange(f"{component}.{key}", role, then[key], now[key]))
        elif then != now:
            changes.append(EngineChange(component, role, then, now))
    return changes
