"""ragtt: time-travel debugging for retrieval-augmented generation.

>>> import ragtt
>>> with ragtt.Project.open("./proj", embedder=ragtt.HashEmbedder()) as proj:  # doctest: +SKIP
...     proj.ingest(["docs/"])
...     res = proj.query("What is the refund window?")
...     proj.replay(res.query_id).matches_original
True

Public names are loaded on first use so that ``import ragtt`` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragtt._lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # project and configuration
    "Project": "ragtt.project",
    "PipelineConfig": "ragtt.config",
    # embedders
    "Embedder": "ragtt.index.embedders",
    "HashEmbedder": "ragtt.index.embedders",
    "LiteLLMEmbedder": "ragtt.index.embedders",
    "SentenceTransformerEmbedder": "ragtt.index.embedders",
    # results
    "Document": "ragtt.results",
    "IngestReport": "ragtt.results",
    "QueryResult": "ragtt.results",
    "ReplayResult": "ragtt.results",
    "RetrievedChunk": "ragtt.results",
    "Snapshot": "ragtt.results",
    "DiffReport": "ragtt.timetravel.diff",
    # analysis
    "LineageReport": "ragtt.timetravel.lineage",
    "SnapshotDiff": "ragtt.timetravel.snapshot_diff",
    "DriftReport": "ragtt.timetravel.drift",
    "GoldenSuite": "ragtt.timetravel.regression",
    "RegressionReport": "ragtt.timetravel.regression",
    "BisectReport": "ragtt.timetravel.bisect",
    "ConfigComparison": "ragtt.timetravel.compare",
    "compare_configs": "ragtt.timetravel.compare",
    # ingest building blocks
    "Region": "ragtt.ingest.types",
    "ParsedDocument": "ragtt.ingest.types",
    "PageRoute": "ragtt.ingest.types",
    "Block": "ragtt.ingest.types",
    "build_chunks": "ragtt.ingest.chunk",
    "register_loader": "ragtt.ingest.loaders",
    # generation
    "LiteLLMGenerator": "ragtt.generate",
    "ExtractiveGenerator": "ragtt.generate",
    # errors
    "RagttError": "ragtt.errors",
    "ConfigError": "ragtt.errors",
    "IngestError": "ragtt.errors",
    "NotFoundError": "ragtt.errors",
    "ReplayError": "ragtt.errors",
    "StoreError": "ragtt.errors",
    "HistoryError": "ragtt.errors",
    "NamespaceLockedError": "ragtt.errors",
    "NotAProjectError": "ragtt.errors",
    "ProjectBusyError": "ragtt.errors",
    "ProjectDamagedError": "ragtt.errors",
    "SupersessionError": "ragtt.errors",
    "ValidationError": "ragtt.errors",
    # history
    "LoggedRun": "ragtt.timetravel.run",
    "VerifyReport": "ragtt.verify",
}

# The public surface: exactly the lazily exported names (tests pin it by equality).
__all__ = sorted([*_EXPORTS, "__version__"])


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)


if TYPE_CHECKING:
    from ragtt.config import PipelineConfig
    from ragtt.errors import (
        ConfigError,
        HistoryError,
        IngestError,
        NamespaceLockedError,
        NotAProjectError,
        NotFoundError,
        ProjectBusyError,
        ProjectDamagedError,
        RagttError,
        ReplayError,
        StoreError,
        SupersessionError,
        ValidationError,
    )
    from ragtt.generate import ExtractiveGenerator, LiteLLMGenerator
    from ragtt.index.embedders import (
        Embedder,
        HashEmbedder,
        LiteLLMEmbedder,
        SentenceTransformerEmbedder,
    )
    from ragtt.ingest.chunk import build_chunks
    from ragtt.ingest.loaders import register_loader
    from ragtt.ingest.types import Block, PageRoute, ParsedDocument, Region
    from ragtt.project import Project
    from ragtt.results import (
        Document,
        IngestReport,
        QueryResult,
        ReplayResult,
        RetrievedChunk,
        Snapshot,
    )
    from ragtt.timetravel.bisect import BisectReport
    from ragtt.timetravel.compare import ConfigComparison, compare_configs
    from ragtt.timetravel.diff import DiffReport
    from ragtt.timetravel.drift import DriftReport
    from ragtt.timetravel.lineage import LineageReport
    from ragtt.timetravel.regression import GoldenSuite, RegressionReport
    from ragtt.timetravel.run import LoggedRun
    from ragtt.timetravel.snapshot_diff import SnapshotDiff
    from ragtt.verify import VerifyReport
