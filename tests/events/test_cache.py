"""The embedding cache on both backends: a text is embedded once per embedder, ever, and
with the log in Postgres "ever" spans machines: a query embedded on one machine is a cache
hit on another that shares only the URIs, so its replay there never re-embeds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ragtt.opening import open_cache
from tests.backends import backend_for, child_env, events_uri, index_args, s3_env
from tests.events.cache_child import CountingEmbedder

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", params=["sqlite", "postgres+s3"])
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """Postgres with the index on S3: the only setup where a second machine shares nothing local."""
    with backend_for(request) as name:
        yield name


def test_hits_and_misses_persist_with_their_exact_vectors(tmp_path: Path, backend: str, open_project) -> None:  # type: ignore[no-untyped-def]
    open_project().close()  # the project (and on Postgres its database and schema)
    path = tmp_path / "proj"
    embedder = CountingEmbedder()
    cache = open_cache(path, events_uri(path), None)
    assert (cache.path is None) == backend.startswith("postgres")
    vectors, computed, reused = cache.embed(embedder, ["a", "b", "a"])
    assert (computed, reused) == (2, 0) and embedder.calls == ["a", "b"]
    cache.close()
    cache = open_cache(path, events_uri(path), None)  # persisted
    again, computed, reused = cache.embed(embedder, ["b", "c", "a"])
    assert (computed, reused) == (1, 2) and embedder.calls == ["a", "b", "c"]
    assert again.dtype == np.float32 and again[0].tobytes() == vectors[1].tobytes()
    assert cache.get(embedder.model_id, "a").tobytes() == vectors[0].tobytes()  # type: ignore[union-attr]
    assert cache.get(embedder.model_id, "never seen") is None and cache.get("other-model", "a") is None
    cache.close()


def test_a_text_two_processes_embedded_at_once_is_stored_once(tmp_path: Path, backend: str, open_project) -> None:  # type: ignore[no-untyped-def]
    from ragtt._hashing import sha256_hex

    open_project().close()
    path = tmp_path / "proj"
    first, second = open_cache(path, events_uri(path), None), open_cache(path, events_uri(path), None)
    embedder = CountingEmbedder()
    texts = [f"text {i}" for i in range(600)]
    vectors = first.embed(embedder, texts[:400])[0]
    # The second computed the same texts before the first stored them: its late insert must
    # neither fail nor replace the rows already there.
    second._store(embedder.model_id, embedder.dim, [sha256_hex(t) for t in texts[:400]], np.zeros((400, embedder.dim)))
    assert second.get(embedder.model_id, "text 7").tobytes() == vectors[7].tobytes()  # type: ignore[union-attr]
    done, computed, reused = second.embed(embedder, texts)
    assert (computed, reused) == (200, 400) and np.array_equal(done[:400], vectors)
    first.close()
    second.close()


def test_replay_on_another_machine_reuses_the_query_vector(tmp_path: Path, backend: str, open_project) -> None:  # type: ignore[no-untyped-def]
    embedder = CountingEmbedder()
    proj = open_project(embedder=embedder)
    proj.ingest_texts({"a.md": "# A\n\nThe refund window is 30 days.\n", "b.md": "# B\n\nBackups stay in Dublin.\n"})
    asked = proj.query("refund window", generate=False)
    before = len(embedder.calls)
    assert proj.replay(asked.query_id).matches_original and len(embedder.calls) == before  # no re-embedding
    remote = backend.endswith("+s3")
    # "Machine B": with the index on object storage, an empty folder of its own and only the URIs.
    folder = tmp_path / "machine-b" if remote else tmp_path / "proj"
    env = {**os.environ, "PYTHONPATH": str(REPO), **child_env(tmp_path / "proj"), **s3_env()}
    if remote:
        env["RAGTT_INDEX_URI"] = index_args(tmp_path / "proj")["index_uri"]
    done = subprocess.run(
        [sys.executable, "-m", "tests.events.cache_child", str(folder), asked.query_id, "refund window", "backups"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"replay_matches": True, "replay": 0, "old_text": 0, "new_text": 1}
    # ... and what machine B embedded is a hit here.
    calls = len(embedder.calls)
    proj.query("backups", generate=False)
    assert len(embedder.calls) == calls
    if remote:
        assert not (folder / "embeddings.db").exists() and not (tmp_path / "proj" / "embeddings.db").exists()
