"""Notebook widgets III: first paint of a 500-question x 1,000-version HistoryMatrix in
headless Chromium with no network. The issue's bar: under 1 s.

The matrix is synthetic (``HistoryMatrix.to_dict()``'s wire format: three metrics, a tenth
of the cells absent, every tenth column a snapshot label, a query id per cell) over a small
real project, so the widget's state is what ``ragtt_nb.HistoryMatrix`` builds for that size:
values as float32, query ids packed, and, past ``COMPARE_LIMIT`` runs, no precomputed diffs
(a click asks the kernel). The state is saved in a notebook exported by the ragtt report
template (``bench_widgets.report_page``). "First paint" runs from navigation start to
the frame after the heatmap is drawn (``data-painted``; parsing the page's scripts and
decoding the state included); "view" is the part from the widget area appearing. A 10 x 10
matrix's page is timed in the same run as the reference: what the page costs whatever the
matrix's size (on a loaded machine, most of it), so the ratio shows what the size adds.

    .venv/bin/python bench/bench_widgets3.py [--questions 500] [--versions 1000] [--rounds 3] [--check]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import ragtt

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_widgets import paint_times, report_page  # the sibling bench's helpers

PAINT_TARGET_S = 1.0
METRICS = ("context_recall", "context_precision", "ndcg@10")


class Synthetic:
    """A matrix in ``ragtt.HistoryMatrix.to_dict()``'s wire format."""

    def __init__(self, questions: int, versions: int) -> None:
        rng = np.random.default_rng(0)
        self.metrics = list(METRICS)
        self.wire: dict[str, Any] = {
            "metrics": list(METRICS),
            "questions": [
                {"id": f"q{i:04d}", "question": f"Question {i} about topic {i % 37}?"} for i in range(questions)
            ],
            "columns": [
                {"version": v + 1, "label": f"release-{v // 10}" if v % 10 == 0 else None, "at": "2025-01-01T00:00:00Z"}
                for v in range(versions)
            ],
            "cells": {},
            "query_ids": [[f"{q * versions + v:032x}" for v in range(versions)] for q in range(questions)],
            "unparseable": [],
        }
        for m in METRICS:
            values = rng.random((questions, versions))
            values[rng.random((questions, versions)) < 0.1] = np.nan
            self.wire["cells"][m] = [[None if np.isnan(x) else float(x) for x in row] for row in values]

    def to_dict(self, *, regressions: Any = True) -> dict[str, Any]:
        return self.wire  # no regressions: a synthetic matrix has no log to explain them from


def first_paint(html: Path, rounds: int) -> list[tuple[float, float]]:
    probe = """
      window.__viewStart = null;
      new MutationObserver((_, obs) => {
        if (!window.__viewStart && document.querySelector('VIEW_HOST')) window.__viewStart = performance.now();
        if (document.querySelector('.ragtt-history-matrix[data-painted]')) {
          obs.disconnect();
          requestAnimationFrame(() => { window.__painted = performance.now(); });
        }
      }).observe(document, { childList: true, subtree: true, attributes: true });
    """
    return paint_times(html, probe, rounds, root=".ragtt-history-matrix", timeout_ms=60_000)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--versions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--check", action="store_true", help="exit 1 when the target is missed")
    args = parser.parse_args()
    from ragtt.demo import sample_releases
    from ragtt_nb import HistoryMatrix

    pages: dict[str, tuple[Path, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        with ragtt.Project.open(folder / "proj", embedder=ragtt.HashEmbedder(), progress=False) as proj:
            proj.ingest(sample_releases()[0])
            for name, (q, v) in {"big": (args.questions, args.versions), "small": (10, 10)}.items():
                matrix = Synthetic(q, v)
                started = time.perf_counter()
                widget = HistoryMatrix(matrix, proj=proj)  # type: ignore[arg-type]
                build_s = time.perf_counter() - started
                html = report_page(widget, folder / f"{name}.html")
                widget.close()  # embed_data embeds every live widget: one per page
                pages[name] = (html, build_s)
        paints = {name: first_paint(html, args.rounds) for name, (html, _) in pages.items()}
        page_mb = pages["big"][0].stat().st_size / 1e6
    paint = statistics.median(p for p, _ in paints["big"])
    view = statistics.median(v for _, v in paints["big"])
    small = statistics.median(p for p, _ in paints["small"])
    print(
        f"history matrix: {args.questions:,} questions x {args.versions:,} versions, {len(METRICS)} metrics "
        f"(HistoryMatrix() {pages['big'][1]:.2f} s; page {page_mb:.1f} MB)"
    )
    print(
        f"  first paint (navigation -> painted, median of {args.rounds}): {paint:.3f} s "
        f"[target < {PAINT_TARGET_S} s]; of which the widget view: {view:.3f} s"
    )
    print(f"  a 10 x 10 matrix's page in the same run: {small:.3f} s ({paint / small:.2f}x)")
    return 0 if paint < PAINT_TARGET_S or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
