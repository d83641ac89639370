"""The benchmark harness runs end to end at tiny sizes, ragtt alone (no peer virtualenv)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

import ragtt

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_bench_embedder_copy_matches_ragtt() -> None:
    sys.path.insert(0, str(BENCH))
    try:
        import common
    finally:
        sys.path.remove(str(BENCH))
    texts = [*common.SELF_CHECK_TEXTS, "Lift and drag of a swept wing at Mach 2."]
    assert np.array_equal(common.hash_embed(texts, 64), ragtt.HashEmbedder(64).embed(texts))
    docs, queries, _ = common.make_corpus(30, seed=1)
    assert docs == common.make_corpus(30, seed=1)[0]
    assert len(docs) == 30 and queries
    assert all(0 < len(text) <= common.DOC_MAX_CHARS for _, text in docs)


def test_bench_quick_no_peer(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--quick", "--no-peer", "--no-extra", "--docs", "60",
         "--versions", "14", "--queries", "3", "--json", str(out)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "replay p50 / live query p50" in proc.stdout
    data = json.loads(out.read_text())
    statuses = {r["metric"]: r["status"] for r in data["rows"]}
    assert sum(1 for r in data["rows"] if r["target"] == "1") == 3
    assert all(s == "n/a" for m, s in statuses.items() if "ragtt / peer" in m and "query p50" in m
               and ("bm25" in m or "hybrid" in m))
    versions = data["ragtt"]["versions"]
    assert versions["large"]["table_version"] == 14
    assert versions["mismatches"] == 0
    assert data["ragtt"]["main"]["replay_mismatches"] == 0
