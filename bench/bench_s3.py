"""Issue 12: replay with the index on S3-compatible storage against the same project with its
index in the folder.

    python bench/bench_s3.py              # 2,000 documents, 20 queries x 3 rounds per mode
    python bench/bench_s3.py --quick      # 200 documents, 5 queries x 1 round
    python bench/bench_s3.py --docs N --queries Q --rounds R --json out.json

Two projects get the same documents (bench/common.py's corpus, one chunk each, hash
embedder, top_k 4) in one ingest call each: one with its index in ``lancedb/``, one with
``index_uri="s3://ragtt-test/bench"`` on ``moto_server`` on loopback, started here the way the
tests start it (``tests/backends.s3_server``) and stopped by PID. Both logs are SQLite files
in their folders, so the index is the only difference. Every query is logged on both, then
the S3 project is reopened twice: with its index cache (ragtt/index/cache.py) in a new,
empty folder of its own (side ``s3``), and with no cache (``s3 no cache``, an info side).
Every logged query is replayed on each side, in an order that rotates, so load on the
shared cores hits all alike. Target: replay p50 on S3 (cached) within 1.5x of the local
index, for each of vector, bm25, hybrid. Opening each project again and its first replay (its
view opened cold; on ``s3``, the cache empty, so the open downloads the version's files) is
an info row.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("RUST_LOG", "error")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

import common  # noqa: E402

MODES = ("vector", "bm25", "hybrid")
TOP_K = 4
MAX_RATIO = 1.5
SIDES = ("local", "s3", "s3 no cache")


def open_project(path: Path, **index: Any) -> Any:
    import ragtt

    return ragtt.Project.open(
        path,
        config=ragtt.PipelineConfig(top_k=TOP_K),
        embedder=ragtt.HashEmbedder(common.HASH_DIM),
        progress=False,
        **index,
    )


def timed_ms(fn: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    value = fn()
    return value, (time.perf_counter() - started) * 1e3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, help="documents (default 2,000; quick 200)")
    ap.add_argument("--queries", type=int, help="distinct query texts per mode (default 20; quick 5)")
    ap.add_argument("--rounds", type=int, help="replays of each logged query per side (default 3; quick 1)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    n_docs = args.docs or (200 if args.quick else 2000)
    n_queries = args.queries or (5 if args.quick else 20)
    rounds = args.rounds or (1 if args.quick else 3)
    docs, queries, source = common.make_corpus(n_docs)
    queries = queries[:n_queries]
    from tests.backends import BUCKET, s3_server

    rows: list[dict[str, Any]] = []
    print(
        f"\nissue 12 / index on S3 (moto on loopback) vs in the folder: {n_docs:,} {source} documents, "
        f"{len(queries)} queries x {rounds} rounds per mode"
    )
    with tempfile.TemporaryDirectory(prefix="ragtt-bench-s3-") as tmp, s3_server() as options:
        index = {"index_uri": f"s3://{BUCKET}/bench", "storage_options": options}
        projects = {
            "local": open_project(Path(tmp) / "local"),
            "s3": open_project(Path(tmp) / "s3", index_cache=Path(tmp) / "cache-logging", **index),
        }
        reopen = {
            "local": {},
            "s3": {"storage_options": options, "index_cache": Path(tmp) / "cache"},  # empty: cold
            "s3 no cache": {"storage_options": options, "index_cache": False},
        }
        try:
            logged: dict[str, dict[str, list[str]]] = {}
            cold: dict[str, float] = {}
            for side, proj in list(projects.items()):
                report, ms = timed_ms(lambda p=proj: p.ingest_texts(dict(docs)))
                if report.failed:
                    raise RuntimeError(f"{side}: {len(report.failed)} documents failed: {report.failed[:3]}")
                print(f"  {side + ': ingest (one call)':<44} {ms / 1e3:8.2f} s", flush=True)
                logged[side] = {
                    mode: [proj.query(q, mode=mode, generate=False).query_id for q in queries] for mode in MODES
                }
                proj.close()
            logged["s3 no cache"] = logged["s3"]
            for side in SIDES:  # a fresh process's view: nothing opened yet (opening reads the latest)
                projects[side], opened_ms = timed_ms(lambda s=side: open_project(Path(tmp) / s.split()[0], **reopen[s]))
                _, cold[side] = timed_ms(lambda p=projects[side], q=logged[side]["hybrid"][0]: p.replay(q))
                cold[side] += opened_ms
            samples: dict[tuple[str, str], list[float]] = {(s, m): [] for s in SIDES for m in MODES}
            mismatches = 0
            for mode in MODES:
                for round_no in range(rounds):
                    for i in range(len(queries)):
                        turn = (i + round_no) % len(SIDES)
                        order = SIDES[turn:] + SIDES[:turn]
                        for side in order:
                            qid = logged[side][mode][i]
                            replay, ms = timed_ms(lambda p=projects[side], q=qid: p.replay(q))
                            samples[side, mode].append(ms)
                            mismatches += not replay.matches_original
            cached = [f.stat().st_size for f in (Path(tmp) / "cache").glob("*/*.lance/**/*") if f.is_file()]
        finally:
            for proj in projects.values():
                proj.close()

    print(
        f"  {'reopen + first replay, cold (hybrid)':<44} local {cold['local']:7.2f} ms   "
        f"s3 {cold['s3']:7.2f} ms   {cold['s3'] / cold['local']:5.2f}x  info (s3: the cache empty)"
    )
    print(
        f"  {'  the same, s3 with no cache':<44} local {cold['local']:7.2f} ms   "
        f"s3 {cold['s3 no cache']:7.2f} ms   {cold['s3 no cache'] / cold['local']:5.2f}x  info"
    )
    ok = mismatches == 0
    for mode in MODES:
        local, s3, bare = (statistics.median(samples[side, mode]) for side in SIDES)
        ratio = s3 / local
        passed = ratio <= MAX_RATIO
        ok = ok and passed
        print(
            f"  {'replay p50 ' + mode:<44} local {local:7.2f} ms   s3 {s3:7.2f} ms   {ratio:5.2f}x  "
            f"<= {MAX_RATIO}x  {'PASS' if passed else 'FAIL'}",
            flush=True,
        )
        print(
            f"  {'  the same, s3 with no cache':<44} local {local:7.2f} ms   s3 {bare:7.2f} ms   "
            f"{bare / local:5.2f}x  info",
            flush=True,
        )
        rows.append(
            {
                "mode": mode,
                "local_p50_ms": local,
                "s3_p50_ms": s3,
                "s3_no_cache_p50_ms": bare,
                "ratio": ratio,
                "no_cache_ratio": bare / local,
                "pass": passed,
                "local_ms": samples["local", mode],
                "s3_ms": samples["s3", mode],
                "s3_no_cache_ms": samples["s3 no cache", mode],
            }
        )
    print(
        f"  replays matching the original: {mismatches} mismatches of {len(SIDES) * len(MODES) * rounds * len(queries)}"
    )
    print(f"  the s3 side's index cache after its replays: {len(cached)} files, {sum(cached) / 2**20:.1f} MiB")
    if args.json:
        out = {
            "docs": n_docs,
            "queries": len(queries),
            "rounds": rounds,
            "cold_ms": cold,
            "mismatches": mismatches,
            "cache_files": len(cached),
            "cache_bytes": sum(cached),
            "rows": rows,
        }
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
