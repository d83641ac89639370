"""Issue 31: what proving the index's bytes costs.

    python bench/bench_verify.py            # 1,000-document ingest; 1,000 versions
    python bench/bench_verify.py --quick    # 200 documents; 100 versions

Rows, each a ratio measured side by side in one run:

- an ingest of N documents with the file hashes recorded, against the same ingest with the
  recording switched off (``ChunkTable.added_files`` answering nothing), best of 3 on fresh
  projects each; target at most 1.10x;
- ``verify()`` on a project of V versions (one ingest each), against verify() without the
  checks this issue added (the index files and SQLite's quick_check), best of 7; target
  at most 2x;
- ``verify(deep=True)`` on that project, against reading every file its retained versions
  read once (no hashing, no checks), best of 7; target at most 1.5x. Both verify rows also
  give the spread of the rounds' own ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("RUST_LOG", "error")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ragtt  # noqa: E402
from ragtt import verify as verify_module  # noqa: E402
from ragtt.index.table import ChunkTable, tracked_paths  # noqa: E402

INGEST_TARGET = 1.10
VERIFY_TARGET = 2.0
DEEP_TARGET = 1.5
ROUNDS = 3
VERIFY_ROUNDS = 7  # verify's sides are cheap: more rounds, so the best of them is the machine at rest


def _texts(n: int, salt: str) -> dict[str, str]:
    para = "The {i}th note on topic {t} says the service at dock {d} ships item {j} before noon. "
    return {
        f"doc-{i:05d}.md": f"# Note {i} {salt}\n\n" + para.format(i=i, t=i % 17, d=i % 9, j=i * 7) * 12
        for i in range(n)
    }


@contextlib.contextmanager
def _patched(owner: Any, name: str, value: Any) -> Iterator[None]:
    before = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, before)


def _best(fn: Callable[[], Any], rounds: int = ROUNDS) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def ingest_overhead(root: Path, documents: int) -> tuple[float, float]:
    """(seconds with the hashes recorded, seconds without), best of ROUNDS each, interleaved."""
    timings: dict[bool, list[float]] = {True: [], False: []}
    for round_ in range(ROUNDS):
        for recording in (False, True):
            path = root / f"ingest-{round_}-{recording}"
            with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
                texts = _texts(documents, f"{round_}{recording}")
                proj.query_vector("warm")  # the embedder and the cache opened before the clock
                with contextlib.ExitStack() as stack:
                    if not recording:
                        stack.enter_context(_patched(ChunkTable, "added_files", lambda self, base, versions: []))
                    t0 = time.perf_counter()
                    proj.ingest_texts(texts)
                    timings[recording].append(time.perf_counter() - t0)
    return min(timings[True]), min(timings[False])


def build_versions(path: Path, versions: int) -> None:
    with ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False) as proj:
        for v in range(versions):
            text = f"# Part {v % 20}\n\nRevision {v} of part {v % 20}: item {v * 7} ships from dock {v % 9}.\n"
            proj.ingest_texts({f"part-{v % 20:02d}.md": text * 3})
            if v % 10 == 0:
                proj.query(f"item {v * 7}", generate=False, mode="bm25")


def _read_every_file(proj: ragtt.Project) -> int:
    """What deep verify cannot do without: read each retained version's manifest (through
    Lance, as deep verify does, to know which files the versions read) and each of those files
    once, with plain reads and nothing checked."""
    table = ChunkTable(proj.path / "lancedb", "chunks")
    total = 0
    for name in tracked_paths(table.tracked_table()):
        with open(proj.path / "lancedb" / "chunks.lance" / name, "rb") as fh:
            while block := fh.read(1 << 20):
                total += len(block)
    return total


def verify_costs(path: Path) -> dict[str, list[float]]:
    """Seconds of each round of: verify, verify without this issue's checks, verify deep,
    reading every file once; the four sides alternate within a round, so a busy machine slows
    them alike."""
    with ragtt.Project.open(path, progress=False) as proj:
        assert proj.verify(deep=True).ok
        sides: dict[str, list[float]] = {"now": [], "before": [], "deep": [], "read": []}
        for _ in range(VERIFY_ROUNDS):
            sides["now"].append(_best(proj.verify, 1))
            with (
                _patched(verify_module, "_check_files", lambda ctx, deep, problems: (0, 0)),
                _patched(verify_module, "_check_sqlite_files", lambda ctx, deep, problems: None),
            ):
                sides["before"].append(_best(proj.verify, 1))
            sides["deep"].append(_best(lambda: proj.verify(deep=True), 1))
            sides["read"].append(_best(lambda: _read_every_file(proj), 1))
    return sides


def _spread(a: list[float], b: list[float]) -> str:
    """The range of the rounds' own ratios: how much the machine moved under the best-of figure."""
    ratios = sorted(x / y for x, y in zip(a, b, strict=True))
    return f"rounds {ratios[0]:.2f}-{ratios[-1]:.2f}x, median {ratios[len(ratios) // 2]:.2f}x"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="200 documents, 100 versions")
    ap.add_argument("--documents", type=int, default=None)
    ap.add_argument("--versions", type=int, default=None)
    args = ap.parse_args(argv)
    documents = args.documents or (200 if args.quick else 1000)
    versions = args.versions or (100 if args.quick else 1000)
    with tempfile.TemporaryDirectory(prefix="ragtt-bench-verify-") as tmp:
        root = Path(tmp)
        with_hashes, without = ingest_overhead(root, documents)
        build_versions(root / "versions", versions)
        sides = verify_costs(root / "versions")
    now, before, deep, read = (min(sides[k]) for k in ("now", "before", "deep", "read"))
    rows = [
        (f"ingest {documents} docs, hashes recorded", with_hashes / without, INGEST_TARGET, with_hashes, without, ""),
        (
            f"verify() at {versions} versions vs before",
            now / before,
            VERIFY_TARGET,
            now,
            before,
            _spread(sides["now"], sides["before"]),
        ),
        (
            "verify(deep=True) vs reading every file",
            deep / read,
            DEEP_TARGET,
            deep,
            read,
            _spread(sides["deep"], sides["read"]),
        ),
    ]
    print(
        f"verify bench: {documents} documents, {versions} versions "
        f"(ingest best of {ROUNDS}, verify best of {VERIFY_ROUNDS})"
    )
    for name, ratio, target, a, b, spread in rows:
        verdict = "PASS" if ratio <= target else "FAIL"
        print(f"  {name:<44} {ratio:5.2f}x ({a:.3f} s vs {b:.3f} s)  target <= {target:.2f}x  {verdict}  {spread}")
    return 0 if all(r[1] <= r[2] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
