"""Run one write path and die by SIGKILL right after its N-th store boundary returns.

    python -m tests.history.crash_child SCENARIO ROOT N      (N = 0: before the first boundary)
    python -m tests.history.crash_child SCENARIO ROOT trace  (list the boundaries, no kill)
    python -m tests.history.crash_child SCENARIO ROOT pause:N (after the N-th boundary, wait for
                                                              ROOT/go, then carry on)

Boundaries are every Lance write (LanceDB's add, delete, merge_insert, create_index, optimize,
tag create and delete; pylance's create_index and version cleanup), every committed event-log
transaction, and every embedding-cache write.

``run`` is the same in a process forked from a server that has imported this module
(tests/history/test_crash.py starts a hundred and more children a module: importing ragtt and
LanceDB afresh took about 2 s of each one's 2.5 s).
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lancedb.merge
import lancedb.table
from lance.dataset import LanceDataset

from ragtt.events.cache import EmbeddingCache
from ragtt.events.postgres import PostgresEventStore
from ragtt.events.store import EventStore
from tests.history.scenarios import SCENARIOS, open_project

# A forked child of the server that imported this module (see ``run``) resets LanceDB's async
# runtime after the fork, and LanceDB warns that the runtime might have been mid-operation: in
# that server it never ran at all.
warnings.filterwarnings("ignore", "lancedb fork support is experimental", RuntimeWarning)

_seen: list[str] = []


_pause: tuple[int, Path] | None = None


def _boundary(name: str, kill_at: int | None) -> None:
    _seen.append(name)
    if kill_at is not None and len(_seen) == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
    if _pause is not None and len(_seen) == _pause[0]:
        (_pause[1] / "paused").write_text(name)
        for _ in range(1200):  # at most 60 s
            if (_pause[1] / "go").exists():
                break
            time.sleep(0.05)


def _wrap(cls: Any, method: str, kill_at: int | None) -> None:
    original = getattr(cls, method)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        _boundary(f"{cls.__name__}.{method}", kill_at)
        return result

    setattr(cls, method, wrapper)


def install(kill_at: int | None) -> None:
    for method in ("add", "delete", "create_index", "optimize"):
        _wrap(lancedb.table.LanceTable, method, kill_at)
    _wrap(lancedb.merge.LanceMergeInsertBuilder, "execute", kill_at)
    _wrap(lancedb.table.Tags, "create", kill_at)
    _wrap(lancedb.table.Tags, "delete", kill_at)
    _wrap(LanceDataset, "create_index", kill_at)  # the ANN index (ChunkTable.create_vector_index)
    _wrap(LanceDataset, "cleanup_old_versions", kill_at)
    _wrap(EmbeddingCache, "_store", kill_at)
    for store in (EventStore, PostgresEventStore):
        _wrap_commit(store, kill_at)


def _wrap_commit(store: Any, kill_at: int | None) -> None:
    """Both backends' commits are one boundary name, so the traces of the two runs match."""
    original = store.transaction

    @contextlib.contextmanager
    def transaction(self: Any) -> Iterator[Any]:
        with original(self) as conn:
            yield conn
        _boundary("EventStore.commit", kill_at)

    store.transaction = transaction


def main(scenario: str, root: Path, mode: str) -> None:
    global _pause
    if mode.startswith("pause:"):
        _pause = (int(mode.removeprefix("pause:")), root)
    kill_at = None if mode == "trace" or _pause else int(mode)
    proj = open_project(root / "proj")
    install(kill_at)
    if kill_at == 0:
        os.kill(os.getpid(), signal.SIGKILL)
    SCENARIOS[scenario](proj, root)
    proj.close()
    print("\n".join(_seen))


def run(scenario: str, root: str, mode: str, env: dict[str, str], output: str) -> None:
    """``main`` in a forked child: the caller's environment, stdout and stderr into
    ``output``.out and ``output``.err."""
    os.environ.clear()
    os.environ.update(env)
    for fd, suffix in ((1, ".out"), (2, ".err")):
        os.dup2(os.open(output + suffix, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), fd)
    main(scenario, Path(root), mode)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), sys.argv[3])
