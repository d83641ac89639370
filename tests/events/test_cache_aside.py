"""A damaged embedding cache is moved aside only when no other connection has it open.

Renaming SQLite files under a live connection would let that connection, when it closes,
delete the new cache's ``-wal`` by name; so while another connection (in this process or
another) holds the damaged file, it stays in place and this one goes on without a cache.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from ragtt.events.cache import SQLiteVectors
from ragtt.events.cache_aside import file_identity

REPO = Path(__file__).resolve().parents[2]
HOLDER = """
import sys
from ragtt.events.cache import SQLiteVectors
cache = SQLiteVectors(sys.argv[1])
cache.store("m", 2, [("held", b"12345678")])
print("open", flush=True)
sys.stdin.readline()  # hold it open until told
cache.lookup("m", ["held", "k1"])  # it finds the damage too: no crash, no move while the other holds it
cache.close()
"""


def _rows(n: int) -> list[tuple[str, bytes]]:
    return [(f"k{i}", np.full(4, i, np.float32).tobytes()) for i in range(n)]


def _damage(db: Path) -> None:
    """Garbage over the second page of ``db`` (the table's root)."""
    from ragtt._sqlite import connect

    conn = connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(db.read_bytes())
    data[4096 : 2 * 4096] = b"\xff" * 4096
    db.write_bytes(bytes(data))


def test_a_second_connection_keeps_the_damaged_file_in_place(tmp_path: Path) -> None:
    db = tmp_path / "embeddings.db"
    first = SQLiteVectors(db)
    first.store("m", 4, _rows(300))
    second = SQLiteVectors(db)
    try:
        _damage(db)
        damaged = file_identity(db)
        with pytest.warns(RuntimeWarning, match="another connection has it open"):
            assert first.lookup("m", ["k1"]) == {}
        assert file_identity(db) == damaged and not (tmp_path / "embeddings.db.damaged").exists()
        first.store("m", 4, _rows(3))  # without a cache: nothing is written, nothing raises
        assert first.lookup("m", ["k1"]) == {}
        second.close()  # the last other holder lets go: the next one to find it damaged moves it
        with pytest.warns(RuntimeWarning, match="moved aside"):
            third = SQLiteVectors(db)
            third.lookup("m", ["k1"])
        third.store("m", 4, _rows(2))
        assert sorted(third.lookup("m", ["k0", "k1"])) == ["k0", "k1"]
        assert (tmp_path / "embeddings.db.damaged").exists() and file_identity(db) != damaged
        third.close()
    finally:
        first.close()
        second.close()


def test_another_process_holding_the_cache_keeps_the_file_in_place_until_it_closes(tmp_path: Path) -> None:
    db = tmp_path / "embeddings.db"
    seed = SQLiteVectors(db)
    seed.store("m", 4, _rows(300))
    seed.close()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db)],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "open"
        _damage(db)
        mine = SQLiteVectors(db)
        with pytest.warns(RuntimeWarning, match="another connection has it open"):
            assert mine.lookup("m", ["k1"]) == {}
        assert not (tmp_path / "embeddings.db.damaged").exists()
        holder.stdin.write("go\n")
        holder.stdin.flush()
        _, err = holder.communicate(timeout=60)
        assert holder.returncode == 0, err
        # this process went on without the cache and let go of the file, so the holder, finding
        # the damage in turn, was the last to have it open and moved it aside
        assert "moved aside" in err and (tmp_path / "embeddings.db.damaged").exists()
        mine.close()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new cache is whole: no warning
        again = SQLiteVectors(db)
        again.store("m", 4, _rows(1))
        assert list(again.lookup("m", ["k0"])) == ["k0"]
        again.close()
