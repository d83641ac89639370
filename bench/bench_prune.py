"""Issue 12, requirement 5: retention on a 1,000-version, 100,000-event project.

    python bench/bench_prune.py             # 1,000 versions, 100,000 events (building it takes minutes)
    python bench/bench_prune.py --quick     # 100 versions, 5,000 events

The history: one ingest per version (a document edited in turn), a snapshot every other
version, and the rest of the events queries (bm25, four events each) spread evenly over
the versions. Then ``proj.prune(max_snapshots=50)`` is timed, and the project's disk use
(the index folder and the event log) is measured before and after. Targets: the prune in
under 30 s, and the disk use down by at least 80%.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("RUST_LOG", "error")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

import ragtt  # noqa: E402

EVENTS_PER_QUERY = 4  # received, retrieval, context, completed (no generation)
PRUNE_TARGET_S = 30.0
DISK_TARGET = 0.80


def build(path: Path, versions: int, events: int, snapshots_every: int) -> None:
    queries = max(0, events - 2 * versions) // EVENTS_PER_QUERY  # each ingest logs two events
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        asked = 0
        for v in range(versions):
            text = f"# Part {v % 20}\n\nRevision {v} of part {v % 20}: item {v * 7} ships from dock {v % 9}.\n"
            proj.ingest_texts({f"part-{v % 20:02d}.md": text * 3})
            due = (v + 1) * queries // versions
            while asked < due:
                proj.query(f"item {asked * 7} dock {asked % 9}", generate=False, mode="bm25")
                asked += 1
            if v % snapshots_every == snapshots_every - 1:
                proj.snapshot(f"r{v}")


def disk(proj: ragtt.Project) -> int:
    return common.dir_bytes(proj.path / "lancedb") + proj.events.size_bytes()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="100 versions and 5,000 events")
    ap.add_argument("--versions", type=int, default=None)
    ap.add_argument("--events", type=int, default=None)
    ap.add_argument("--keep", type=int, default=50, help="max_snapshots")
    args = ap.parse_args(argv)
    versions = args.versions or (100 if args.quick else 1000)
    events = args.events or (5_000 if args.quick else 100_000)
    keep = min(args.keep, versions // 20) if args.quick else args.keep
    with tempfile.TemporaryDirectory(prefix="ragtt-bench-prune-") as tmp:
        path = Path(tmp) / "proj"
        t0 = time.perf_counter()
        build(path, versions, events, snapshots_every=2)
        built = time.perf_counter() - t0
        with ragtt.Project.open(path, progress=False) as proj:
            logged = len(proj.events.query())
            before = disk(proj)
            t0 = time.perf_counter()
            report = proj.prune(max_snapshots=keep)
            took = time.perf_counter() - t0
            after = disk(proj)
            ok = proj.verify().ok
    drop = 1 - after / before
    print(f"retention bench: {versions} versions, {logged} events, built in {built:.0f} s")
    print(f"  {report.to_text()}")
    rows = [
        (f"prune to {keep} snapshots", f"{took:6.2f} s", f"< {PRUNE_TARGET_S:.0f} s", took < PRUNE_TARGET_S),
        (
            "disk use drop",
            f"{drop:6.1%} ({before / 1e6:.1f} -> {after / 1e6:.1f} MB)",
            f">= {DISK_TARGET:.0%}",
            drop >= DISK_TARGET,
        ),
        ("verify() after prune", "ok" if ok else "PROBLEMS", "ok", ok),
    ]
    for name, value, target, passed in rows:
        print(f"  {name:<24} {value:<32} target {target:<8} {'PASS' if passed else 'FAIL'}")
    return 0 if all(r[3] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
