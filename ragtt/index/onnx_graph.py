"""The ONNX graph of a BERT sentence encoder, written op by op from its safetensors weights.

No torch and no exporter: embeddings, encoder layers, mean pooling and L2 norm as
``onnx.helper`` nodes, with ONNX Runtime's contrib kernels where they are faster. Which
options a precision builds with, and how it is quantized, is :mod:`ragtt.index.onnx_export`'s.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragtt.errors import ConfigError

__all__ = ["OUTLIER_TAG", "build_graph", "ffn_down_nodes"]

# Marks the weights of the FFN channels computed apart (``...dense.outliers.weight_t``).
OUTLIER_TAG = ".outliers"
_FFN_DOWN = re.compile(r"encoder\.layer\.(\d+)\.output\.dense\.weight_t")


def ffn_down_nodes(graph: Any) -> dict[int, Any]:
    """Each layer's FFN down-projection MatMul in ``graph`` (its input is the GELU output;
    with channels apart, the wide one)."""
    return {
        int(found.group(1)): node
        for node in graph.node
        if node.op_type == "MatMul" and len(node.input) > 1 and (found := _FFN_DOWN.fullmatch(node.input[1]))
    }


def build_graph(
    model_dir: Path,
    *,
    fused_norm: bool = True,
    attention_op: bool = False,
    ffn_outliers: Mapping[int, Sequence[int]] | None = None,
) -> Any:
    """The encoder of ``model_dir`` as an ONNX ``ModelProto`` (fp32).

    ``fused_norm`` writes each residual + LayerNorm as ONNX Runtime's SkipLayerNormalization
    (the first graph); ``attention_op`` runs the attention as its MultiHeadAttention kernel
    instead of plain ops; ``ffn_outliers`` names, per layer, the FFN channels computed apart
    (:data:`OUTLIER_TAG` in their weights' names) so the rest quantizes with one scale.
    """
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

    def add_norm(dense: str, residual: str, prefix: str) -> str:
        # LayerNorm(dense + b + residual), where dense = branch @ W: BERT's output block
        if not fused_norm:
            # three plain ops: ONNX Runtime folds the bias into the quantized MatMul, and its
            # LayerNormalization kernel is about 3x its SkipLayerNormalization (1.5-1.9 ms
            # against 5.8-6.2 ms at 32 x 180 x 384 here; the session keeps them unfused)
            biased = op("Add", [dense, w(f"{prefix}.dense.bias")])
            return op(
                "LayerNormalization",
                [op("Add", [biased, residual]), w(f"{prefix}.LayerNorm.weight"), w(f"{prefix}.LayerNorm.bias")],
                axis=-1,
                epsilon=eps,
            )
        return op(
            "SkipLayerNormalization",
            [
                dense,
                residual,
                w(f"{prefix}.LayerNorm.weight"),
                w(f"{prefix}.LayerNorm.bias"),
                w(f"{prefix}.dense.bias"),
            ],
            domain="com.microsoft",
            epsilon=eps,
        )

    def ffn(x: str, layer: int, outliers: Sequence[int] | None) -> str:
        # GELU(x @ W1 + b1) @ W2; W2's bias belongs to the output block (add_norm)
        p = f"encoder.layer.{layer}"
        if not outliers:
            inner = op(
                "BiasGelu",
                [matmul(x, f"{p}.intermediate.dense"), w(f"{p}.intermediate.dense.bias")],
                domain="com.microsoft",
            )
            return matmul(inner, f"{p}.output.dense")
        # the channels apart run as a second, narrow FFN whose outputs are added: the same sum
        up_w = weights[f"{p}.intermediate.dense.weight"].astype(np.float32).T  # (H, I)
        up_b = weights[f"{p}.intermediate.dense.bias"].astype(np.float32)
        down_w = weights[f"{p}.output.dense.weight"].astype(np.float32).T  # (I, H)
        apart = np.asarray(sorted(set(outliers)), dtype=np.int64)
        rest = np.setdiff1d(np.arange(up_w.shape[1]), apart)

        def part(columns: np.ndarray, tag: str) -> str:
            up = const(up_w[:, columns], f"{p}.intermediate.dense{tag}.weight_t")
            inner = op(
                "BiasGelu",
                [op("MatMul", [x, up]), const(up_b[columns], f"{p}.intermediate.dense{tag}.bias")],
                domain="com.microsoft",
            )
            return op("MatMul", [inner, const(down_w[columns], f"{p}.output.dense{tag}.weight_t")])

        return op("Add", [part(rest, ""), part(apart, OUTLIER_TAG)])

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
    if attention_op:
        key_padding = op("Cast", [mask], to=TensorProto.INT32, dtype=TensorProto.INT32)

        def attention(q: str, k: str, v: str) -> str:
            # one kernel per (sequence, head): scores, softmax and context stay in cache
            return op("MultiHeadAttention", [q, k, v, "", key_padding], domain="com.microsoft", num_heads=heads)

    else:
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

        def attention(q: str, k: str, v: str) -> str:
            q = op("Transpose", [op("Reshape", [q, split_shape])], perm=[0, 2, 1, 3])
            k = op("Transpose", [op("Reshape", [k, split_shape])], perm=[0, 2, 3, 1])
            v = op("Transpose", [op("Reshape", [v, split_shape])], perm=[0, 2, 1, 3])
            scores = op("Add", [op("Mul", [op("MatMul", [q, k]), scale]), additive])
            context = op("MatMul", [op("Softmax", [scores], axis=-1), v])
            return op("Reshape", [op("Transpose", [context], perm=[0, 2, 1, 3]), merge_shape])

    for i in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{i}.attention.self"
        qkv_w = np.concatenate([weights[f"{p}.{n}.weight"].T for n in ("query", "key", "value")], axis=1)
        qkv_b = np.concatenate([weights[f"{p}.{n}.bias"] for n in ("query", "key", "value")])
        # one (H, 3H) projection for Q, K and V (ONNX Runtime's fused Attention, which also
        # takes the projection, measured as fast here and quantizes worse)
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
        prefix = f"encoder.layer.{i}.attention.output"
        x = add_norm(matmul(attention(q, k, v), f"{prefix}.dense"), x, prefix)
        x = add_norm(ffn(x, i, (ffn_outliers or {}).get(i)), x, f"encoder.layer.{i}.output")

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
