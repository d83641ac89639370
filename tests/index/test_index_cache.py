"""The index cache (ragtt/index/cache.py): a version of an index on S3 (moto on loopback) read
from the local mirror of its files answers exactly what the store answers, at every version;
a damaged or partial file in the mirror is never read; the cache stays within its bound; a
deleted cache folder is made again."""

from __future__ import annotations

import functools
import gc
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragtt
from ragtt.index.cache import IndexCache
from ragtt.index.retrieve import RetrievalPlan, retrieve
from ragtt.index.table import ChunkTable
from tests.backends import BUCKET

QUERIES = ["cats and dogs", "document seven", "birds over the sea", "second edition"]


def _docs(n: int, words: str, start: int = 0) -> dict[str, str]:
    return {f"d{i}": f"{words} number {i} of the corpus, document {i} about item {i % 7}" for i in range(start, n)}


@pytest.fixture(scope="module")
def history(s3: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """A table on S3 with appends, replacements (deletion files), a removal, compaction (the
    full-text index's files) and an ANN index (IVF-PQ files); yields (index URI, latest)."""
    uri = f"s3://{BUCKET}/cache-" + os.urandom(4).hex()
    config = ragtt.PipelineConfig(ann_min_rows=256)
    path = tmp_path_factory.mktemp("cache") / "p"
    with ragtt.Project.open(
        path, config, ragtt.HashEmbedder(), progress=False, index_uri=uri, storage_options=s3, index_cache=False
    ) as proj:
        proj.ingest_texts(_docs(30, "cats and dogs"))
        proj.ingest_texts(_docs(40, "birds over the sea", start=20))  # 10 replaced: a deletion file
        proj.ingest_texts(_docs(300, "second edition", start=40))  # past ann_min_rows: the ANN index
        proj.remove("d3")
        proj.optimize()
        proj.ingest_texts(_docs(310, "late additions", start=300))
        yield uri, proj.version


@pytest.fixture(scope="module")
def stored(history: tuple[str, int], s3: dict[str, str]) -> Callable[[int], list[Any]]:
    """What the store itself answers at a version of ``history`` (``_answers`` with no cache),
    read once per version for the module: the versions never change, and reading one over S3
    takes up to a second."""
    return functools.cache(functools.partial(_answers, _table(history[0], s3, None)))


def _table(uri: str, s3: dict[str, str], cache: IndexCache | None) -> ChunkTable:
    return ChunkTable(uri, "chunks", storage_options=s3, cache=cache)


def _answers(table: ChunkTable, version: int) -> list[Any]:
    """Everything a replay at ``version`` can read: the rows, and each mode's hits with scores."""
    rows = table.scan(version, ["chunk_id", "source", "text", "content_hash"]).sort_by("chunk_id").to_pylist()
    out: list[Any] = [rows]
    if not rows:
        return out
    dim = table.vector_dim(version)
    rng = np.random.default_rng(version)
    for mode in ("vector", "bm25", "hybrid"):
        plan = RetrievalPlan(
            mode, 5, 0, 0.5, "none", "", "hash", dim, "chunks", vector_index="auto", nprobes=4, refine_factor=2
        )
        plan = plan.searching(table.vector_index(version))
        for query in QUERIES:
            vector = rng.standard_normal(dim).astype(np.float32)
            hits = retrieve(table.view(version), plan, query, vector)
            out.append([(mode, h.chunk_id, round(h.score, 6), h.row["text"]) for h in hits])
    return out


def _mirror_files(root: Path) -> list[Path]:
    return [p for p in root.glob("*/*.lance/**/*") if p.is_file()]


def _cache_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in _mirror_files(root))


def test_every_version_read_through_the_cache_is_the_stores(
    history: tuple[str, int], stored: Callable[[int], list[Any]], s3: dict[str, str], tmp_path: Path
) -> None:
    uri, latest = history
    cache = IndexCache(tmp_path / "cache", 2**30)
    store, cached = _table(uri, s3, None), _table(uri, s3, cache)
    assert store.vector_index(latest) is not None  # the ANN index's files are among those read
    for version in range(1, latest + 1):
        assert _answers(cached, version) == stored(version), version
    (mirror,) = (tmp_path / "cache").glob("*/chunks.lance")
    kinds = {p.relative_to(mirror).parts[0] for p in _mirror_files(tmp_path / "cache")}
    assert kinds == {"data", "_deletions", "_indices", "_versions"}
    # a new process (a fresh cache object) on the filled folder reads the same, from the mirror
    again = _table(uri, s3, IndexCache(tmp_path / "cache", 2**30))
    assert _answers(again, latest) == stored(latest)


def test_a_replay_through_the_cache_matches_the_logged_run(s3: dict[str, str], tmp_path: Path) -> None:
    uri = f"s3://{BUCKET}/cache-replay-" + os.urandom(4).hex()
    opened = {"index_uri": uri, "storage_options": s3, "progress": False, "embedder": ragtt.HashEmbedder()}
    logged = []
    with ragtt.Project.open(tmp_path / "p", index_cache=False, **opened) as proj:
        for step in range(3):
            proj.ingest_texts(_docs(10 + 10 * step, f"release {step} cats and dogs"))
            logged += [proj.query(q, mode=m, generate=False).query_id for q in QUERIES for m in ("vector", "bm25")]
    del opened["index_uri"]
    with ragtt.Project.open(tmp_path / "p", index_cache=tmp_path / "cache", **opened) as proj:
        assert all(proj.replay(qid).matches_original for qid in logged)
    assert _mirror_files(tmp_path / "cache")  # the replays were read from the mirror


def test_a_damaged_or_partial_file_in_the_mirror_is_never_read(
    history: tuple[str, int], stored: Callable[[int], list[Any]], s3: dict[str, str], tmp_path: Path
) -> None:
    uri, latest = history
    root = tmp_path / "cache"
    expected = stored(latest)
    assert _answers(_table(uri, s3, IndexCache(root, 2**30)), latest) == expected
    data = sorted(p for p in root.glob("*/chunks.lance/data/*.lance"))
    originals = {p: p.read_bytes() for p in data}
    flipped, truncated, unsummed = data[0], data[1], data[-1]
    damaged = bytearray(originals[flipped])
    damaged[len(damaged) // 2] ^= 0xFF  # same size: only the checksum tells
    flipped.write_bytes(bytes(damaged))
    truncated.write_bytes(originals[truncated][: len(originals[truncated]) // 2])
    next(root.glob(f"*/.ragtt/sums/chunks/data/{unsummed.name}")).unlink()  # a file whose checksum never landed
    leftover = next(root.glob("*/.ragtt/tmp"))
    (leftover / "123-1-abc.part").write_bytes(b"half a download")  # what a killed download leaves
    fresh = IndexCache(root, 2**30)  # a new process: nothing verified yet
    assert _answers(_table(uri, s3, fresh), latest) == expected
    for path, content in originals.items():
        assert path.read_bytes() == content  # each damaged copy was downloaded again


def test_the_cache_stays_within_its_bound(
    history: tuple[str, int], stored: Callable[[int], list[Any]], s3: dict[str, str], tmp_path: Path
) -> None:
    uri, latest = history
    root = tmp_path / "cache"
    # the largest one version needs, from a cache with room for all
    sizes = []
    for version in range(1, latest + 1):
        alone = tmp_path / f"alone-{version}"
        _table(uri, s3, IndexCache(alone, 2**30)).view(version)
        sizes.append(_cache_bytes(alone))
        shutil.rmtree(alone)
    bound = int(max(sizes) * 1.3)
    assert bound < sum(sizes)  # the whole history does not fit
    # Each collection below need only look at what this test made, not at the whole suite's
    # objects (late in a full run, 24 full collections took half this test's 30 s).
    gc.freeze()
    try:
        for version in list(range(1, latest + 1)) * 2:  # each opened by a process of its own, twice over
            table = _table(uri, s3, IndexCache(root, bound))
            assert _answers(table, version) == stored(version)
            del table
            gc.collect()  # that "process" has let go of its datasets (their holds go with them)
            assert _cache_bytes(root) <= bound
    finally:
        gc.unfreeze()


def test_files_a_process_still_reads_are_not_evicted(
    history: tuple[str, int], stored: Callable[[int], list[Any]], s3: dict[str, str], tmp_path: Path
) -> None:
    uri, latest = history
    root = tmp_path / "cache"
    cache = IndexCache(root, 1)  # every file over the bound
    table = _table(uri, s3, cache)
    held = [table.view(v) for v in (latest - 1, latest)]
    expected = stored(latest - 1)
    assert _answers(table, latest - 1) == expected  # its files were kept while another was filled
    del held, table
    gc.collect()
    _table(uri, s3, cache).view(1)  # once nothing reads them, the next fill evicts them
    (mirror,) = root.glob("*/chunks.lance")
    (record,) = root.glob("*/.ragtt/versions/chunks/1.json")
    assert {p.relative_to(mirror).as_posix() for p in _mirror_files(root)} == set(json.loads(record.read_text()))


_READER = """
import json, sys
from ragtt.index.cache import IndexCache
from ragtt.index.table import ChunkTable
uri, s3, root, version = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], int(sys.argv[4])
table = ChunkTable(uri, "chunks", storage_options=s3, cache=IndexCache(__import__("pathlib").Path(root), 1))
view = table.view(version)  # held open until this process ends
print(len(view.dataset.to_table(columns=["chunk_id"])), flush=True)
sys.stdin.read()
"""


def test_files_another_process_still_reads_are_not_evicted(
    history: tuple[str, int], s3: dict[str, str], tmp_path: Path
) -> None:
    uri, latest = history
    root = tmp_path / "cache"

    def reader_of(version: int) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-c", _READER, uri, json.dumps(s3), str(root), str(version)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        )

    done = reader_of(1)  # one that reads and exits cleanly: its (empty) lock file stays behind
    assert done.communicate(timeout=120)[0].strip() and done.returncode == 0
    reader = reader_of(latest - 1)
    try:
        assert reader.stdout is not None and int(reader.stdout.readline())  # it holds latest - 1
        (record,) = root.glob(f"*/.ragtt/versions/chunks/{latest - 1}.json")
        mirror = record.parents[3] / "chunks.lance"
        theirs = set(json.loads(record.read_text()))
        cache = IndexCache(root, 1)  # every file over the bound
        _table(uri, s3, cache).view(1)  # a fill here evicts all it can
        kept = {p.relative_to(mirror).as_posix() for p in _mirror_files(root)}
        assert theirs <= kept  # the other process's version is whole
        gc.collect()
    finally:
        reader.send_signal(signal.SIGKILL)  # it dies without a word: its lock goes with it
        reader.wait(timeout=60)
    gc.collect()
    _table(uri, s3, IndexCache(root, 1)).view(2)  # the next fill no longer spares them
    spared = set()  # versions 1 and 2: this process may still hold them
    for record in root.glob("*/.ragtt/versions/chunks/[12].json"):
        spared |= set(json.loads(record.read_text()))
    left = {p.relative_to(mirror).as_posix() for p in _mirror_files(root)}
    assert theirs - spared and not (theirs - spared) & left
    assert not [p for p in (root / ".holds").iterdir() if not p.name.startswith(f"{os.getpid()}-")]  # its files too


def test_a_deleted_cache_folder_is_made_again(
    history: tuple[str, int], stored: Callable[[int], list[Any]], s3: dict[str, str], tmp_path: Path
) -> None:
    uri, latest = history
    root = tmp_path / "cache"
    cache = IndexCache(root, 2**30)
    expected = stored(latest)
    assert _answers(_table(uri, s3, cache), latest) == expected
    shutil.rmtree(root)
    assert _answers(_table(uri, s3, cache), latest) == expected  # the same cache object, its folder gone
    assert _mirror_files(root)


def test_threads_filling_one_cache_at_once_read_the_same(
    history: tuple[str, int], stored: Callable[[int], list[Any]], s3: dict[str, str], tmp_path: Path
) -> None:
    uri, latest = history
    expected = stored(latest)
    results: list[Any] = []
    errors: list[BaseException] = []

    def read() -> None:
        try:  # a cache object each: as separate processes, they race for the same files
            results.append(_answers(_table(uri, s3, IndexCache(tmp_path / "cache", 2**30)), latest))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == [expected] * 4
    assert not list((tmp_path / "cache").glob("*/.ragtt/tmp/*.part"))


def test_a_version_pruned_from_the_store_is_gone_though_the_cache_has_it(s3: dict[str, str], tmp_path: Path) -> None:
    uri = f"s3://{BUCKET}/cache-prune-" + os.urandom(4).hex()
    with ragtt.Project.open(
        tmp_path / "p", embedder=ragtt.HashEmbedder(), progress=False, index_uri=uri, storage_options=s3
    ) as proj:
        proj.ingest_texts(_docs(10, "first"))
        old = proj.version
        proj.ingest_texts(_docs(20, "second"))
    cache = IndexCache(tmp_path / "cache", 2**30)
    table = _table(uri, s3, cache)
    table.view(old)
    table.forget([old], [])
    with pytest.raises(ragtt.NotFoundError):
        _table(uri, s3, cache).view(old)


def test_a_local_index_has_no_cache_and_the_setting_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with ragtt.Project.open(
        tmp_path / "p", embedder=ragtt.HashEmbedder(), progress=False, index_cache=tmp_path / "cache"
    ) as proj:
        proj.ingest_texts(_docs(5, "local"))
        proj.query("local", generate=False)
    assert not (tmp_path / "cache").exists()
    monkeypatch.setenv("RAGTT_INDEX_CACHE", "off")
    assert IndexCache.choose(None, None) is None
    monkeypatch.setenv("RAGTT_INDEX_CACHE", str(tmp_path / "env"))
    monkeypatch.setenv("RAGTT_INDEX_CACHE_BYTES", "1000")
    chosen = IndexCache.choose(None, None)
    assert chosen is not None and chosen.root == (tmp_path / "env").resolve() and chosen.max_bytes == 1000
    assert IndexCache.choose(False, None) is None
    monkeypatch.setenv("RAGTT_INDEX_CACHE_BYTES", "lots")
    with pytest.raises(ragtt.ConfigError, match="RAGTT_INDEX_CACHE_BYTES"):
        IndexCache.choose(None, None)
    with pytest.raises(ragtt.ConfigError, match="index_cache_bytes"):
        IndexCache.choose(tmp_path, 0)


def test_a_cache_that_cannot_be_written_reads_the_store(
    history: tuple[str, int], stored: Callable[[int], list[Any]], s3: dict[str, str], tmp_path: Path
) -> None:
    uri, latest = history
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be")
    table = _table(uri, s3, IndexCache(blocked, 2**30))
    with pytest.warns(UserWarning, match="not usable, reading from the store"):
        answers = _answers(table, latest)
    assert answers == stored(latest)
