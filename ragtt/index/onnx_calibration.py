"""Which FFN channels of an encoder carry outlier activations, measured on a fixed text.

A BERT encoder's GELU outputs are small but for a few channels (in all-MiniLM-L6-v2, one
channel of each of the first four layers reaches 14-24 where the rest stay under about 5).
One per-tensor int8 scale over such a tensor spends most of its 256 levels on those few
channels, so :mod:`ragtt.index.onnx_export` computes the loudest channels of each layer
apart, in fp32, and quantizes the rest. The channels are found by running the fp32 graph
over :data:`CALIBRATION_TEXT`, which is fixed here, so a recipe's graph depends only on the
weights and this code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ragtt.index.onnx_graph import ffn_down_nodes

__all__ = ["CALIBRATION_TEXT", "OUTLIERS_PER_LAYER", "outlier_channels"]

# Channels per layer computed apart: the loud ones stand out at any count from 1; 16 keeps
# the next loudest out of the scale too (measured on 500 Flask chunks: the largest value
# left 3.7-4.9 against 14-24 with them, cosine to fp32 min 0.9950 against 0.9931 with 1).
OUTLIERS_PER_LAYER = 16

CALIBRATION_TEXT = """\
How long is the refund window? Customers may ask for a full refund within 30 days of purchase.
After that, refunds are prorated by the unused part of the subscription.

To install the package, run pip install with the name of the project, then import it in Python.
The command line tool prints its version with --version and its help with --help.

The server listens on port 8080 by default. Set the PORT environment variable to change it,
and restart the service so the new value takes effect.

def add(a, b):
    return a + b

Data retention: logs are kept for 90 days, backups for one year. Personal data is deleted
within 30 days of a verified request, except where the law requires us to keep it.

The Eiffel Tower was completed in 1889 for the World's Fair in Paris. It is 330 metres tall
and was the tallest man-made structure in the world for 41 years.

Photosynthesis converts light energy into chemical energy: plants take in carbon dioxide and
water and release oxygen, storing the energy in glucose.

Error: connection refused (errno 111). Check that the database is running and that the host
and port in the configuration file are correct.

Q: Can I change my plan in the middle of a billing cycle? A: Yes. Upgrades take effect at once
and are charged pro rata; downgrades apply from the next cycle.

The boundary layer thickness grows along a flat plate as the square root of the distance from
the leading edge, and transition to turbulence depends on the Reynolds number.

Routes are registered with a decorator. A view function returns the response body, a status
code and headers; templates are rendered with the context you pass.

Security: all traffic is encrypted with TLS 1.2 or later. Passwords are hashed with a slow,
salted function, and access to production requires two-factor authentication.
"""


def outlier_channels(model_dir: Path, fp32_graph: Any, count: int = OUTLIERS_PER_LAYER) -> dict[int, list[int]]:
    """The ``count`` channels of each layer's GELU output with the largest absolute value over
    :data:`CALIBRATION_TEXT`, one paragraph a sequence, computed with ``fp32_graph`` (a
    ``ModelProto`` from :func:`ragtt.index.onnx_graph.build_graph`, no channels apart)."""
    import onnx
    import onnxruntime as ort
    from onnx import helper
    from tokenizers import Tokenizer

    model = onnx.ModelProto()
    model.CopyFrom(fp32_graph)
    taps = {layer: node.input[0] for layer, node in sorted(ffn_down_nodes(model.graph).items())}
    for name in taps.values():
        model.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(512)
    loudest = {layer: np.zeros(0, dtype=np.float32) for layer in taps}
    for paragraph in CALIBRATION_TEXT.split("\n\n"):
        ids = np.asarray([tokenizer.encode(paragraph).ids], dtype=np.int64)
        outputs = session.run(list(taps.values()), {"input_ids": ids, "attention_mask": np.ones_like(ids)})
        for layer, values in zip(taps, outputs, strict=True):
            peak = np.abs(values).reshape(-1, values.shape[-1]).max(axis=0)
            loudest[layer] = peak if not loudest[layer].size else np.maximum(loudest[layer], peak)
    # stable order among equal peaks, so the choice never depends on the sort
    return {layer: sorted(int(c) for c in np.argsort(-peak, kind="stable")[:count]) for layer, peak in loudest.items()}
