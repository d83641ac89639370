"""Hashing a local table's files: the few files a write adds are hashed on the calling thread
(a pool's threads each wait to be scheduled, which on a busy machine cost an ingest more than
the hashing), many files on a few threads, each record in the order asked for."""

from __future__ import annotations

import concurrent.futures
import hashlib
from pathlib import Path

import pytest

from ragtt.index.files import FileRecord, TableFiles


def _files(folder: Path, count: int) -> list[str]:
    (folder / "data").mkdir()
    names = []
    for i in range(count):
        name = f"data/{i:04d}.lance"
        (folder / name).write_bytes(f"rows of file {i}\n".encode() * (i + 1))
        names.append(name)
    return names


def _expected(folder: Path, name: str) -> FileRecord:
    data = (folder / name).read_bytes()
    return FileRecord(name, len(data), hashlib.sha256(data).hexdigest())


def test_the_few_files_of_a_write_are_hashed_without_threads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    names = _files(tmp_path, 5)

    def no_pool(*args: object, **kwargs: object) -> None:
        raise AssertionError("a pool was started for five small local files")

    monkeypatch.setattr(concurrent.futures, "ThreadPoolExecutor", no_pool)
    got = TableFiles(str(tmp_path)).digests([*names, "data/gone.lance"])
    assert got == [*(_expected(tmp_path, n) for n in names), None]


def test_many_files_are_hashed_on_threads_in_the_order_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    names = _files(tmp_path, 70)
    started = []
    pool = concurrent.futures.ThreadPoolExecutor

    def counted(workers: int) -> concurrent.futures.ThreadPoolExecutor:
        started.append(workers)
        return pool(workers)

    monkeypatch.setattr(concurrent.futures, "ThreadPoolExecutor", counted)
    wanted = list(reversed(names))
    assert TableFiles(str(tmp_path)).digests(wanted) == [_expected(tmp_path, n) for n in wanted]
    assert started and started[0] > 1
