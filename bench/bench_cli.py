"""Issue 14, requirement 2: `ragtt` CLI wall times, this tree against the tree before issue 14.

    python bench/bench_cli.py              # 3 rounds per verb
    python bench/bench_cli.py --quick      # 1 round
    python bench/bench_cli.py --baseline REF

Each side runs `ragtt demo` with its own code and default embedder (this tree: ONNX int8;
the baseline: sentence-transformers on torch) into its own folder, then every verb is run
as a fresh `python -m ragtt.cli` process, the two sides alternating verb by verb so load
drift on the shared cores hits both. The baseline's code comes from `git archive REF`
(default: the commit issue 14 measured "today's" CLI on). Wall time is the whole process,
interpreter start included: what a shell loop or a CI gate waits.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BASELINE = "6933954"  # main before issue 14: the CLI the issue timed
QUESTION = "How many days do I have to ask for a refund?"  # ragtt.demo.QUESTION, logged by the demo
TARGETS = {"query (cached vector)": (1.0, 0.4), "replay": (1.0, 0.4), "query (new text)": (2.0, None)}


def baseline_tree(ref: str, dest: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref, "ragtt", "ragtt_nb"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def cli(tree: Path, args: list[str], cwd: Path) -> float:
    env = {
        **os.environ,
        "PYTHONPATH": str(tree),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "RUST_LOG": "error",
    }
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "ragtt.cli", *args], cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(
            f"ragtt {' '.join(args)} (PYTHONPATH={tree}) exited {done.returncode}: {done.stderr.strip()[-500:]}"
        )
    return elapsed


def logged_queries(project: Path) -> list[str]:
    with sqlite3.connect(f"file:{project / 'events.db'}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT query_id FROM events WHERE type = 'query.completed' ORDER BY seq").fetchall()
    return [r[0] for r in rows]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--baseline", default=BASELINE)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rounds = 1 if args.quick else args.rounds

    with tempfile.TemporaryDirectory(prefix="ragtt-bench-cli-") as tmp:
        work = Path(tmp)
        trees = {"now": REPO, "before": baseline_tree(args.baseline, work / "before-tree")}
        projects: dict[str, Path] = {}
        ids: dict[str, list[str]] = {}
        for side, tree in trees.items():
            cli(tree, ["demo", "--out", str(work / f"demo-{side}")], work)
            projects[side] = work / f"demo-{side}" / "project"
            ids[side] = logged_queries(projects[side])

        def verbs(side: str, round_: int) -> dict[str, list[str]]:
            then, now = ids[side][0], ids[side][-1]
            return {
                "query (cached vector)": ["query", QUESTION],
                "query (new text)": ["query", f"Is there a refund window for plan {side}-{round_}?"],
                "replay": ["replay", "--query-id", then],
                "trace": ["trace", then],
                "events": ["events"],
                "snapshots": ["snapshots"],
                "diff": ["diff", "--left", then, "--right", now],
            }

        seconds: dict[str, dict[str, list[float]]] = {}
        for r in range(rounds):
            for verb in verbs("now", r):
                for side in ("now", "before") if r % 2 == 0 else ("before", "now"):
                    argv = [*verbs(side, r)[verb], "--project", str(projects[side])]
                    seconds.setdefault(verb, {}).setdefault(side, []).append(cli(trees[side], argv, work))

    print(
        f"\nissue 14 / CLI wall time per call, this tree vs {args.baseline} (median of {rounds}; "
        "demo project, fresh process each)"
    )
    width = max(map(len, seconds))
    results: list[dict[str, Any]] = []
    for verb, sides in seconds.items():
        now, before = statistics.median(sides["now"]), statistics.median(sides["before"])
        ratio = now / before
        limit, max_ratio = TARGETS.get(verb, (None, None))
        target, ok = "info", None
        if limit is not None:
            ok = now <= limit and (max_ratio is None or ratio <= max_ratio)
            target = f"<= {limit:.1f} s" + (f", <= {max_ratio}x" if max_ratio else "")
        verdict = "info" if ok is None else ("PASS" if ok else "FAIL")
        print(f"  {verb:<{width}}  now {now:6.2f} s  before {before:6.2f} s  {ratio:5.2f}x  {target:>18}  {verdict}")
        results.append(
            {"verb": verb, "now_s": sides["now"], "before_s": sides["before"], "ratio": ratio, "status": verdict}
        )
    if args.json:
        args.json.write_text(
            json.dumps({"baseline": args.baseline, "rounds": rounds, "rows": results}, indent=1), encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
