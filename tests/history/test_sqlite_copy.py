"""``copy_database`` opens its source by a ``file:`` URI: a folder named with ``?``, ``#`` or
``%`` (all legal in paths) is still the folder it names."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ragtt._sqlite import copy_database


def test_sqlite_copy_of_a_path_with_uri_characters(tmp_path: Path) -> None:
    folder = tmp_path / "runs?mode=rw#2 50%25"
    folder.mkdir()
    with sqlite3.connect(folder / "events.db") as conn:
        conn.execute("create table t (x)")
        conn.execute("insert into t values (42)")
    conn.close()
    copy_database(folder / "events.db", tmp_path / "copy.db")
    with sqlite3.connect(tmp_path / "copy.db") as copy:
        assert copy.execute("select x from t").fetchall() == [(42,)]
    copy.close()
