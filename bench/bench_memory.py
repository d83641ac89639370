"""Issue 14, requirement 3: peak memory of ingesting one big text file, against its size.

    python bench/bench_memory.py                 # a 200 MB file (minutes: the hash embedder)
    python bench/bench_memory.py --quick         # a 20 MB file
    python bench/bench_memory.py --before REF    # also the tree at REF, same file, same way

A fresh process per side opens a project with ragtt.HashEmbedder, notes ``ru_maxrss``,
ingests the file with ``Project.ingest`` (maintenance included: it is part of the call)
and reports its peak: the total, which the target (3x the input) is about, and the growth
over the baseline after imports. Also: the versions the ingest write made (must be one)
and the wall time. The file is prose-like: paragraphs of sentences of made-up words.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TARGET = 3.0  # peak RSS (total) / input size
MB = 1_000_000

_CHILD = """
import json, resource, sys, time
import ragtt
ragtt.tune_process()  # as the ragtt CLI does: the arena cap and Lance's read sizes
def peak(): return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
proj = ragtt.Project.open(sys.argv[1], embedder=ragtt.HashEmbedder(), progress=False)
base, t0 = peak(), time.perf_counter()
report = proj.ingest([sys.argv[2]])
seconds = time.perf_counter() - t0
made = proj.events.query(types="ingest.completed")[-1].payload.get("versions")
print(json.dumps({"baseline": base, "peak": peak(), "seconds": seconds, "versions": made,
                  "chunks": report.chunks_added, "failed": report.failed}))
"""


def write_prose(path: Path, size: int, seed: int = 7) -> None:
    rnd = random.Random(seed)
    words = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(2, 10))) for _ in range(5000)]
    written = 0
    with path.open("w", encoding="utf-8") as fh:
        while written < size:
            sentences = (
                " ".join(rnd.choice(words) for _ in range(rnd.randint(6, 20))) for _ in range(rnd.randint(2, 7))
            )
            para = " ".join(s.capitalize() + "." for s in sentences) + "\n\n"
            fh.write(para)
            written += len(para)


def run(tree: Path, folder: Path, file: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree), "RUST_LOG": "error", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(folder), str(file)], capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"ingest failed in {tree} (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return dict(json.loads(proc.stdout))


def before_tree(ref: str, dest: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, "ragtt"], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, help="input size in MB (default 200; --quick 20)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--before", metavar="REF", help="also measure the tree at this git ref")
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args(argv)
    size = (args.mb or (20 if args.quick else 200)) * MB
    with tempfile.TemporaryDirectory(prefix="ragtt-bench-memory-") as tmp:
        root = Path(tmp)
        file = root / "big.txt"
        write_prose(file, size)
        sides = {"now": REPO}
        if args.before:
            sides[f"before ({args.before})"] = before_tree(args.before, root / "before")
        results = {name: run(tree, root / f"proj-{i}", file) for i, (name, tree) in enumerate(sides.items())}
    n = size / MB
    print(f"\n== ingest of a {n:.0f} MB text file: peak RSS / input size (target <= {TARGET:.0f}x, one version)")
    ok = True
    for name, r in results.items():
        total, growth = r["peak"] / size, (r["peak"] - r["baseline"]) / size
        one = r["versions"] is not None and len(r["versions"]) == 1
        passed = total <= TARGET and one and not r["failed"]
        ok = ok and (passed or name != "now")
        verdict = ("PASS" if passed else "FAIL") if name == "now" else "info"
        print(
            f"  {name:<20} peak {r['peak'] / 2**20:7.0f} MiB  {total:5.2f}x input (growth {growth:5.2f}x)  "
            f"versions {r['versions']}  {r['chunks']} chunks  {r['seconds']:6.1f} s  {verdict}"
        )
    if args.json:
        args.json.write_text(json.dumps({"input_bytes": size, "results": results}, indent=2), encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
