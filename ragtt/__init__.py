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
    "OnnxEmbedder": "ragtt.index.embedders",
    "SentenceTransformerEmbedder": "ragtt.index.embedders",
    # results
    "Document": "ragtt.results",
    "EngineChange": "ragtt.results",
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
    "EvalDataset": "ragtt.evaluation.dataset",
    "HistoryMatrix": "ragtt.evaluation.matrix",
    "LiteLLMJudge": "ragtt.evaluation.judge",
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
    "EmbedderChangedError": "ragtt.errors",
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
    "TraceExportError": "ragtt.errors",
    "ServiceError": "ragtt.errors",
    # history
    "LoggedRun": "ragtt.timetravel.run",
    "VerifyReport": "ragtt.verify",
    "PruneReport": "ragtt.retention",
    # live feeds
    "StreamReport": "ragtt.feeds.stream",
    "WatchBatch": "ragtt.feeds.watch",
    "WatchHandle": "ragtt.feeds.watch",
    # federation: several projects queried as one
    "Federation": "ragtt.federation",
    "FederatedResult": "ragtt.federation",
    "FederationDiff": "ragtt.federation",
    # process-wide settings, for programs whose main job is ragtt (the CLI and servers call it)
    "tune_process": "ragtt.tuning",
}

# The public surface: exactly the lazily exported names (tests pin it by equality).
__all__ = sorted([*_EXPORTS, "__version__"])


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)


if TYPE_CHECKING:
    from ragtt.config import PipelineConfig as PipelineConfig
    from ragtt.errors import (
        ConfigError as ConfigError,
    )
    from ragtt.errors import (
        EmbedderChangedError as EmbedderChangedError,
    )
    from ragtt.errors import (
        HistoryError as HistoryError,
    )
    from ragtt.errors import (
        IngestError as IngestError,
    )
    from ragtt.errors import (
        NamespaceLockedError as NamespaceLockedError,
    )
    from ragtt.errors import (
        NotAProjectError as NotAProjectError,
    )
    from ragtt.errors import (
        NotFoundError as NotFoundError,
    )
    from ragtt.errors import (
        ProjectBusyError as ProjectBusyError,
    )
    from ragtt.errors import (
        ProjectDamagedError as ProjectDamagedError,
    )
    from ragtt.errors import (
        RagttError as RagttError,
    )
    from ragtt.errors import (
        ReplayError as ReplayError,
    )
    from ragtt.errors import (
        ServiceError as ServiceError,
    )
    from ragtt.errors import (
        StoreError as StoreError,
    )
    from ragtt.errors import (
        SupersessionError as SupersessionError,
    )
    from ragtt.errors import (
        TraceExportError as TraceExportError,
    )
    from ragtt.errors import (
        ValidationError as ValidationError,
    )
    from ragtt.evaluation.dataset import EvalDataset as EvalDataset
    from ragtt.evaluation.judge import LiteLLMJudge as LiteLLMJudge
    from ragtt.evaluation.matrix import HistoryMatrix as HistoryMatrix
    from ragtt.federation import FederatedResult as FederatedResult
    from ragtt.federation import Federation as Federation
    from ragtt.federation import FederationDiff as FederationDiff
    from ragtt.feeds.stream import StreamReport as StreamReport
    from ragtt.feeds.watch import WatchBatch as WatchBatch
    from ragtt.feeds.watch import WatchHandle as WatchHandle
    from ragtt.generate import ExtractiveGenerator as ExtractiveGenerator
    from ragtt.generate import LiteLLMGenerator as LiteLLMGenerator
    from ragtt.index.embedders import (
        Embedder as Embedder,
    )
    from ragtt.index.embedders import (
        HashEmbedder as HashEmbedder,
    )
    from ragtt.index.embedders import (
        LiteLLMEmbedder as LiteLLMEmbedder,
    )
    from ragtt.index.embedders import (
        OnnxEmbedder as OnnxEmbedder,
    )
    from ragtt.index.embedders import (
        SentenceTransformerEmbedder as SentenceTransformerEmbedder,
    )
    from ragtt.ingest.chunk import build_chunks as build_chunks
    from ragtt.ingest.loaders import register_loader as register_loader
    from ragtt.ingest.types import Block as Block
    from ragtt.ingest.types import PageRoute as PageRoute
    from ragtt.ingest.types import ParsedDocument as ParsedDocument
    from ragtt.ingest.types import Region as Region
    from ragtt.project import Project as Project
    from ragtt.results import (
        Document as Document,
    )
    from ragtt.results import (
        EngineChange as EngineChange,
    )
    from ragtt.results import (
        IngestReport as IngestReport,
    )
    from ragtt.results import (
        QueryResult as QueryResult,
    )
    from ragtt.results import (
        ReplayResult as ReplayResult,
    )
    from ragtt.results import (
        RetrievedChunk as RetrievedChunk,
    )
    from ragtt.results import (
        Snapshot as Snapshot,
    )
    from ragtt.retention import PruneReport as PruneReport
    from ragtt.timetravel.bisect import BisectReport as BisectReport
    from ragtt.timetravel.compare import ConfigComparison as ConfigComparison
    from ragtt.timetravel.compare import compare_configs as compare_configs
    from ragtt.timetravel.diff import DiffReport as DiffReport
    from ragtt.timetravel.drift import DriftReport as DriftReport
    from ragtt.timetravel.lineage import LineageReport as LineageReport
    from ragtt.timetravel.regression import GoldenSuite as GoldenSuite
    from ragtt.timetravel.regression import RegressionReport as RegressionReport
    from ragtt.timetravel.run import LoggedRun as LoggedRun
    from ragtt.timetravel.snapshot_diff import SnapshotDiff as SnapshotDiff
    from ragtt.tuning import tune_process as tune_process
    from ragtt.verify import VerifyReport as VerifyReport
