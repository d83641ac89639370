"""The one SQLite connection helper: opening a file another process is setting up."""

from __future__ import annotations

import threading
from pathlib import Path

from ragtt._sqlite import connect, driver


def test_opening_waits_for_a_process_that_holds_the_write_lock_on_a_new_file(tmp_path: Path) -> None:
    # The race CI hit with two processes creating one store: the first holds the write lock
    # of a file still in rollback mode; the second's switch to WAL is refused at once, with
    # no busy handler, unless the helper waits and retries.
    path = tmp_path / "new.db"
    first = driver().connect(str(path), isolation_level=None, check_same_thread=False)
    first.execute("CREATE TABLE t (x)")
    first.execute("BEGIN IMMEDIATE")
    first.execute("INSERT INTO t VALUES (1)")
    commit = threading.Timer(0.3, lambda: first.execute("COMMIT"))
    commit.start()
    try:
        conn = connect(path)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT x FROM t").fetchall() == [(1,)]
        conn.close()
    finally:
        commit.join()
        first.close()
