"""Issue 11, requirement 5: OpenTelemetry trace export, queries per second to OTLP/JSON.

    python bench/bench_traces.py             # 2,000 logged queries over 300 documents
    python bench/bench_traces.py --quick     # 300 queries

A project (hash embedder, extractive answers) logs the queries; then their traces are
exported from the event log with ``proj.export_traces(ids)`` and written as JSON text (what
``ragtt export-traces --out`` writes). Each round re-reads the log and the chunk table: no
trace is cached; the best of the rounds counts (the cores are shared: the slower rounds
measure the neighbours). Also shown: one ``export_traces(id)`` call per query.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import ragtt  # noqa: E402 - the tree this script sits in, not an installed copy

TARGET_QPS = 1000.0
WORDS = [
    "refund",
    "shipping",
    "invoice",
    "receipt",
    "warranty",
    "return",
    "policy",
    "days",
    "card",
    "order",
    "express",
    "account",
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--docs", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    n_queries = 300 if args.quick else args.queries

    with tempfile.TemporaryDirectory(prefix="ragtt-bench-traces-") as tmp:
        proj = ragtt.Project.open(Path(tmp) / "proj", embedder=ragtt.HashEmbedder(), progress=False)
        texts = {
            f"doc-{i:04d}.md": f"# Doc {i}\n\n"
            + " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(60))
            + f" item {i}.\n"
            for i in range(args.docs)
        }
        proj.ingest_texts(texts)
        ids = [
            proj.query(f"{WORDS[i % len(WORDS)]} {WORDS[(i * 3) % len(WORDS)]} {i}").query_id for i in range(n_queries)
        ]
        spans = 0
        batch_s: list[float] = []
        for _ in range(args.rounds):
            started = time.perf_counter()
            text = json.dumps(proj.export_traces(ids))
            batch_s.append(time.perf_counter() - started)
            spans = text.count('"spanId"')
        sample = ids[: min(len(ids), 300)]
        started = time.perf_counter()
        for query_id in sample:
            json.dumps(proj.export_traces(query_id))
        single_s = (time.perf_counter() - started) / len(sample)
        proj.close()

    qps = n_queries / min(batch_s)
    verdict = "PASS" if qps >= TARGET_QPS else "FAIL"
    print(f"\nissue 11 / trace export to OTLP/JSON ({n_queries} queries, {spans} spans, best of {args.rounds})")
    print(f"  export_traces(ids) + json.dumps   {qps:8.0f} queries/s   >= {TARGET_QPS:.0f} queries/s  {verdict}")
    print(f"  export_traces(id), one per query  {1 / single_s:8.0f} queries/s   info")
    if args.json:
        args.json.write_text(
            json.dumps(
                {"queries": n_queries, "batch_s": batch_s, "qps": qps, "single_qps": 1 / single_s, "status": verdict}
            ),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
