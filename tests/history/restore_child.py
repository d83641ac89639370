"""Restore a backup and die by SIGKILL at one point of it (what a crash or an OOM kill does).

    python -m tests.history.restore_child BACKUP DEST EVENTS_URI INDEX_URI POINT

EVENTS_URI and INDEX_URI ``-``: into DEST/events.db and DEST/lancedb. POINT: ``files:N`` right
after the N-th index file is written (the log not yet copied), or
``logged`` right after the log's one transaction committed (the marker not yet written).
The object store's credentials come from the ``AWS_*`` environment.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import ragtt
import ragtt.restore
from ragtt.index.files import TableFiles


def main(backup: str, dest: str, events_uri: str, index_uri: str, point: str) -> None:
    if point.startswith("files:"):
        kill_after, written = int(point.split(":")[1]), [0]
        put = TableFiles.put

        def put_then_die(self: TableFiles, name: str, blocks: Any) -> None:
            put(self, name, blocks)
            written[0] += 1
            if written[0] == kill_after:
                os.kill(os.getpid(), signal.SIGKILL)

        TableFiles.put = put_then_die  # type: ignore[method-assign]
    elif point == "logged":
        copy = ragtt.restore._copy_log

        def copy_then_die(*args: Any) -> int:
            copy(*args)
            os.kill(os.getpid(), signal.SIGKILL)
            return 0

        ragtt.restore._copy_log = copy_then_die  # type: ignore[assignment]
    with ragtt.Project.open(backup, embedder=ragtt.HashEmbedder(), progress=False, create=False) as proj:
        proj.restore(
            dest,
            to_events_uri=None if events_uri == "-" else events_uri,
            to_index_uri=None if index_uri == "-" else index_uri,
        )
    sys.exit(3)  # never reached: the kill point was missed


if __name__ == "__main__":
    main(*sys.argv[1:6])
