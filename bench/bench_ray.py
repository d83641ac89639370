"""Issue 12, requirement 4: an ingest on Ray against the same ingest in this process.

    python bench/bench_ray.py              # 20,000 documents
    python bench/bench_ray.py --quick      # 2,000 documents
    python bench/bench_ray.py --docs N --workers W --rounds R --json out.json

The documents are bench/common.py's corpus (small Cranfield documents, one chunk each),
written as files to a folder; each round ingests the folder into two fresh projects with
ragtt.HashEmbedder, once with engine="local" and once with engine="ray" on a local Ray of
``--workers`` CPUs (default: every core), started and warmed by a small Ray ingest before
the clock (a team's cluster is up and its workers have imported ragtt; the first, cold
ingest is reported beside). The two sides alternate which goes first. Target: the Ray
ingest no slower than 1.2x the local one on these cores; the point of Ray is scaling out,
so the per-worker rate (documents a second per worker) is the figure to multiply.
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

import common  # noqa: E402

MAX_RATIO = 1.2


def ingest(folder: Path, project: Path, engine: str) -> tuple[float, Any]:
    import ragtt

    with ragtt.Project.open(project, embedder=ragtt.HashEmbedder(common.HASH_DIM), progress=False) as proj:
        started = time.perf_counter()
        report = proj.ingest(folder, engine=engine)
        seconds = time.perf_counter() - started
    if report.failed or len(report.documents_added) == 0:
        raise RuntimeError(f"{engine} ingest failed: {report.failed[:3]}")
    return seconds, report


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=20_000)
    ap.add_argument("--quick", action="store_true", help="2,000 documents")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    n_docs = 2_000 if args.quick else args.docs

    import ray

    path = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    os.environ.setdefault("RAY_raylet_start_wait_time_s", "120")  # 2 busy cores: Ray's 30 s can be short
    os.environ.setdefault("RAY_agent_register_timeout_ms", "300000")
    started = time.perf_counter()
    ray.init(
        num_cpus=args.workers,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": path, "RUST_LOG": "error"}},
    )
    init_s = time.perf_counter() - started
    seconds: dict[str, list[float]] = {"local": [], "ray": []}
    chunks = 0
    try:
        with tempfile.TemporaryDirectory(prefix="ragtt-bench-ray-") as tmp:
            folder = Path(tmp) / "docs"
            folder.mkdir()
            docs, _, source = common.make_corpus(n_docs)
            for name, text in docs:
                (folder / name).write_text(text, encoding="utf-8")
            # Ray starts its worker processes (and they import ragtt) on first use: once per
            # cluster, not per ingest. Warm them on a few documents, and report that first run.
            warm = Path(tmp) / "warm"
            warm.mkdir()
            for name, text in docs[: 4 * args.workers]:
                (warm / name).write_text(text, encoding="utf-8")
            warm_s, _ = ingest(warm, Path(tmp) / "warm-project", "ray")
            for r in range(args.rounds):
                reports = {}
                for engine in ("local", "ray") if r % 2 == 0 else ("ray", "local"):
                    took, reports[engine] = ingest(folder, Path(tmp) / f"{engine}-{r}", engine)
                    seconds[engine].append(took)
                chunks = reports["ray"].chunks_added
                if reports["ray"].chunks_added != reports["local"].chunks_added:
                    raise RuntimeError("the two engines indexed different chunks")
    finally:
        ray.shutdown()

    local, on_ray = statistics.median(seconds["local"]), statistics.median(seconds["ray"])
    ratio = on_ray / local
    per_worker = n_docs / on_ray / args.workers
    verdict = "PASS" if ratio <= MAX_RATIO else "FAIL"
    print(
        f"\nissue 12 / Ray ingest vs local, {n_docs:,} documents ({source}, {chunks:,} chunks), hash embedder, "
        f"{args.workers} Ray workers (median of {args.rounds}; Ray started in {init_s:.1f} s, not counted)"
    )
    print(f"  first ray ingest (cold workers, {4 * args.workers} docs)  {warm_s:.2f} s  info (not counted)")
    print(f"  local ingest                 {local:8.2f} s  {n_docs / local:8.1f} docs/s")
    print(f"  ray ingest                   {on_ray:8.2f} s  {n_docs / on_ray:8.1f} docs/s")
    print(f"  ray / local                  {ratio:8.2f}x  target <= {MAX_RATIO}x  {verdict}")
    print(f"  ray rate per worker          {per_worker:8.1f} docs/s/worker  info")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "docs": n_docs,
                    "chunks": chunks,
                    "workers": args.workers,
                    "ray_init_s": init_s,
                    "ray_first_ingest_s": warm_s,
                    "seconds": seconds,
                    "ratio": ratio,
                    "per_worker_docs_s": per_worker,
                    "status": verdict,
                },
                indent=1,
            ),
            encoding="utf-8",
        )
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
