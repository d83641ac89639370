from __future__ import annotations

import subprocess
import sys

import ragtt

EXPECTED = {
    "Block", "ConfigError", "DiffReport", "Document", "Embedder", "ExtractiveGenerator", "HashEmbedder",
    "IngestError", "IngestReport", "LiteLLMEmbedder", "LiteLLMGenerator", "NotFoundError", "PageRoute",
    "ParsedDocument", "PipelineConfig", "Project", "QueryResult", "RagttError", "Region", "ReplayError",
    "ReplayResult", "RetrievedChunk", "SentenceTransformerEmbedder", "Snapshot", "StoreError",
    "__version__", "build_chunks", "register_loader",
}


def test_public_names_are_pinned() -> None:
    assert set(ragtt.__all__) >= EXPECTED
    for name in ragtt.__all__:
        assert getattr(ragtt, name) is not None


def test_error_tree() -> None:
    for cls in (ragtt.ConfigError, ragtt.IngestError, ragtt.NotFoundError, ragtt.ReplayError, ragtt.StoreError):
        assert issubclass(cls, ragtt.RagttError)


def test_import_is_fast_and_light() -> None:
    code = (
        "import time, sys; t = time.perf_counter(); import ragtt; d = time.perf_counter() - t; "
        "heavy = [m for m in ('lancedb', 'torch', 'sentence_transformers', 'litellm', 'pymupdf', 'polars', "
        "'IPython', 'ipywidgets', 'anywidget') if m in sys.modules]; print(d, heavy)"
    )
    best = min(
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
              .stdout.split()[0])
        for _ in range(3)
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("[]"), f"import ragtt pulled heavy modules: {out}"
    assert best < 0.5, f"import ragtt took {best:.3f} s"
