"""Issue 29's watch latency: from the last write of a batch to a query that sees it.

    python bench/bench_watch.py            # Flask's docs, all 22 releases (88 files), 5 rounds
    python bench/bench_watch.py --quick    # 8 releases, 3 rounds

``ragtt watch`` runs as the CLI does, in its own process, over a copy of Flask's docs, one
subfolder per release (a synthetic folder when the shared corpora are absent), with the hash embedder. Each
round makes one change (three pages edited, one added, each with a new passage holding a
word no other page has); the clock runs from the change's last write to the first BM25
retrieval, in this process, whose results hold that word. Side by side in the same round, a
twin project mirrors a twin folder given the same change with one ``ingest`` call. Target
(the issue's): latency at most the debounce plus 1.5x that ingest.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("RUST_LOG", "error")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

import ragtt  # noqa: E402

TARGET = 1.5
POLL_S = 0.02
WAIT_S = 120.0


def _folder(into: Path, releases: int) -> None:
    """Flask's docs at its first ``releases`` releases, a subfolder each, or 60 synthetic pages."""
    found = common.flask_releases()
    into.mkdir(parents=True)
    for release in found[:releases]:
        shutil.copytree(release, into / release.name)
    if found:
        return
    for i in range(60):
        (into / f"page-{i:02d}.md").write_text(f"# Page {i}\n\n" + f"Part {i} ships from dock {i % 9}. " * 80)


def _change(folder: Path, round_: int) -> str:
    """Edit three pages and add one, each with a passage holding this round's word."""
    word = f"zyxwatchround{round_}"
    pages = sorted(p for p in folder.rglob("*") if p.suffix in (".rst", ".md") and p.is_file())
    for page in pages[round_ * 3 : round_ * 3 + 3]:
        with page.open("a") as fh:
            fh.write(f"\n\nA note added in round {round_}: {word} is the word to find.\n")
    (folder / f"added-{round_}.md").write_text(f"# Added in round {round_}\n\n{word} lives here too.\n")
    return word


def _seen(proj: ragtt.Project, word: str) -> bool:
    plan = proj.plan(mode="bm25")
    return any(word in c.text for c in proj.retrieve_at(word, proj.version, plan))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="8 releases, 3 rounds")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--debounce", type=float, default=1.6, help="seconds (default 1.6, the watch's own)")
    args = ap.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 5)
    with tempfile.TemporaryDirectory(prefix="ragtt-bench-watch-") as tmp:
        root = Path(tmp)
        _folder(root / "watched", 8 if args.quick else 22)
        shutil.copytree(root / "watched", root / "twin")
        files = sum(1 for p in (root / "watched").rglob("*") if p.is_file())
        twin = ragtt.Project.open(root / "twin-proj", embedder=ragtt.HashEmbedder(), progress=False)
        twin.ingest(root / "twin")
        env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
        cmd = [sys.executable, "-m", "ragtt.cli", "--project", str(root / "proj"), "--embedder", "hash"]
        cmd += ["watch", str(root / "watched"), "--debounce", f"{args.debounce}s"]
        watcher = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        latencies: list[float] = []
        ingests: list[float] = []
        try:
            assert watcher.stdout is not None
            print(f"  {watcher.stdout.readline().strip()}", file=sys.stderr)  # the catch-up
            proj = ragtt.Project.open(root / "proj", embedder=ragtt.HashEmbedder(), progress=False, create=False)
            for r in range(rounds):
                word = _change(root / "watched", r)
                last_write = time.perf_counter()
                deadline = last_write + WAIT_S
                while not _seen(proj, word):
                    if time.perf_counter() > deadline:
                        raise SystemExit(f"the watch did not index round {r} in {WAIT_S:.0f} s")
                    time.sleep(POLL_S)
                latencies.append(time.perf_counter() - last_write)
                _change(root / "twin", r)
                t0 = time.perf_counter()
                twin.ingest(root / "twin")
                ingests.append(time.perf_counter() - t0)
                assert _seen(twin, word)
            proj.close()
        finally:
            watcher.terminate()  # a service manager's stop: ends between batches
            watcher.wait(timeout=WAIT_S)
            twin.close()
    budgets = [args.debounce + TARGET * i for i in ingests]
    ratios = [lat / b for lat, b in zip(latencies, budgets, strict=True)]
    ratio = statistics.median(ratios)
    verdict = "PASS" if ratio <= 1.0 else "FAIL"
    print(f"watch bench: {rounds} rounds, debounce {args.debounce:g} s, hash embedder, {files} files watched")
    print(
        f"  {'watch latency vs debounce + 1.5x ingest':<44} {ratio:5.2f}x "
        f"({statistics.median(latencies):.3f} s vs {args.debounce:g} s + 1.5 x {statistics.median(ingests):.3f} s)  "
        f"target <= 1.00x  {verdict}  rounds {min(ratios):.2f}-{max(ratios):.2f}x"
    )
    return 0 if ratio <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
