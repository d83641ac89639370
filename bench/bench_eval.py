"""Issue 26's performance rows: a question set evaluated across the history (``proj.evaluate``).

    python bench/bench_eval.py            # Flask 24 x 22 (hybrid); 50 questions x 1,000 versions vs 10
    python bench/bench_eval.py --quick    # the same Flask row; 50 questions x 100 versions vs 10
    python bench/bench_eval.py --only flask    # one row (or --only history)

1. Flask's docs at 22 releases, one snapshot each, 24 questions with reference passages:
   ``proj.evaluate(..., mode="hybrid")`` against the same 528 cells as a loop of
   ``proj.replay_text(question, at=label)``, each side on its own copy of the project, opened
   fresh. Target: the matrix at most 0.3x the loop (wall clock; the processes' CPU time, all
   threads, is printed beside it: on a shared machine it is the steadier of the two).
   Then the same matrix's offline page (``matrix.save_html``: a diff per changed cell with its
   lineage reasons, a timeline per question), against the evaluation it shows. Target: the
   page at most ``PAGE_TARGET`` times the evaluation.
2. A history of N versions (one of 20 documents re-ingested per version, so every version has
   the same size; hash embedder), 50 questions evaluated at all N versions and, on a copy, at
   10 of them spread over the history; each run in a child process of its own. Targets: the
   cost per cell at N at most 1.3x the cost at 10, and the child's peak RSS at N at most
   1.3x the peak at 10 (the matrix itself, 50 x N cells, is a few MB of it).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("RUST_LOG", "error")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

import ragtt  # noqa: E402

FLASK = common.FLASK
MATRIX_TARGET = 0.3
PAGE_TARGET = 2.5
CELL_TARGET = 1.3
MEMORY_TARGET = 1.3
SMALL = 10
QUESTIONS = 50
TOPICS = ["refund", "invoice", "storage", "export", "sharing", "backup", "login", "plan", "team", "device"]
FLASK_QUESTIONS = [
    "What is the minimum Python version supported?",
    "How do I set the SECRET_KEY configuration value?",
    "SESSION_COOKIE_SAMESITE default",
    "install Flask with pip in a virtual environment",
    "Cross-site scripting protection",
    "How do I configure trusted hosts?",
    "How do I rotate secret keys?",
    "What does DEBUG do?",
    "How are config values loaded from environment variables?",
    "What is the default session cookie name?",
    "How do I limit the maximum request size?",
    "What does TESTING enable?",
    "How do I load configuration from a Python file?",
    "What are instance folders?",
    "How do I set a permanent session lifetime?",
    "Which dependencies are installed with Flask?",
    "What does the JSON_SORT_KEYS option do?",
    "How do I protect against CSRF?",
    "What is the Content Security Policy header?",
    "How do I set HTTP Strict Transport Security?",
    "What does SERVER_NAME control?",
    "How do I create a virtual environment on Windows?",
    "What is the PREFERRED_URL_SCHEME setting?",
    "What is the recommended way to store secrets?",
]


def log(message: str) -> None:
    print(f"[bench_eval {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _open(path: Path) -> ragtt.Project:
    return ragtt.Project.open(path, embedder=ragtt.HashEmbedder(common.HASH_DIM), progress=False)


def flask_row(work: Path) -> dict[str, float]:
    a, b = work / "flask-loop", work / "flask-matrix"
    with _open(a) as proj:
        for release in sorted(p for p in FLASK.iterdir() if p.is_dir()):
            proj.ingest(release)
            proj.snapshot(release.name.split("_", 1)[1])
        latest = sorted(p for p in FLASK.iterdir() if p.is_dir())[-1]
    shutil.copytree(a, b)
    passage = " ".join((latest / "docs" / "config.rst").read_text(encoding="utf-8").split()[200:240])
    rows = [{"question": q, "reference_contexts": [passage]} for q in FLASK_QUESTIONS]
    with _open(a) as proj:
        labels = [s.label for s in proj.snapshots()]
        t0, c0 = time.perf_counter(), time.process_time()
        for question in FLASK_QUESTIONS:
            for label in labels:
                proj.replay_text(question, at=label, mode="hybrid")
        loop, loop_cpu = time.perf_counter() - t0, time.process_time() - c0
    with _open(b) as proj:
        t0, c0 = time.perf_counter(), time.process_time()
        matrix = proj.evaluate(rows, mode="hybrid")
        took, took_cpu = time.perf_counter() - t0, time.process_time() - c0
        t0, c0 = time.perf_counter(), time.process_time()
        matrix.save_html(work / "matrix.html")
        page, page_cpu = time.perf_counter() - t0, time.process_time() - c0
    assert len(matrix.columns) == len(labels) and matrix.computed_versions > 0
    cells = len(FLASK_QUESTIONS) * len(labels)
    return {
        "cells": cells,
        "loop_s": loop,
        "matrix_s": took,
        "loop_cpu_s": loop_cpu,
        "matrix_cpu_s": took_cpu,
        "page_s": page,
        "page_cpu_s": page_cpu,
    }


def build_history(path: Path, versions: int) -> None:
    with _open(path) as proj:
        for v in range(versions):
            part = v % 20
            text = (
                f"# Part {part}\n\nRevision {v} of part {part}: the {TOPICS[part % 10]} policy changes here. "
                f"Item {v * 7} ships from dock {v % 9}; the {TOPICS[(part + 3) % 10]} rule keeps {v % 30} days.\n"
            )
            proj.ingest_texts({f"part-{part:02d}.md": text * 3})


def child(path: Path, spread: int) -> None:
    """One evaluation in this process: its time, its cells and the growth of the peak RSS."""
    with _open(path) as proj:
        versions = [int(v) for v in proj.versions().filter(proj.versions()["operation"] != "create")["version"]]
        if spread < len(versions):
            step = len(versions) / spread
            versions = [versions[int(k * step)] for k in range(spread)]
        # Scored by passage (context_recall, context_precision): retrieval and matching, no
        # generation, whose constant cost per cell would only dilute what the versions add.
        rows = [
            {
                "question": f"{TOPICS[k % 10]} policy part {k % 20} dock {k % 9}",
                "reference_contexts": [f"the {TOPICS[k % 10]} policy changes here"],
            }
            for k in range(QUESTIONS)
        ]
        t0, c0 = time.perf_counter(), time.process_time()
        matrix = proj.evaluate(rows, at=versions, mode="hybrid")
        took, cpu = time.perf_counter() - t0, time.process_time() - c0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cells = len(rows) * len(matrix.columns)
    print(json.dumps({"seconds": took, "cpu_seconds": cpu, "cells": cells, "peak_rss_mb": peak / 1024}))


def run_child(path: Path, spread: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(path), "--spread", str(spread)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="100 versions instead of 1,000")
    ap.add_argument("--versions", type=int, default=None)
    ap.add_argument("--only", choices=("flask", "history"), help="run one of the two rows")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--spread", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(Path(args.child), args.spread)
        return 0
    versions = args.versions or (100 if args.quick else 1000)
    rows: list[tuple[str, str, str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="ragtt-bench-eval-") as tmp:
        work = Path(tmp)
        if args.only != "history":
            log("Flask: 22 releases, 24 questions, hybrid; replay_text loop, then the matrix")
            flask = flask_row(work)
            rows += [_flask_line(flask), _page_line(flask)]
        if args.only != "flask":
            log(f"building a history of {versions} versions")
            t0 = time.perf_counter()
            build_history(work / "many", versions)
            log(f"built in {time.perf_counter() - t0:.0f} s; evaluating at {versions}, then at {SMALL} of them")
            shutil.copytree(work / "many", work / "few")
            large = run_child(work / "many", versions)
            small = run_child(work / "few", SMALL)
            rows += _history_lines(large, small, versions)
    shown = {
        "flask": "Flask 24 questions x 22 snapshots",
        "history": f"{QUESTIONS} questions at {versions} and {SMALL}",
    }
    print("history matrix bench: " + "; ".join(v for k, v in shown.items() if args.only in (None, k)))
    for name, value, target, passed in rows:
        print(f"  {name:<36} {value:<50} target {target:<8} {'PASS' if passed else 'FAIL'}")
    return 0 if all(r[3] for r in rows) else 1


def _page_line(flask: dict[str, float]) -> tuple[str, str, str, bool]:
    ratio = flask["page_s"] / flask["matrix_s"]
    cpu = flask["page_cpu_s"] / flask["matrix_cpu_s"]
    value = f"{ratio:.2f}x ({flask['page_s']:.1f} s / {flask['matrix_s']:.1f} s; CPU {cpu:.2f}x)"
    return ("Flask matrix page build / evaluation", value, f"<= {PAGE_TARGET}x", ratio <= PAGE_TARGET)


def _flask_line(flask: dict[str, float]) -> tuple[str, str, str, bool]:
    ratio = flask["matrix_s"] / flask["loop_s"]
    cpu = flask["matrix_cpu_s"] / flask["loop_cpu_s"]
    per_cell = 1e3 / flask["cells"]
    value = (
        f"{ratio:.2f}x ({flask['matrix_s']:.1f} s / {flask['loop_s']:.1f} s; "
        f"{per_cell * flask['matrix_s']:.1f} / {per_cell * flask['loop_s']:.1f} ms a cell; CPU {cpu:.2f}x)"
    )
    return ("Flask matrix / replay_text loop", value, f"<= {MATRIX_TARGET}x", ratio <= MATRIX_TARGET)


def _history_lines(large: dict[str, float], small: dict[str, float], versions: int) -> list[tuple[str, str, str, bool]]:
    per_cell = (large["seconds"] / large["cells"]) / (small["seconds"] / small["cells"])
    cpu = (large["cpu_seconds"] / large["cells"]) / (small["cpu_seconds"] / small["cells"])
    memory = large["peak_rss_mb"] / small["peak_rss_mb"]
    return [
        (
            f"per cell at {versions} / at {SMALL} versions",
            f"{per_cell:.2f}x ({1e3 * large['seconds'] / large['cells']:.1f} ms / "
            f"{1e3 * small['seconds'] / small['cells']:.1f} ms; CPU {cpu:.2f}x)",
            f"<= {CELL_TARGET}x",
            per_cell <= CELL_TARGET,
        ),
        (
            f"peak RSS at {versions} / at {SMALL} versions",
            f"{memory:.2f}x ({large['peak_rss_mb']:.0f} MB / {small['peak_rss_mb']:.0f} MB)",
            f"<= {MEMORY_TARGET}x",
            memory <= MEMORY_TARGET,
        ),
    ]


if __name__ == "__main__":
    sys.exit(main())
