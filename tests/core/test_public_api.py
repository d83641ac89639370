from __future__ import annotations

import subprocess
import sys

import ragtt

EXPECTED = [
    "BisectReport",
    "Block",
    "ConfigComparison",
    "ConfigError",
    "DiffReport",
    "Document",
    "DriftReport",
    "Embedder",
    "EmbedderChangedError",
    "EngineChange",
    "EvalDataset",
    "ExtractiveGenerator",
    "FederatedResult",
    "Federation",
    "FederationDiff",
    "GoldenSuite",
    "HashEmbedder",
    "HistoryError",
    "HistoryMatrix",
    "IngestError",
    "IngestReport",
    "LineageReport",
    "LiteLLMEmbedder",
    "LiteLLMGenerator",
    "LiteLLMJudge",
    "LoggedRun",
    "NamespaceLockedError",
    "NotAProjectError",
    "NotFoundError",
    "OnnxEmbedder",
    "PageRoute",
    "ParsedDocument",
    "PipelineConfig",
    "Project",
    "ProjectBusyError",
    "ProjectDamagedError",
    "PruneReport",
    "QueryResult",
    "RagttError",
    "Region",
    "RegressionReport",
    "ReplayError",
    "ReplayResult",
    "RetrievedChunk",
    "SentenceTransformerEmbedder",
    "ServiceError",
    "Snapshot",
    "SnapshotDiff",
    "StoreError",
    "StreamReport",
    "SupersessionError",
    "TraceExportError",
    "ValidationError",
    "VerifyReport",
    "WatchBatch",
    "WatchHandle",
    "__version__",
    "build_chunks",
    "compare_configs",
    "register_loader",
    "tune_process",
]
EXPECTED_NB = [
    "ChunkDiff",
    "DriftScatter",
    "HistoryMatrix",
    "PdfOverlay",
    "RagttMagics",
    "Timeline",
    "export_report",
    "load_ipython_extension",
]
EXPECTED_INGEST = [
    "IngestOptions",
    "LocatedChunks",
    "RegionIndex",
    "RouteThresholds",
    "build_chunks",
    "locate_chunks",
    "parse",
    "pixel_box",
    "render_page",
]


def test_public_names_are_pinned() -> None:
    import ragtt.ingest
    import ragtt_nb

    assert ragtt.__all__ == EXPECTED
    assert ragtt_nb.__all__ == EXPECTED_NB
    assert ragtt.ingest.__all__ == EXPECTED_INGEST
    for module in (ragtt, ragtt_nb, ragtt.ingest):
        for name in module.__all__:
            assert getattr(module, name) is not None, name


def test_type_checking_imports_match_the_exports() -> None:
    """The static imports (for type checkers) are the lazy export table, name for name."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(ragtt))
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    imported = {
        (node.module, a.name) for node in ast.walk(block) if isinstance(node, ast.ImportFrom) for a in node.names
    }
    assert imported == {(module, name) for name, module in ragtt._EXPORTS.items()}


def test_error_tree() -> None:
    for cls in (
        ragtt.ConfigError,
        ragtt.IngestError,
        ragtt.NotFoundError,
        ragtt.ReplayError,
        ragtt.StoreError,
        ragtt.ValidationError,
        ragtt.SupersessionError,
        ragtt.NamespaceLockedError,
        ragtt.HistoryError,
        ragtt.NotAProjectError,
        ragtt.ProjectDamagedError,
        ragtt.ProjectBusyError,
    ):
        assert issubclass(cls, ragtt.RagttError)
    for cls in (ragtt.NotAProjectError, ragtt.ProjectDamagedError, ragtt.ProjectBusyError, ragtt.HistoryError):
        assert issubclass(cls, ragtt.StoreError)
    assert issubclass(ragtt.EmbedderChangedError, ragtt.ConfigError)


def test_import_is_fast_and_light() -> None:
    code = (
        "import time, sys; t = time.perf_counter(); import ragtt; d = time.perf_counter() - t; "
        "heavy = [m for m in ('lancedb', 'torch', 'sentence_transformers', 'litellm', 'pymupdf', 'polars', "
        "'IPython', 'ipywidgets', 'anywidget', 'opentelemetry', 'google.protobuf', 'ray') if m in sys.modules]; "
        "print(d, heavy)"
    )
    best = min(
        float(
            subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()[0]
        )
        for _ in range(3)
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("[]"), f"import ragtt pulled heavy modules: {out}"
    assert best < 0.5, f"import ragtt took {best:.3f} s"
