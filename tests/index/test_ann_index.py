"""The ANN index: built by maintenance past ``ann_min_rows``, searched with over-fetch and an
exact rerank, recorded in the plan, and replayed identically; small tables stay exact."""

from __future__ import annotations

import random

import numpy as np
import pytest

import ragtt
from ragtt.index.retrieve import RetrievalPlan

WORDS = [
    "wing",
    "flow",
    "boundary",
    "layer",
    "shock",
    "mach",
    "pressure",
    "heat",
    "transfer",
    "laminar",
    "turbulent",
    "nozzle",
    "jet",
    "plate",
    "cone",
    "cylinder",
    "drag",
    "lift",
    "vortex",
    "wake",
    "supersonic",
    "hypersonic",
    "viscous",
    "inviscid",
    "stagnation",
]
THRESHOLD = 1000


def _texts(n: int, seed: int, prefix: str) -> dict[str, str]:
    rng = random.Random(seed)
    return {f"{prefix}{i:05d}.txt": " ".join(rng.choice(WORDS) for _ in range(12)) for i in range(n)}


@pytest.fixture
def big(open_project):  # type: ignore[no-untyped-def]
    """A project below the threshold: 600 rows, searched exactly (the tests add 700 more, and the index)."""
    proj = open_project(config=ragtt.PipelineConfig(ann_min_rows=THRESHOLD, top_k=5))
    proj.ingest_texts(_texts(600, 1, "a"))
    return proj


def test_small_tables_search_exactly_and_record_it(big: ragtt.Project) -> None:
    res = big.query("shock boundary layer", generate=False)
    plan = big.plan_of(res.query_id)
    assert big.events.last("index.vector_built") is None
    assert plan.vector_index == "auto" and plan.index_uuid is None


def test_index_is_built_past_the_threshold_as_its_own_logged_version(big: ragtt.Project) -> None:
    before = big.version
    big.ingest_texts(_texts(700, 2, "b"))
    built = big.events.last("index.vector_built")
    assert built is not None and built.payload["rows"] == 1300 and built.payload["index_type"] == "IVF_PQ"
    ops = dict(zip(big.versions()["version"].to_list(), big.versions()["operation"].to_list(), strict=True))
    assert ops[built.index_version] == "index" and built.index_version > before
    assert big.verify().ok
    # Once built, a further maintenance does not build it again.
    big.optimize()
    assert len(big.events.query(types="index.vector_built")) == 1


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_indexed_search_records_the_index_and_replays_identically(big: ragtt.Project, mode: str) -> None:
    flat = big.query("laminar heat transfer nozzle", mode=mode, generate=False)
    big.ingest_texts(_texts(700, 2, "b"))
    indexed = big.query("laminar heat transfer nozzle", mode=mode, generate=False)
    plan = big.plan_of(indexed.query_id)
    built = big.events.last("index.vector_built")
    assert built is not None and indexed.index_version >= built.index_version
    assert plan.index_uuid is not None and plan.nprobes > 0 and plan.refine_factor > 0
    # New rows outside the index, and later versions, change nothing about the old searches.
    big.ingest_texts(_texts(200, 3, "c"))
    for original in (flat, indexed):
        again = big.replay(original.query_id)
        assert again.matches_original
        assert [(c.chunk_id, c.score) for c in again.chunks] == [(c.chunk_id, c.score) for c in original.chunks]
        assert big.plan_of(again.query_id).index_uuid == big.plan_of(original.query_id).index_uuid
    assert big.plan_of(flat.query_id).index_uuid is None


def test_later_maintenance_folds_new_rows_into_the_index(big: ragtt.Project, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """pylance builds the index; LanceDB's optimize (another Lance inside it) folds later rows in."""
    from ragtt.index.table import ChunkTable

    big.ingest_texts(_texts(700, 2, "b"))
    built = big.events.last("index.vector_built")
    assert built is not None
    query = big.query("supersonic jet nozzle", generate=False)
    big.ingest_texts(_texts(300, 3, "c"))  # enough rows for maintenance
    table = ChunkTable(tmp_path / "proj" / "lancedb", "chunks")
    first, latest = table.vector_index(built.index_version), table.vector_index(table.latest_version())
    assert first is not None and latest is not None and latest.uuid != first.uuid
    stats = table.view(table.latest_version()).dataset.stats.index_stats(latest.name)
    assert (stats["num_indexed_rows"], stats["num_unindexed_rows"]) == (1600, 0)
    again = big.replay(query.query_id)
    assert again.matches_original and big.plan_of(again.query_id).index_uuid == first.uuid
    assert big.plan_of(big.query("supersonic jet nozzle", generate=False).query_id).index_uuid == latest.uuid


def test_reranked_scores_are_exact_and_a_flat_plan_stays_exact(big: ragtt.Project) -> None:
    big.ingest_texts(_texts(700, 2, "b"))
    text = "vortex wake drag cylinder"
    res = big.query(text, generate=False, top_k=10)
    frame, matrix = big.vectors()
    query = big.query_vector(text)
    assert query is not None
    exact = dict(zip(frame["chunk_id"].to_list(), (matrix @ query).tolist(), strict=True))
    # Each ANN hit's score is its exact cosine similarity (the rerank), not a compressed one.
    assert all(abs(c.score - exact[c.chunk_id]) < 1e-5 for c in res.chunks)
    # A plan recorded before ANN indexes existed (no index fields) is an exact scan, even here.
    old = {
        k: v
        for k, v in big.plan_of(res.query_id).to_dict().items()
        if k not in {"vector_index", "nprobes", "refine_factor", "index_uuid"}
    }
    flat = big.retrieve_at(text, big.version, RetrievalPlan.from_dict(old))
    order = sorted(exact, key=lambda cid: (-exact[cid], cid))[:10]
    assert [c.chunk_id for c in flat] == order
    assert np.allclose([c.score for c in flat], [exact[cid] for cid in order], atol=1e-5)


def test_bm25_plans_never_name_an_index(big: ragtt.Project) -> None:
    big.ingest_texts(_texts(700, 2, "b"))
    res = big.query("mach shock", mode="bm25", generate=False)
    assert big.plan_of(res.query_id).index_uuid is None
    assert big.replay(res.query_id).matches_original


def test_the_threshold_is_never_or_enough_rows_to_train() -> None:
    assert ragtt.PipelineConfig(ann_min_rows=0).ann_min_rows == 0
    with pytest.raises(ragtt.ConfigError, match="ann_min_rows"):
        ragtt.PipelineConfig(ann_min_rows=100)
