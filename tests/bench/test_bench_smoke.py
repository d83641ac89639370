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
        [
            sys.executable,
            str(BENCH / "run.py"),
            "--quick",
            "--no-peer",
            "--no-extra",
            "--docs",
            "60",
            "--versions",
            "14",
            "--queries",
            "3",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "replay p50 / live query p50" in proc.stdout
    data = json.loads(out.read_text())
    statuses = {r["metric"]: r["status"] for r in data["rows"]}
    assert sum(1 for r in data["rows"] if r["target"] == "1") == 3
    assert all(
        s == "n/a"
        for m, s in statuses.items()
        if "ragtt / peer" in m and "query p50" in m and ("bm25" in m or "hybrid" in m)
    )
    versions = data["ragtt"]["versions"]
    assert versions["large"]["table_version"] == 14
    assert versions["mismatches"] == 0
    assert data["ragtt"]["main"]["replay_mismatches"] == 0
    # issue 5: the drift row is judged on ragtt's own time; lineage needs the peer
    drift_row = next(r for r in data["rows"] if r["metric"].startswith("full drift scan, 60 docs"))
    assert drift_row["status"] == "PASS" and drift_row["baseline"] is None
    lineage_row = next(r for r in data["rows"] if r["metric"].startswith("lineage p50"))
    assert lineage_row["status"] == "n/a"
    analysis = data["ragtt"]["analysis"]
    assert analysis["drift"]["sources"] == 60 and analysis["drift"]["drifted"] >= 1
    assert analysis["lineage"]["entries"], "the re-ingest should move chunks out of the top-k"
    assert "analysis_ref" not in data["ragtt"]  # 60 docs: no 200-document reference run

    # the results page is generated from that JSON: one Markdown row per target, no hand edits
    page = tmp_path / "bench.md"
    rendered = subprocess.run(
        [sys.executable, str(BENCH / "render.py"), str(out), "-o", str(page)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert rendered.returncode == 0, rendered.stderr
    table = [line for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("| ")]
    assert table[0] == "| # | metric | ragtt | peer / baseline | ratio | goal | result |"
    assert len(table) == 1 + len(data["rows"])
    assert any(line.startswith("| 1 | replay p50 / live query p50 (vector, 60 docs)") for line in table)
    assert "--quick: indicative only" in page.read_text(encoding="utf-8")


def test_bench_render_says_where_the_results_are_missing(tmp_path: Path) -> None:
    missing = tmp_path / "none.json"
    done = subprocess.run([sys.executable, str(BENCH / "render.py"), str(missing)], capture_output=True, text=True)
    assert done.returncode == 2 and "./dev bench --json" in done.stderr


def test_bench_revisions_are_deterministic_and_lead_with_the_query() -> None:
    sys.path.insert(0, str(BENCH))
    try:
        import common
    finally:
        sys.path.remove(str(BENCH))
    docs, queries, _ = common.make_corpus(40, seed=3)
    top = [[docs[5][0], docs[7][0]], [docs[7][0], docs[11][0]]]
    out = common.revisions(docs, queries[:2], top)
    assert out == common.revisions(docs, queries[:2], top)
    every_tenth = {docs[i][0] for i in range(0, 40, common.REVISE_EVERY)}
    assert set(out) == every_tenth | {docs[5][0], docs[7][0], docs[11][0]}
    assert out[docs[7][0]].startswith(queries[0])  # the first query whose top-k holds it
    assert out[docs[11][0]].startswith(queries[1])
    assert all(len(text) <= common.DOC_MAX_CHARS + 20 for text in out.values())
    assert all(out[name] != text for name, text in docs if name in out)


def test_bench_scale_tiny_curves_and_chart(tmp_path: Path) -> None:
    out, chart = tmp_path / "scale.json", tmp_path / "scale.png"
    cmd = [sys.executable, str(BENCH / "bench_scale.py"), "--chunks", "300", "--versions", "10,45"]
    cmd += ["--queries", "2", "--events", "200", "--json", str(out), "--chart", str(chart)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    cells = json.loads(out.read_text())
    assert [c["curve"] for c in cells] == ["chunks", "versions"], proc.stderr
    assert all(c["replays_identical"] for c in cells) and cells[1]["versions"] >= 45
    assert set(cells[1]["side_by_side"]) == {
        f"{k}_{m}" for k in ("query", "replay") for m in ("vector", "bm25", "hybrid")
    }
    assert cells[0]["events"] >= 200 and "events.frame() over" in proc.stdout
    assert chart.exists() or chart.with_suffix(".html").exists()
