"""Every write path, killed (SIGKILL) right after each of its store boundaries returns:
each LanceDB write, each committed log transaction, each embedding-cache write. After each
kill the project reopens and every invariant of the crash protocol holds, with the log in
SQLite, in Postgres, and in Postgres with the index in an S3 bucket (moto on loopback; each
copy of the base project gets the base's objects under a prefix of its own; there, the
boundaries next to an index write)."""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.backends import backend_for, copy_project
from tests.history import crash_child
from tests.history.scenarios import SCENARIOS, build_base, open_project, state

REPO = Path(__file__).resolve().parents[2]
KILLS: dict[tuple[str, str], int] = {}


@pytest.fixture(scope="module", params=["sqlite", "postgres", "postgres+s3"])
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    with backend_for(request) as name:
        yield name


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Path:
    root = tmp_path_factory.mktemp("crash-base")
    build_base(root)
    return root


def _copy(base: Path, dest: Path) -> Path:
    return copy_project(base, dest)


# The children are forked from one server process that has imported ragtt, LanceDB and the
# scenarios (tests/history/crash_child.py): each is still a process of its own, killed as
# before, without the 2 s of imports a fresh interpreter spent before its first write.
_FORKS = multiprocessing.get_context("forkserver")
_FORKS.set_forkserver_preload(["tests.history.crash_child"])


# Two threads start and reap these children. A forkserver child's exit status is eight bytes
# on a pipe, and every Process.start() also polls the children started before it
# (multiprocessing.process._cleanup): when that poll and the owner's join read the same dead
# child's pipe at once, the loser reads EOF and records 255, overwriting the -9 the winner
# read (CPython gh-130895; twice in one CI run here). Starting and reaping under one
# lock, and waiting for the death outside it, leaves one reader per status.
_REAPING = threading.Lock()


def _child(scenario: str, root: Path, mode: str) -> subprocess.CompletedProcess[str]:
    output = f"{root}-{mode}"
    env = {**os.environ, "RUST_LOG": "error", "PYTHONPATH": str(REPO)}
    child = _FORKS.Process(target=crash_child.run, args=(scenario, str(root), mode, env, output))
    with _REAPING:
        child.start()
    finished = bool(multiprocessing.connection.wait([child.sentinel], 300))
    with _REAPING:
        if not finished:
            child.kill()
        child.join()
    if not finished:
        pytest.fail(f"{scenario} {mode}: the child did not finish in 300 s")
    assert child.exitcode is not None  # joined
    out, err = (Path(output + suffix).read_text(errors="replace") for suffix in (".out", ".err"))
    return subprocess.CompletedProcess([scenario, str(root), mode], child.exitcode, out, err)


def check_invariants(root: Path, scenario: str, expected: dict[str, Any], where: str) -> None:
    with open_project(root / "proj") as proj:
        report = proj.verify()
        assert report.ok, f"{scenario} killed after {where}: {report.problems}"
        assert proj.resolve_version(datetime.now(UTC)) == proj.version, where
        for source in sorted(set(proj.chunks()["source"])):
            assert proj.document(source).text, (where, source)
        for event in proj.events.query(types="query.received"):
            assert proj.replay(event.query_id).matches_original, (where, event.payload["text"])
        SCENARIOS[scenario](proj, root)  # the interrupted call, run again, succeeds
        assert state(proj) == expected, f"{scenario} killed after {where}: state differs from an uninterrupted run"
        assert proj.verify().ok


def _around_the_index(boundaries: list[str]) -> list[int]:
    """The kill points next to an index write: after each one, and after the log commit just
    before it (the intent is logged, the table not yet written). The others are the Postgres
    run's: the same log and cache boundaries with no index write on either side."""
    index = [not name.startswith(("EventStore.", "EmbeddingCache.")) for name in boundaries]
    return [n for n in range(1, len(boundaries) + 1) if index[n - 1] or (n < len(boundaries) and index[n])]


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_a_kill_at_every_boundary_leaves_a_consistent_project(
    scenario: str, base: Path, tmp_path: Path, backend: str
) -> None:
    ref = _copy(base, tmp_path / "ref")
    with open_project(ref / "proj") as proj:
        SCENARIOS[scenario](proj, ref)
        expected = state(proj)
    traced = _child(scenario, _copy(base, tmp_path / "trace"), "trace")
    assert traced.returncode == 0, traced.stderr
    boundaries = traced.stdout.split()
    assert boundaries, f"{scenario} crossed no store boundary"

    def kill(n: int) -> tuple[int, Path, subprocess.CompletedProcess[str]]:
        root = _copy(base, tmp_path / f"kill-{n}")
        return n, root, _child(scenario, root, str(n))

    points = list(range(1, len(boundaries) + 1))
    if backend.endswith("+s3"):  # kill where the index on S3 is in play, keep the module's cost bounded
        points = _around_the_index(boundaries)
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = list(pool.map(kill, points))
    for n, root, done in runs:
        where = f"#{n} {boundaries[n - 1]}"
        assert done.returncode == -signal.SIGKILL, f"{scenario}: the child was to die after {where}: {done.stderr}"
        check_invariants(root, scenario, expected, where)
    KILLS[backend, scenario] = len(runs)


def test_the_suite_kills_at_least_sixty_times(backend: str) -> None:
    ran = sorted(s for b, s in KILLS if b == backend)
    if len(ran) < len(SCENARIOS):
        pytest.fail(f"run the whole module: only {ran} of the scenarios ran on {backend}")
    assert sum(n for (b, _), n in KILLS.items() if b == backend) >= (30 if backend.endswith("+s3") else 60), KILLS
