"""The ONNX files of the default embedder: which graph each precision runs, how it is
quantized, and where the result is kept.

The graph is built from the model's safetensors weights (:mod:`ragtt.index.onnx_graph`), so
the default embedder runs on ONNX Runtime in an install without torch. ``fp32`` is that
graph; ``int8`` adds dynamic quantization of the MatMul weights
(``onnxruntime.quantization``) but keeps each layer's FFN down-projection fp32; ``int8-v2``
quantizes those too, as ``MatMulNBits`` with 8-bit weights and activations in blocks of
:data:`DOWN_PROJ_BLOCK`. ``int8-v3`` (the default) runs a graph written for ONNX Runtime's
faster kernels (plain LayerNormalization, MultiHeadAttention) with each layer's loudest FFN
channels computed apart in fp32 (:mod:`ragtt.index.onnx_calibration`), so every other MatMul,
down-projections included, quantizes with one activation scale on the fast integer GEMM.
Files are built once per weights file and precision and kept under the user cache directory
(``$RAGTT_CACHE_DIR``, else ``$XDG_CACHE_HOME/ragtt``, else ``~/.cache/ragtt``), keyed by the
weights' hash and :data:`EXPORT_VERSION`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ragtt.errors import ConfigError

__all__ = [
    "DOWN_PROJ_BLOCK",
    "EXPORT_VERSION",
    "PRECISIONS",
    "cache_dir",
    "disabled_fusions",
    "exported_model",
    "recipe",
]

# Bump when the graph or a quantization recipe changes: a new version is a new file, never a
# silent change under an existing model_id's cached vectors. A new recipe is a new precision
# name (its own file and model id), so projects built with an older one keep their vectors.
EXPORT_VERSION = 2
# precision -> (graph, quantization). Graphs: "fused" is the first one (SkipLayerNormalization,
# attention as plain ops); "plain-apart" writes residual + LayerNorm as plain ops and the
# attention as one MultiHeadAttention kernel, which ONNX Runtime runs faster, and computes each
# layer's loudest FFN channels apart. Quantization: None (fp32), "int8" (all but the FFN
# down-projections), "blocked" (those too, as MatMulNBits), "apart" (all but the channels apart).
_RECIPES: dict[str, tuple[str, str | None]] = {
    "fp32": ("fused", None),
    "int8": ("fused", "int8"),
    "int8-v2": ("fused", "blocked"),
    "int8-v3": ("plain-apart", "apart"),
}
PRECISIONS = tuple(_RECIPES)
# Activations of the FFN down-projection are quantized per block of this many inputs (of
# 1536 in MiniLM): one outlier channel of the GELU output then coarsens only its own block.
DOWN_PROJ_BLOCK = 128


def cache_dir() -> Path:
    root = os.environ.get("RAGTT_CACHE_DIR")
    if root:
        return Path(root).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "ragtt"


def exported_model(model_dir: Path, precision: str) -> Path:
    """The ONNX file for ``model_dir``'s weights at ``precision``, built on first use."""
    if precision not in PRECISIONS:
        raise ConfigError(f"ONNX precision must be one of {', '.join(PRECISIONS)}; got {precision!r}")
    weights = model_dir / "model.safetensors"
    if not weights.is_file():
        raise ConfigError(f"{model_dir} has no model.safetensors to build the ONNX embedder from")
    target = cache_dir() / "onnx" / f"{_file_digest(weights)}-v{EXPORT_VERSION}" / f"model-{precision}.onnx"
    if target.is_file():
        return target
    try:
        import onnx  # noqa: F401  (only the first use of a precision needs it)
    except ImportError as exc:
        raise ConfigError("building the ONNX embedder needs the onnx package (pip install onnx)") from exc
    target.parent.mkdir(parents=True, exist_ok=True)
    graph, quantization = _RECIPES[precision]
    fp32 = target.with_name(f"model-fp32{'' if graph == 'fused' else '-' + graph}.onnx")
    if not fp32.is_file():
        _atomic_write(fp32, lambda tmp: _save(_fp32_graph(model_dir, graph), tmp))
    if quantization is not None:
        _atomic_write(target, lambda tmp: _quantize(fp32, tmp, quantization))
    return target


def recipe(precision: str) -> str:
    """How ``precision``'s graph is built and quantized, in words: part of the embedder's
    identity that each run records (``plan["engines"]``)."""
    graph, quantization = _RECIPES[precision]
    return f"{precision}: graph {graph}, quantization {quantization or 'none'}, export v{EXPORT_VERSION}"


def disabled_fusions(precision: str) -> list[str]:
    """ONNX Runtime graph fusions a session of ``precision`` must not run: a plain graph's
    residual + LayerNorm would be fused back into the slower SkipLayerNormalization (at load
    time, and for some layers only)."""
    return [] if _RECIPES[precision][0] == "fused" else ["SkipLayerNormFusion"]


def _fp32_graph(model_dir: Path, graph: str) -> Any:
    from ragtt.index.onnx_graph import build_graph

    if graph == "fused":
        return build_graph(model_dir)
    from ragtt.index.onnx_calibration import outlier_channels

    # "plain-apart": the channels apart are the loudest of the same graph without them
    plain = build_graph(model_dir, fused_norm=False, attention_op=True)

    apart = outlier_channels(model_dir, plain)
    return build_graph(model_dir, fused_norm=False, attention_op=True, ffn_outliers=apart)


def _file_digest(path: Path) -> str:
    # The weights' size and mtime stand in for their hash after the first read (84 MB).
    stat = path.stat()
    memo = cache_dir() / "onnx" / "digests.json"
    try:
        known = json.loads(memo.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    key = f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    if key not in known:
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        known[key] = digest.hexdigest()[:16]
        memo.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(memo, lambda tmp: tmp.write_text(json.dumps(known), encoding="utf-8"))
    return str(known[key])


def _atomic_write(target: Path, write: Any) -> None:
    # Two processes may build the same file at once: each writes its own temp file and the
    # rename makes one of the (identical) results win.
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide a shared cache from other users
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _save(model: Any, path: Path) -> None:
    import onnx

    onnx.save_model(model, str(path))


def _quantize(fp32: Path, out: Path, how: str) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from ragtt.index.onnx_graph import OUTLIER_TAG, ffn_down_nodes

    # The weight MatMuls, per output channel (per-tensor weight scales measured cosine 0.89
    # to torch), with one activation scale per tensor. Each layer's FFN down-projection takes
    # the GELU output, whose few loud channels such a scale flattens (quantized so, Cranfield
    # nDCG@10 fell 0.009 below fp32): ``int8`` keeps it fp32; ``blocked`` gives it block-wise
    # scales (:func:`_blocked_matmul`), as close to fp32 as ``int8`` and 1.3x its speed;
    # ``apart`` quantizes it like the rest, its loud channels being in their own small fp32
    # MatMuls. The embedding lookups stay fp32 (a gather, not compute).
    graph = onnx.load(str(fp32), load_external_data=False).graph
    if how == "apart":
        fp32_nodes = [n.name for n in graph.node if n.op_type == "MatMul" and OUTLIER_TAG in n.input[-1]]
    else:
        fp32_nodes = [node.name for node in ffn_down_nodes(graph).values()]
    quiet = logging.getLogger()  # the quantizer advises on the root logger
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        quantize_dynamic(
            str(fp32),
            str(out),
            op_types_to_quantize=["MatMul"],
            nodes_to_exclude=fp32_nodes,
            weight_type=QuantType.QInt8,
            per_channel=True,
        )
    finally:
        quiet.setLevel(level)
    if how == "blocked":
        model = onnx.load(str(out))
        _blocked_matmul(model.graph, set(fp32_nodes))
        onnx.save_model(model, str(out))


def _blocked_matmul(graph: Any, names: set[str]) -> None:
    """Replace the MatMuls ``names`` (constant weights) by ONNX Runtime's ``MatMulNBits``:
    8-bit symmetric weights with one scale per output column and block of
    :data:`DOWN_PROJ_BLOCK` inputs, and ``accuracy_level=4``, which quantizes the activations
    to int8 per the same blocks and multiplies in integers."""
    from onnx import helper, numpy_helper

    weights = {init.name: init for init in graph.initializer}
    nodes, replaced = [], set()
    for node in graph.node:
        if node.name not in names:
            nodes.append(node)
            continue
        replaced.add(node.input[1])
        w = numpy_helper.to_array(weights[node.input[1]]).astype(np.float32)  # (K, N)
        k, n = w.shape
        blocks = -(-k // DOWN_PROJ_BLOCK)
        padded = np.zeros((blocks * DOWN_PROJ_BLOCK, n), dtype=np.float32)
        padded[:k] = w
        by_column = padded.T.reshape(n, blocks, DOWN_PROJ_BLOCK)
        scale = np.abs(by_column).max(axis=2) / 127.0
        scale[scale == 0] = 1.0
        # stored unsigned around MatMulNBits' default zero point, 128
        q = (np.clip(np.rint(by_column / scale[..., None]), -127, 127) + 128).astype(np.uint8)
        q_name, scale_name = f"{node.input[1]}_q8", f"{node.input[1]}_scale"
        graph.initializer.extend(
            [numpy_helper.from_array(q, q_name), numpy_helper.from_array(scale.reshape(-1), scale_name)]
        )
        nodes.append(
            helper.make_node(
                "MatMulNBits",
                [node.input[0], q_name, scale_name],
                list(node.output),
                name=node.name,
                domain="com.microsoft",
                K=k,
                N=n,
                bits=8,
                block_size=DOWN_PROJ_BLOCK,
                accuracy_level=4,
            )
        )
    del graph.node[:]
    graph.node.extend(nodes)
    kept = [init for init in graph.initializer if init.name not in replaced]
    del graph.initializer[:]
    graph.initializer.extend(kept)
