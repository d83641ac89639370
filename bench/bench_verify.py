"""Issue 31: what proving the index's bytes costs.

    python bench/bench_verify.py            # 1,000-document ingest; 1,000 versions
    python bench/bench_verify.py --quick    # 200 documents; 100 versions

Every row is a ratio of two sides measured in the same process, interleaved round by round
with the order rotating between rounds (so neither side always runs first, after the other's
garbage, or in the machine's quieter moment); the verdict is the median of the rounds' own
ratios, printed with their range, the ratio of the sides' CPU time (all threads) beside the
wall clock's, and the load average before and after. Rows:

- an ingest of N documents with the file hashes recorded, against the same ingest with the
  recording switched off (``ChunkTable.added_files`` answering nothing): the same documents
  on both sides, each into a fresh project, after one untimed warm-up ingest (the process's
  first pays for imports and Lance's first use), collected garbage before each clock. Two
  targets say "adds at most 10%": the CPU time of the process (all threads), at most 1.10x,
  and the wall-clock time spent inside the recording, waits included, at most 10% of the
  recorded ingest's. The wall-clock ratio of the two ingests is an info row: on a shared
  machine its rounds spread far wider than the cost measured (each ingest waits on the other
  jobs for its CPU), and a handful of rounds' median cannot tell 10% from noise there;
- ``verify()`` on a project of V versions (one ingest each), against today's verify: without
  the checks this issue added (the index files and SQLite's quick_check) on a twin project
  built with the recording off, whose log has no file records, as a project before this issue;
  target at most 2x. The info row beside it is the same checks-off verify on the recorded
  project: what the checks alone add (the rest is the hash chain walking the file records);
- ``verify(deep=True)`` on that project, against reading every file its retained versions
  read once (no hashing, no checks); target at most 1.5x;
- info: one small ingest into the project of V versions, recorded against not (Lance lists
  every manifest to say which files a version added, so this grows with the history).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
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
INGEST_ROUNDS = 8  # each round one ingest per side: a few seconds at 1,000 documents
VERIFY_ROUNDS = 7
SMALL_ROUNDS = 10


@dataclass
class Sides:
    """Wall and CPU seconds of each side, one entry per round."""

    wall: dict[str, list[float]] = field(default_factory=dict)
    cpu: dict[str, list[float]] = field(default_factory=dict)

    def add(self, side: str, wall: float, cpu: float) -> None:
        self.wall.setdefault(side, []).append(wall)
        self.cpu.setdefault(side, []).append(cpu)


@dataclass(frozen=True)
class Row:
    name: str
    a: str
    b: str
    target: float | None  # None: an info row
    note: str = ""
    clock: str = "wall"  # the clock the row's ratio is taken on: "wall" or "cpu"


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


def _recording_off() -> contextlib.AbstractContextManager[None]:
    return _patched(ChunkTable, "added_files", lambda self, base, versions: [])


def _checks_off() -> contextlib.ExitStack:
    stack = contextlib.ExitStack()
    stack.enter_context(_patched(verify_module, "_check_files", lambda ctx, deep, problems: (0, 0)))
    stack.enter_context(_patched(verify_module, "_check_sqlite_files", lambda ctx, deep, problems: None))
    return stack


def _timed(fn: Callable[[], Any]) -> tuple[float, float]:
    """(wall, CPU) seconds of ``fn()``; the garbage of what ran before is collected first."""
    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def _order(sides: list[str], round_: int) -> list[str]:
    k = round_ % len(sides)
    return sides[k:] + sides[:k]


def _open(path: Path) -> ragtt.Project:
    return ragtt.Project.open(path, embedder=ragtt.HashEmbedder(), progress=False)


def ingest_overhead(root: Path, documents: int, rounds: int) -> tuple[Sides, list[float]]:
    """Each round: the same documents ingested into a fresh project with the hashes recorded
    ("on") and without ("off"); and, per "on" round, the seconds spent inside the recording."""
    sides, spent = Sides(), []
    with _open(root / "warm-up") as proj:
        proj.ingest_texts(_texts(documents, "warm-up"))
    record = ChunkTable.added_files
    for round_ in range(rounds):
        texts = _texts(documents, f"round {round_}")
        for side in _order(["off", "on"], round_):
            path = root / f"ingest-{round_}-{side}"
            inside = [0.0]

            def recording(self: ChunkTable, base: int, versions: list[int], inside: list[float] = inside) -> Any:
                t0 = time.perf_counter()
                try:
                    return record(self, base, versions)
                finally:
                    inside[0] += time.perf_counter() - t0

            with _open(path) as proj:
                proj.query_vector("warm")  # the embedder and the cache opened before the clock
                patch = _recording_off() if side == "off" else _patched(ChunkTable, "added_files", recording)
                with patch:
                    wall, cpu = _timed(lambda proj=proj, texts=texts: proj.ingest_texts(texts))
            sides.add(side, wall, cpu)
            if side == "on":
                spent.append(inside[0] / wall)
            shutil.rmtree(path)
    return sides, spent


def build_versions(path: Path, versions: int, *, recording: bool = True) -> None:
    with contextlib.ExitStack() as stack:
        if not recording:
            stack.enter_context(_recording_off())
        with _open(path) as proj:
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


def verify_costs(recorded: Path, twin: Path, rounds: int) -> Sides:
    """Each round: verify ("now"), today's verify on the twin ("before"), the checks-off verify
    on the recorded project ("unchecked"), verify deep ("deep") and reading every file once
    ("read"), in an order that rotates round by round."""
    sides = Sides()
    with ragtt.Project.open(recorded, progress=False) as proj, ragtt.Project.open(twin, progress=False) as old:
        assert proj.verify(deep=True).ok
        with _checks_off():
            assert old.verify().ok

        def unchecked(p: ragtt.Project) -> Any:
            with _checks_off():
                return p.verify()

        runs: dict[str, Callable[[], Any]] = {
            "now": proj.verify,
            "before": lambda: unchecked(old),
            "unchecked": lambda: unchecked(proj),
            "deep": lambda: proj.verify(deep=True),
            "read": lambda: _read_every_file(proj),
        }
        for round_ in range(rounds):
            for side in _order(list(runs), round_):
                sides.add(side, *_timed(runs[side]))
    return sides


def small_ingests(path: Path, rounds: int) -> Sides:
    """One small ingest into the many-version project per side and round, recorded or not."""
    sides = Sides()
    with _open(path) as proj:
        for round_ in range(rounds):
            for side in _order(["off", "on"], round_):
                text = f"# Extra {round_} {side}\n\nA late note: item {round_} ships from dock {round_ % 9}.\n"
                with _recording_off() if side == "off" else contextlib.nullcontext():
                    sides.add(side, *_timed(lambda text=text: proj.ingest_texts({"extra.md": text})))
    return sides


def _ratios(a: list[float], b: list[float]) -> list[float]:
    return sorted(x / y for x, y in zip(a, b, strict=True))


def _line(sides: Sides, row: Row) -> tuple[str, bool]:
    timed = sides.cpu if row.clock == "cpu" else sides.wall
    other, other_name = (sides.wall, "wall") if row.clock == "cpu" else (sides.cpu, "CPU")
    rounds = _ratios(timed[row.a], timed[row.b])
    ratio = statistics.median(rounds)
    beside = statistics.median(_ratios(other[row.a], other[row.b]))
    a, b = statistics.median(timed[row.a]), statistics.median(timed[row.b])
    ok = row.target is None or ratio <= row.target
    verdict = "info" if row.target is None else f"target <= {row.target:.2f}x  {'PASS' if ok else 'FAIL'}"
    note = f"; {row.note}" if row.note else ""
    return (
        f"  {row.name:<46} {ratio:5.2f}x  {verdict:<20} rounds {rounds[0]:.2f}-{rounds[-1]:.2f}x, "
        f"{other_name} {beside:.2f}x, {row.clock} medians {a:.3f} s vs {b:.3f} s{note}",
        ok,
    )


def _share_line(name: str, shares: list[float], target: float) -> tuple[str, bool]:
    ordered = sorted(shares)
    share = statistics.median(ordered)
    ok = share <= target
    verdict = f"target <= {100 * target:.0f}%  {'PASS' if ok else 'FAIL'}"
    return (
        f"  {name:<46} {100 * share:5.1f}%  {verdict:<20} rounds {100 * ordered[0]:.1f}-{100 * ordered[-1]:.1f}%",
        ok,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="200 documents, 100 versions")
    ap.add_argument("--documents", type=int, default=None)
    ap.add_argument("--versions", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=None, help=f"ingest rounds (default {INGEST_ROUNDS})")
    args = ap.parse_args(argv)
    documents = args.documents or (200 if args.quick else 1000)
    versions = args.versions or (100 if args.quick else 1000)
    rounds = args.rounds or INGEST_ROUNDS
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="ragtt-bench-verify-") as tmp:
        root = Path(tmp)
        ingest, spent = ingest_overhead(root, documents, rounds)
        build_versions(root / "versions", versions)
        build_versions(root / "twin", versions, recording=False)
        checks = verify_costs(root / "versions", root / "twin", VERIFY_ROUNDS)
        small = small_ingests(root / "versions", SMALL_ROUNDS)
    load_after = os.getloadavg()
    share = _share_line("  its recording, share of its wall time", spent, INGEST_TARGET - 1)
    lines = [
        _line(ingest, Row(f"ingest {documents} docs, hashes recorded, CPU", "on", "off", INGEST_TARGET, clock="cpu")),
        share,
        _line(ingest, Row(f"ingest {documents} docs, hashes recorded, wall", "on", "off", None)),
        _line(checks, Row(f"verify() at {versions} versions vs today's", "now", "before", VERIFY_TARGET)),
        _line(checks, Row("  of which the new checks (same project)", "now", "unchecked", None)),
        _line(checks, Row("verify(deep=True) vs reading every file", "deep", "read", DEEP_TARGET)),
        _line(small, Row(f"one small ingest at {versions} versions, recorded", "on", "off", None)),
    ]
    print(
        f"verify bench: {documents} documents ({rounds} rounds), {versions} versions ({VERIFY_ROUNDS} rounds; "
        f"small ingests {SMALL_ROUNDS}); median of the rounds' ratios; load average "
        f"{load_before[0]:.1f} before, {load_after[0]:.1f} after, CPUs {os.cpu_count()}"
    )
    for text, _ in lines:
        print(text)
    passed = all(ok for _, ok in lines)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
