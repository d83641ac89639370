from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import ragtt
from ragtt.serve import create_app

SCRIPT = "<script>alert('x')</script>"
TEXTS = {
    "refund-policy.md": "# Refunds\n\nRefunds are accepted within 30 days of purchase with a receipt.\n",
    "shipping.md": "# Shipping\n\nOrders ship within two business days. Express shipping costs extra.\n",
    f"evil{SCRIPT}.md": f"# Evil\n\n{SCRIPT} refunds are never accepted here.\n",
}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(tmp_path / "proj", embedder=ragtt.HashEmbedder())) as c:
        response = c.post("/ingest", json={"texts": TEXTS})
        assert response.status_code == 200, response.text
        yield c
