"""PDF ingest speed: parse + route + chunk + regions vs bare ``page.get_text("dict")``.

Over the corpus files whose every page is expected on the text layer (the pages that
never need OCR), both sides run side by side, alternating, from the same bytes in
memory. The issue's bar: ragtt's page rate is at least 0.5x the bare one.

    .venv/bin/python bench/bench_pdf.py [--rounds 5] [--check]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pymupdf

from ragtt.ingest import build_chunks
from ragtt.ingest.pdf import load_pdf
from ragtt.ingest.types import IngestOptions

PDFS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "pdfs"
TARGET = 0.5


def text_files() -> dict[str, bytes]:
    if not PDFS.is_dir():
        sys.exit(f"PDF corpus not found: expected {PDFS} (../shared/corpora/pdfs beside the repo)")
    expected = json.loads((PDFS / "expectations.json").read_text(encoding="utf-8"))
    return {
        name: (PDFS / name).read_bytes()
        for name, spec in sorted(expected.items())
        if spec.get("route") and set(spec["route"].values()) == {"text"}
    }


def bare(data: bytes, flags: int | None = None) -> int:
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        for page in doc:
            page.get_text("dict", flags=flags)
        return int(doc.page_count)


def bare_no_images(data: bytes) -> int:
    """The stricter yardstick: bare "dict" decodes embedded images, which ragtt skips."""
    return bare(data, pymupdf.TEXTFLAGS_DICT & ~pymupdf.TEXT_PRESERVE_IMAGES)


def ragtt_pipeline(data: bytes, name: str) -> int:
    # engines=() so a mis-routed page would show up as a warning, never as OCR time.
    parsed = load_pdf(data, name, IngestOptions(engines=()))
    assert not parsed.warnings, parsed.warnings
    chunks = build_chunks(parsed.markdown, parsed.blocks)
    assert all(chunk.regions for chunk in chunks)
    return len(parsed.routes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--check", action="store_true", help=f"exit 1 when the ratio is under {TARGET}")
    args = parser.parse_args()
    files = text_files()
    sides: dict[str, Callable[[bytes, str], int]] = {
        "bare": lambda data, _name: bare(data),
        "no-img": lambda data, _name: bare_no_images(data),
        "ragtt": ragtt_pipeline,
    }
    times: dict[str, dict[str, list[float]]] = {name: {side: [] for side in sides} for name in files}
    pages = {name: ragtt_pipeline(data, name) for name, data in files.items()}  # warm-up, page counts
    for _ in range(args.rounds):
        for name, data in files.items():
            for side, run in sides.items():
                start = time.perf_counter()
                run(data, name)
                times[name][side].append(time.perf_counter() - start)

    print(f"{'file':46} {'pages':>5} {'bare p/s':>9} {'no-img p/s':>10} {'ragtt p/s':>9} {'ratio':>6} {'vs no-img':>9}")
    total = dict.fromkeys(sides, 0.0)
    for name in files:
        median = {side: statistics.median(times[name][side]) for side in sides}
        for side in sides:
            total[side] += median[side]
        _row(name[:46], pages[name], median)
    _row("ALL (median per file, summed)", sum(pages.values()), total)
    ratio = total["bare"] / total["ragtt"]
    print(f"target: ragtt >= {TARGET}x bare page rate -> {ratio:.2f}x, {'met' if ratio >= TARGET else 'NOT MET'}")
    return 1 if args.check and ratio < TARGET else 0


def _row(label: str, pages: int, seconds: dict[str, float]) -> None:
    rate = {side: pages / value for side, value in seconds.items()}
    print(
        f"{label:46} {pages:5d} {rate['bare']:9.0f} {rate['no-img']:10.0f} {rate['ragtt']:9.0f} "
        f"{rate['ragtt'] / rate['bare']:6.2f} {rate['ragtt'] / rate['no-img']:9.2f}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
