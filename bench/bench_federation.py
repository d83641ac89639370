"""Federation's performance rows: a federated query over 3 members, and its replay.

    python bench/bench_federation.py            # 3 members of 1,000 documents each, 30 queries x 3 rounds
    python bench/bench_federation.py --quick    # 3 members of 200 documents, 10 queries x 2 rounds

Cranfield documents (bench/common.py's corpus, hash embedder) dealt into three member
projects, one federation over them. For each query, interleaved (load drift on shared cores
hits every side alike): each member's own ``proj.query`` (logged in its own log), the fusion
alone (``ragtt.federation.fusion.fuse`` over the three members' lists), ``fed.query`` and
``fed.replay`` of it. Generation off everywhere. Targets:

1. federated query p50 <= 1.3x (the slowest member's own query + the fusion), p50 over the
   per-query sums;
2. federated replay p50 <= 1.2x the federated live query p50.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("RUST_LOG", "error")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import common  # noqa: E402

import ragtt  # noqa: E402 - the tree this script sits in
from ragtt.federation.fusion import fuse  # noqa: E402

QUERY_TARGET = 1.3
REPLAY_TARGET = 1.2
MEMBERS = ("docs", "tickets", "runbooks")


def ms(started: float) -> float:
    return (time.perf_counter() - started) * 1e3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=1000, help="documents per member")
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    per_member, n_queries, rounds = (200, 10, 2) if args.quick else (args.docs, args.queries, args.rounds)

    docs, queries, source = common.make_corpus(per_member * len(MEMBERS))
    queries = queries[:n_queries]
    with tempfile.TemporaryDirectory(prefix="ragtt-bench-federation-") as tmp:
        members = {}
        for k, name in enumerate(MEMBERS):
            proj = ragtt.Project.open(Path(tmp) / name, embedder=ragtt.HashEmbedder(), progress=False)
            proj.ingest_texts(dict(docs[k :: len(MEMBERS)]))
            members[name] = proj
        fed = ragtt.Federation.create(Path(tmp) / "fed", members=members)
        weights = fed.fusion["weights"]
        for q in queries[:2]:  # warm every path once
            fed.replay(fed.query(q, generate=False).query_id)
            for proj in members.values():
                proj.query(q, generate=False)
        baseline: list[float] = []
        live: list[float] = []
        replay: list[float] = []
        fusion: list[float] = []
        for _ in range(rounds):
            for q in queries:
                own = []
                for proj in members.values():
                    started = time.perf_counter()
                    proj.query(q, generate=False)
                    own.append(ms(started))
                lists = [(n, p.retrieve_at(q, p.version)) for n, p in members.items()]
                started = time.perf_counter()
                fuse(lists, weights, max(len(c) for _, c in lists))
                fusion.append(ms(started))
                baseline.append(max(own) + fusion[-1])
                started = time.perf_counter()
                result = fed.query(q, generate=False)
                live.append(ms(started))
                started = time.perf_counter()
                again = fed.replay(result.query_id)
                replay.append(ms(started))
                assert again.matches_original, q
        fed.close()
        for proj in members.values():
            proj.close()

    rows = [
        {
            "metric": "federated query p50 / (slowest member's query + fusion) p50",
            "ragtt": common.p50(live),
            "baseline": common.p50(baseline),
            "target": QUERY_TARGET,
        },
        {
            "metric": "federated replay p50 / federated live query p50",
            "ragtt": common.p50(replay),
            "baseline": common.p50(live),
            "target": REPLAY_TARGET,
        },
    ]
    print(
        f"\nfederation: 3 members x {per_member} documents ({source}), {len(queries)} queries x {rounds} rounds, "
        f"{os.cpu_count()} CPUs"
    )
    for row in rows:
        row["ratio"] = row["ragtt"] / row["baseline"]
        row["status"] = "PASS" if row["ratio"] <= row["target"] else "FAIL"
        print(
            f"  {row['metric']:<62} {row['ragtt']:7.2f} ms / {row['baseline']:7.2f} ms = {row['ratio']:5.2f}x"
            f"   <= {row['target']}x  {row['status']}"
        )
    print(f"  {'fusion alone p50 (info)':<62} {common.p50(fusion):7.3f} ms")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "fusion_p50_ms": common.p50(fusion)}), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
