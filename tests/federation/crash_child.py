"""Die by SIGKILL at one point of a federation's write path.

    python -m tests.federation.crash_child MODE ROOT

``create``: ``Federation.create(ROOT/fed)`` over ROOT/docs and ROOT/readme, killed after its log
committed and before its marker is in place. ``before-commit``: open ROOT/fed, run one query,
then die inside the next query's log transaction, its rows written but not committed.
``after-commit``: the same, dying right after that transaction committed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ragtt
import ragtt.federation.store as store


def die(*args: Any, **kwargs: Any) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def main(mode: str, root: Path) -> None:
    if mode == "create":
        store.write_atomic = die  # the marker is written last
        ragtt.Federation.create(root / "fed", members={"docs": root / "docs", "readme": root / "readme"})
        return
    fed = ragtt.Federation.open(root / "fed")
    fed.query("secret key", generate=False)
    log = fed.events
    begin = log.transaction

    @contextlib.contextmanager
    def dying() -> Iterator[Any]:
        with begin() as conn:
            yield conn
            if mode == "before-commit":
                die()  # the run's rows are written, the COMMIT never runs
        die()  # committed

    log.transaction = dying  # type: ignore[method-assign]
    fed.query("install in a virtualenv", generate=True)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
