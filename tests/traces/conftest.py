from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ragtt

TEXTS = {
    "refund-policy.md": "# Refunds\n\nRefunds are accepted within 30 days of purchase with a receipt.\n",
    "shipping.md": "# Shipping\n\nOrders ship within two business days. Express shipping costs extra.\n",
    "returns.md": "# Returns\n\nReturned items must be unused. Refunds go to the original card.\n",
}
ANSWER = "Refunds are accepted within 30 days."


@pytest.fixture
def llm_project(tmp_path: Path) -> Iterator[ragtt.Project]:
    """A project whose answers come from litellm's offline mock (a real ModelResponse, with usage)."""
    generator = ragtt.LiteLLMGenerator("gpt-4o-mini", mock_response=ANSWER)
    with ragtt.Project.open(
        tmp_path / "proj", embedder=ragtt.HashEmbedder(), generator=generator, progress=False
    ) as proj:
        proj.ingest_texts(TEXTS)
        yield proj


def spans_of(otlp: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for r in otlp["resourceSpans"] for scope in r["scopeSpans"] for s in scope["spans"]]


def attrs(span: dict[str, Any]) -> dict[str, Any]:
    """An OTLP/JSON span's attributes as plain values (intValue strings back to int)."""
    out: dict[str, Any] = {}
    for item in span["attributes"]:
        ((kind, value),) = item["value"].items()
        out[item["key"]] = int(value) if kind == "intValue" else value
    return out
