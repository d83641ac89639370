"""Build an ONNX graph of a BERT sentence encoder straight from its safetensors weights.

No torch and no exporter: the graph (embeddings, encoder layers, mean pooling, L2 norm) is
written op by op with ``onnx.helper``, so the default embedder runs on ONNX Runtime in an
install that has no torch at all. ``int8`` adds dynamic quantization of the MatMul weights
(``onnxruntime.quantization``) but keeps each layer's FFN down-projection fp32; ``int8-v2``
(the default) quantizes those too, as ``MatMulNBits`` with 8-bit weights and activations in
blocks of :data:`DOWN_PROJ_BLOCK` along the inner dimension. The files are built once per weights file and precision and
kept under the user cache directory (``$RAGTT_CACHE_DIR``, else ``$XDG_CACHE_HOME/ragtt``,
else ``~/.cache/ragtt``), keyed by the weights' hash and :data:`EXPORT_VERSION`.
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

__all__ = ["DOWN_PROJ_BLOCK", "EXPORT_VERSION", "PRECISIONS", "cache_dir", "exported_model"]

# Bump when the graph or a quantization recipe changes: a new version is a new file, never a
# silent change under an existing model_id's cached vectors. A new recipe is a new precision
# name (its own file and model id), so projects built with an older one keep their vectors.
EXPORT_VERSION = 2
PRECISIONS = ("fp32", "int8", "int8-v2")
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
    fp32 = target.with_name("model-fp32.onnx")
    if not fp32.is_file():
        _atomic_write(fp32, lambda tmp: _save(_build_graph(model_dir), tmp))
    if precision != "fp32":
        _atomic_write(target, lambda tmp: _quantize(fp32, tmp, blocked_down_proj=precision == "int8-v2"))
    return target


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


def _quantize(fp32: Path, out: Path, *, blocked_down_proj: bool) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # The weight MatMuls, per output channel (per-tensor weight scales measured cosine 0.89
    # to torch), except each layer's FFN down-projection: its input is the GELU output,
    # whose outliers a per-tensor activation scale flattens (quantized so, Cranfield nDCG@10
    # fell 0.009 below fp32). ``int8`` keeps it fp32; ``int8-v2`` gives it block-wise scales
    # (:func:`_blocked_matmul`): as close to fp32 as ``int8``, and 1.3x its speed.
    # The embedding lookups stay fp32 (a gather, not compute).
    graph = onnx.load(str(fp32), load_external_data=False).graph
    down = [
        n.name
        for n in graph.node
        if n.op_type == "MatMul"
        and len(n.input) > 1
        and n.input[1].endswith(".output.dense.weight_t")
        and ".attention." not in n.input[1]
    ]
    quiet = logging.getLogger()  # the quantizer advises on the root logger
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        quantize_dynamic(
            str(fp32),
            str(out),
            op_types_to_quantize=["MatMul"],
            nodes_to_exclude=down,
            weight_type=QuantType.QInt8,
            per_channel=True,
        )
    finally:
        quiet.setLevel(level)
    if blocked_down_proj:
        model = onnx.load(str(out))
        _blocked_matmul(model.graph, set(down))
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


def _build_graph(model_dir: Path) -> Any:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from safetensors.numpy import load_file

    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    if (
        config.get("model_type") != "bert"
        or config.get("hidden_act") != "gelu"
        or config.get("position_embedding_type", "absolute") != "absolute"
    ):
        raise ConfigError(
            f"{model_dir}: the ONNX builder handles BERT encoders with gelu and absolute "
            "positions; use embedder_backend='torch' for this model"
        )
    weights = {k.removeprefix("bert."): v for k, v in load_file(str(model_dir / "model.safetensors")).items()}
    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    head_dim = hidden // heads
    eps = float(config.get("layer_norm_eps", 1e-12))

    nodes: list[Any] = []
    inits: list[Any] = []
    counter = iter(range(1 << 30))

    def const(array: np.ndarray, name: str | None = None) -> str:
        name = name or f"c{next(counter)}"
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    typed: list[Any] = []

    def op(kind: str, inputs: list[str], domain: str = "", dtype: int = TensorProto.FLOAT, **attrs: Any) -> str:
        out = f"t{next(counter)}"
        nodes.append(helper.make_node(kind, inputs, [out], name=out, domain=domain, **attrs))
        # typed outputs: the quantizer's shape inference cannot see through the fused ops
        typed.append(helper.make_tensor_value_info(out, dtype, None))
        return out

    def w(name: str) -> str:
        return const(weights[name].astype(np.float32), name)

    def matmul(x: str, prefix: str) -> str:
        # torch stores (out, in); MatMul wants (in, out)
        return op("MatMul", [x, const(weights[f"{prefix}.weight"].astype(np.float32).T, f"{prefix}.weight_t")])

    def add_norm(branch: str, residual: str, prefix: str) -> str:
        # LayerNorm(branch @ W + b + residual), BERT's output block, as one fused kernel
        return op(
            "SkipLayerNormalization",
            [
                matmul(branch, f"{prefix}.dense"),
                residual,
                w(f"{prefix}.LayerNorm.weight"),
                w(f"{prefix}.LayerNorm.bias"),
                w(f"{prefix}.dense.bias"),
            ],
            domain="com.microsoft",
            epsilon=eps,
        )

    ids, mask = "input_ids", "attention_mask"
    seq_len = op("Shape", [ids], start=1, end=2, dtype=TensorProto.INT64)
    positions = op(
        "Slice",
        [
            w("embeddings.position_embeddings.weight"),
            const(np.array([0], dtype=np.int64)),
            seq_len,
            const(np.array([0], dtype=np.int64)),
        ],
    )
    token_type = const(weights["embeddings.token_type_embeddings.weight"][0].astype(np.float32), "token_type_0")
    x = op("Add", [op("Add", [op("Gather", [w("embeddings.word_embeddings.weight"), ids]), positions]), token_type])
    x = op(
        "LayerNormalization",
        [x, w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias")],
        axis=-1,
        epsilon=eps,
    )

    mask_f = op("Cast", [mask], to=TensorProto.FLOAT)  # (B, S)
    # (1 - mask) * float32 min, as transformers builds its additive mask: (B, 1, 1, S)
    additive = op(
        "Mul",
        [
            op("Sub", [const(np.array(1.0, dtype=np.float32)), mask_f]),
            const(np.array(np.finfo(np.float32).min, dtype=np.float32)),
        ],
    )
    additive = op("Unsqueeze", [additive, const(np.array([1, 2], dtype=np.int64))])
    split_shape = const(np.array([0, 0, heads, head_dim], dtype=np.int64))
    merge_shape = const(np.array([0, 0, hidden], dtype=np.int64))
    scale = const(np.array(1.0 / np.sqrt(head_dim), dtype=np.float32))
    for i in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{i}.attention.self"
        qkv_w = np.concatenate([weights[f"{p}.{n}.weight"].T for n in ("query", "key", "value")], axis=1)
        qkv_b = np.concatenate([weights[f"{p}.{n}.bias"] for n in ("query", "key", "value")])
        # one (H, 3H) projection for Q, K and V; plain ONNX ops for the attention itself
        # (measured: as fast here as ONNX Runtime's fused Attention, and it quantizes better)
        qkv = op(
            "Add",
            [
                op("MatMul", [x, const(qkv_w.astype(np.float32), f"{p}.qkv_weight")]),
                const(qkv_b.astype(np.float32), f"{p}.qkv_bias"),
            ],
        )
        q, k, v = (
            op("Slice", [qkv, const(np.array([j * hidden])), const(np.array([(j + 1) * hidden])), const(np.array([2]))])
            for j in range(3)
        )
        q = op("Transpose", [op("Reshape", [q, split_shape])], perm=[0, 2, 1, 3])
        k = op("Transpose", [op("Reshape", [k, split_shape])], perm=[0, 2, 3, 1])
        v = op("Transpose", [op("Reshape", [v, split_shape])], perm=[0, 2, 1, 3])
        scores = op("Add", [op("Mul", [op("MatMul", [q, k]), scale]), additive])
        context = op("MatMul", [op("Softmax", [scores], axis=-1), v])
        context = op("Reshape", [op("Transpose", [context], perm=[0, 2, 1, 3]), merge_shape])
        x = add_norm(context, x, f"encoder.layer.{i}.attention.output")
        p = f"encoder.layer.{i}"
        inner = op(
            "BiasGelu",
            [matmul(x, f"{p}.intermediate.dense"), w(f"{p}.intermediate.dense.bias")],
            domain="com.microsoft",
        )
        x = add_norm(inner, x, f"{p}.output")

    # mean over the real tokens, then unit length (sentence-transformers' Pooling + Normalize)
    mask_3d = op("Unsqueeze", [mask_f, const(np.array([2], dtype=np.int64))])
    summed = op("ReduceSum", [op("Mul", [x, mask_3d]), const(np.array([1], dtype=np.int64))], keepdims=0)
    counts = op(
        "Clip",
        [
            op("ReduceSum", [mask_3d, const(np.array([1], dtype=np.int64))], keepdims=0),
            const(np.array(1e-9, dtype=np.float32)),
        ],
    )
    pooled = op("Div", [summed, counts])
    norm = op(
        "Clip",
        [
            op("ReduceL2", [pooled, const(np.array([1], dtype=np.int64))], keepdims=1),
            const(np.array(1e-12, dtype=np.float32)),
        ],
    )
    nodes.append(helper.make_node("Div", [pooled, norm], ["sentence_embedding"]))

    graph = helper.make_graph(
        nodes,
        "ragtt-sentence-encoder",
        [
            helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info(mask, TensorProto.INT64, ["batch", "sequence"]),
        ],
        [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", hidden])],
        initializer=inits,
        value_info=typed,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("com.microsoft", 1)],
        producer_name="ragtt",
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model
