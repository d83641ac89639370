"""Acceptance on real history: Flask's docs at 22 releases, ingested in date order: the log in
SQLite and in Postgres, and the index in the folder and in an S3 bucket (moto on loopback)."""

from __future__ import annotations

import numpy as np
import pytest

import ragtt
from tests.backends import backend_for, events_uri, index_args
from tests.conftest import flask_releases

QUERIES = [
    "What is the minimum Python version supported?",
    "How do I set the SECRET_KEY configuration value?",
    "SESSION_COOKIE_SAMESITE default",
    "install Flask with pip in a virtual environment",
    "Cross-site scripting protection",
]
MODES = ["vector", "bm25", "hybrid"]


@pytest.fixture(scope="module", params=["sqlite", "postgres", "postgres+s3"])
def backend(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    with backend_for(request) as name:
        yield name


class EachTextOnce:
    """The real default model (torch), loaded once, each text embedded once for the module:
    every backend's history and every fresh index embed the same Flask chunks and queries
    (about 25 s of model time a backend). A project still embeds through its own cache."""

    def __init__(self) -> None:
        self.model = ragtt.SentenceTransformerEmbedder()
        self.model_id, self.dim = self.model.model_id, self.model.dim
        self._vectors: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if new:
            self._vectors.update(zip(new, self.model.embed(new), strict=True))
        return np.stack([self._vectors[t] for t in texts]) if texts else self.model.embed([])


@pytest.fixture(scope="module")
def minilm() -> EachTextOnce:
    return EachTextOnce()


@pytest.fixture(scope="module", params=["hash", pytest.param("minilm", marks=pytest.mark.slow)])
def history(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,  # type: ignore[no-untyped-def]
    backend: str,
):
    """Both embedders: the deterministic one, and the real default model; both backends."""
    path = tmp_path_factory.mktemp("flask") / "proj"
    embedder = ragtt.HashEmbedder() if request.param == "hash" else request.getfixturevalue("minilm")
    proj = ragtt.Project.open(path, embedder=embedder, progress=False, events_uri=events_uri(path), **index_args(path))
    logged: list[tuple[int, str, str, str]] = []  # (release index, mode, query, query_id)
    reports = []
    for k, release in enumerate(flask_releases()):
        reports.append(proj.ingest(release))
        for mode in MODES:
            for query in QUERIES:
                logged.append((k, mode, query, proj.query(query, mode=mode, generate=False).query_id))
    yield proj, logged, reports
    proj.close()


def test_every_replay_is_identical_after_all_releases(history) -> None:  # type: ignore[no-untyped-def]
    proj, logged, _ = history
    for _, _, _, query_id in logged:
        original = proj.events.query(query_id=query_id, types="retrieval.executed")[0].payload
        replayed = proj.replay(query_id)
        assert replayed.matches_original, query_id
        assert replayed.index_version == original["index_version"]
        assert [c.chunk_id for c in replayed.chunks] == [c["chunk_id"] for c in original["chunks"]]
        for got, want in zip(replayed.chunks, original["chunks"], strict=True):
            assert got.score == pytest.approx(want["score"], abs=1e-6)


def test_byte_identical_release_writes_nothing(history) -> None:  # type: ignore[no-untyped-def]
    _, _, reports = history
    identical = [
        r for r in reports[1:] if not r.documents_added and not r.documents_updated and not r.documents_removed
    ]
    assert identical, "the corpus has a release byte-identical to the one before it"
    for report in identical:
        assert report.index_version_after == report.index_version_before
        assert report.embeddings_computed == 0


def test_one_version_per_release_ingest(history) -> None:  # type: ignore[no-untyped-def]
    _, _, reports = history
    for report in reports:
        assert report.index_version_after - report.index_version_before <= 1
        assert not report.failed, report.failed


def test_renamed_and_removed_files_leave_the_index(history) -> None:  # type: ignore[no-untyped-def]
    proj, _, reports = history
    sources = set(proj.chunks()["source"].to_list())
    assert sources == {"README.md", "docs/config.rst", "docs/installation.rst", "docs/web-security.rst"}
    assert any("docs/security.rst" in r.documents_removed for r in reports)


@pytest.mark.parametrize("k", [0, 3, 11, 17, 21])
def test_replay_equals_fresh_index_of_that_release(history, open_project, k: int) -> None:  # type: ignore[no-untyped-def]
    proj, logged, _ = history
    release = flask_releases()[k]
    fresh = open_project(f"fresh{k}", embedder=proj.embedder)
    fresh.ingest(release)
    for rk, mode, query, query_id in logged:
        if rk != k:
            continue
        then = proj.replay(query_id)
        now = fresh.query(query, mode=mode, generate=False)
        assert [c.text for c in then.chunks] == [c.text for c in now.chunks], (mode, query)
