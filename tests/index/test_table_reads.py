"""Reads go through the table's Lance dataset (pylance) while LanceDB writes it: a query
logged before that move was ranked by LanceDB's own vector search, so a replay must find
the same rows at the same distances through the dataset."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import ragtt
from ragtt.index.retrieve import RetrievalPlan, retrieve
from ragtt.index.table import CHUNK_COLUMNS, ChunkTable

SAMPLE = Path(__file__).resolve().parents[2] / "ragtt" / "sample"


def test_vector_search_on_the_dataset_is_lancedbs_at_every_version(tmp_path: Path) -> None:
    from ragtt._lazy import import_lancedb

    with ragtt.Project.open(tmp_path / "p", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        for release in ("release-1", "release-2", "release-3"):
            proj.ingest(SAMPLE / release)
        latest = proj.version
    table = ChunkTable(tmp_path / "p" / "lancedb", "chunks")
    db = import_lancedb().connect(str(tmp_path / "p" / "lancedb"))
    rng = np.random.default_rng(7)
    compared = 0
    for version in range(1, latest + 1):
        if table.count(version) == 0:
            continue
        dim = table.vector_dim(version)
        plan = RetrievalPlan("vector", 6, 0, 0.5, "none", "", "hash", dim, "chunks")
        lancedb_view = db.open_table("chunks")
        lancedb_view.checkout(version)
        for _ in range(4):
            vector = rng.standard_normal(dim).astype(np.float32)
            hits = retrieve(table.view(version), plan, "", vector)
            rows = (
                lancedb_view.search(vector, query_type="vector", vector_column_name="vector")
                .distance_type("cosine")
                .select([*CHUNK_COLUMNS, "_distance"])
                .limit(len(hits))
                .to_arrow()
                .to_pylist()
            )
            assert [(r["chunk_id"], 1.0 - r["_distance"]) for r in rows] == [(h.chunk_id, h.score) for h in hits]
            compared += 1
    assert compared >= 8
