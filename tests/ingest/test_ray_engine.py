"""engine="ray": the same folder ingested on a local Ray (2 CPUs) and in this process gives
the same chunks, vectors, documents and events; the embedding cache is reused."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import ray

import ragtt
from ragtt.ingest import IngestOptions
from ragtt.verbs import VERBS, VerbUsageError
from tests.conftest import corpus, flask_releases

ROOT = Path(__file__).resolve().parents[2]
PDFS = ("docling__multi_page.pdf", "pdfplumber__issue-33-lorem-ipsum.pdf")
# Per run by nature: ids and times, and the ingest id each chunk and event carries.
PER_RUN = {"ingest_id"}


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A local Ray of 2 CPUs whose workers import ragtt from this tree."""
    path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env = {"env_vars": {"PYTHONPATH": path, "RUST_LOG": "error", "HF_HUB_OFFLINE": "1"}}
    # Ray gives its raylet 30 s to come up (10 s per agent): on 2 busy cores it can take longer.
    os.environ.setdefault("RAY_raylet_start_wait_time_s", "120")
    os.environ.setdefault("RAY_agent_register_timeout_ms", "300000")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env=env)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """One Flask release (text sources in subfolders) and two PDFs."""
    docs = tmp_path / "docs"
    shutil.copytree(flask_releases()[0], docs)
    for name in PDFS:
        shutil.copy(corpus("pdfs", name), docs / name)
    return docs


def rows(proj: ragtt.Project) -> list[dict[str, Any]]:
    return proj.chunks().sort("chunk_id").to_dicts()


def vectors(proj: ragtt.Project) -> tuple[list[str], np.ndarray]:
    frame, matrix = proj.vectors()
    order = np.argsort(frame["chunk_id"].to_numpy())
    return [frame["chunk_id"][int(i)] for i in order], matrix[order]


def ingest_events(proj: ragtt.Project) -> list[dict[str, Any]]:
    frame = proj.events.frame().filter(
        proj.events.frame()["type"].is_in(["document.ingested", "document.removed", "ingest.completed"])
    )
    out = []
    for row in frame.to_dicts():
        payload = {k: v for k, v in json.loads(row["payload"]).items() if k not in PER_RUN}
        out.append({"type": row["type"], "v": row["index_version"], "doc_id": row["doc_id"], "payload": payload})
    return out


def same_report(a: ragtt.IngestReport, b: ragtt.IngestReport) -> None:
    left, right = a.to_dict(), b.to_dict()
    left.pop("elapsed_s")
    right.pop("elapsed_s")
    assert left == right


def assert_identical(a: ragtt.Project, b: ragtt.Project) -> None:
    assert a.version == b.version
    assert rows(a) == rows(b)
    ids_a, vec_a = vectors(a)
    ids_b, vec_b = vectors(b)
    assert ids_a == ids_b and vec_a.tobytes() == vec_b.tobytes()  # bit for bit
    assert ingest_events(a) == ingest_events(b)
    for source in {r["source"] for r in rows(a)}:
        assert a.document(source) == b.document(source)


def test_ray_ingest_is_identical_to_local_and_reuses_the_cache(local_ray: None, folder: Path, open_project) -> None:  # type: ignore[no-untyped-def]
    a, b = open_project("local"), open_project("ray")
    first_a, first_b = a.ingest(folder), b.ingest(folder, engine="ray")
    same_report(first_a, first_b)
    assert len(first_b.documents_added) == 4 + len(PDFS) and not first_b.failed
    assert first_b.index_version_after == first_b.index_version_before + 1  # ONE version
    assert_identical(a, b)

    # A modified copy: one file gains a paragraph, one is new, one is gone. Only the new
    # texts are embedded; the rest come from the cache the driver holds.
    readme = folder / "README"
    readme.write_text(readme.read_text(encoding="utf-8") + "\nA new paragraph about cached vectors.\n")
    (folder / "docs" / "new.md").write_text("# Fresh\n\nA page no index has seen.\n", encoding="utf-8")
    (folder / PDFS[1]).unlink()
    second_a, second_b = a.ingest(folder), b.ingest(folder, engine="ray")
    same_report(second_a, second_b)
    assert second_b.documents_updated == ["README"] and second_b.documents_removed == [PDFS[1]]
    new_texts = {r["text"] for r in rows(b)} - {r["text"] for r in b.chunks(at=first_b.index_version_after).to_dicts()}
    assert second_b.embeddings_computed == len(new_texts) > 0  # the new texts, and only them
    assert second_b.embeddings_reused > 0  # README's unchanged chunks, from the driver's cache
    assert_identical(a, b)
    assert b.verify().ok

    unchanged = b.ingest(folder, engine="ray")
    assert unchanged.index_version_after == second_b.index_version_after and unchanged.embeddings_computed == 0


def test_ray_streams_in_batches_as_local_does(  # type: ignore[no-untyped-def]
    local_ray: None, folder: Path, open_project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Small write batches: the misses go to the workers one Ray job per ``embed_scale``
    batches, the driver makes the chunk texts from the plans the workers sent back, and it
    is still one version, identical to a local ingest in one batch."""
    from ragtt.ingest import pipeline, ray_engine

    a, b = open_project("local"), open_project("ray")
    whole = a.ingest(folder)
    monkeypatch.setattr(pipeline, "DEFAULT_BATCH", pipeline.BatchLimits(chunks=1, chars=3_000))
    jobs: list[int] = []
    embed_batches = ray_engine.RayEngine.embed_batches

    def counted(self, embedder, batches):  # type: ignore[no-untyped-def]
        jobs.append(sum(map(len, batches)))
        return embed_batches(self, embedder, batches)

    monkeypatch.setattr(ray_engine.RayEngine, "embed_batches", counted)
    streamed = b.ingest(folder, engine="ray")
    assert streamed.chunks_added == whole.chunks_added > 10 and not streamed.failed
    scale = ray_engine.RayEngine.embed_scale
    assert len(jobs) == -(-whole.chunks_added // scale) and max(jobs) == scale  # a job per `scale` batches
    assert streamed.embeddings_computed == whole.embeddings_computed
    assert streamed.index_version_after == streamed.index_version_before + 1  # ONE version
    assert_identical(a, b)


def test_the_ingest_verb_takes_the_engine(local_ray: None, folder: Path, open_project) -> None:  # type: ignore[no-untyped-def]
    proj = open_project()
    ingest = VERBS["ingest"]
    report = ingest.run(proj, {"paths": [str(folder / "README")], "engine": "ray"})
    assert report.documents_added == ["README"] and ingest.exit_code(report) == 0
    engine = next(a for a in ingest.args if a.name == "engine")
    assert (engine.flags, engine.choices, engine.default) == (("--engine",), ("local", "ray"), "local")
    address = next(a for a in ingest.args if a.name == "ray_address")
    assert address.flags == ("--ray-address",) and address.fronts == {"cli", "magic"}
    with pytest.raises(VerbUsageError, match="Ray engine ingests paths"):
        ingest.run(proj, {"texts": {"a.md": "x"}, "engine": "ray"})
    with pytest.raises(ragtt.ConfigError, match="already connected to the Ray cluster"):
        ingest.run(proj, {"paths": [str(folder)], "engine": "ray", "ray_address": "10.0.0.1:1"})


def test_a_page_engine_a_worker_cannot_run_fails_that_source_naming_the_worker(local_ray: None, open_project) -> None:  # type: ignore[no-untyped-def]
    options = IngestOptions(engines=("vision",))  # named, so required; no vision_model is set
    pdf = corpus("pdfs", PDFS[1])
    local = open_project("local", ingest_options=options).ingest(pdf)
    remote = open_project("ray", ingest_options=options).ingest(pdf, engine="ray")
    [(source, reason)] = remote.failed
    assert (source, reason.split(" (on Ray worker ")[0]) == local.failed[0]
    assert "vision" in reason and "on Ray worker" in reason


class _Locked(ragtt.HashEmbedder):
    """An embedder holding a lock: it cannot be pickled to a worker."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()


def test_errors_say_what_to_do(local_ray: None, open_project, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "a.md"
    source.write_text("alpha beta", encoding="utf-8")
    proj = open_project()
    with pytest.raises(ragtt.ConfigError, match="engine must be one of 'local', 'ray'"):
        proj.ingest(source, engine="spark")
    with pytest.raises(ragtt.ConfigError, match=r"ray_address \(--ray-address\) is for engine='ray'"):
        proj.ingest(source, ray_address="127.0.0.1:6379")
    locked = open_project("locked", embedder=_Locked())
    before = locked.version
    with pytest.raises(ragtt.ConfigError, match="cannot be pickled"):
        locked.ingest(source, engine="ray")
    assert locked.version == before and locked.verify().ok  # nothing was written


@pytest.mark.slow
def test_the_default_onnx_embedder_gives_the_same_vectors_on_workers(local_ray: None, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(flask_releases()[0], docs)
    with (
        ragtt.Project.open(tmp_path / "local", progress=False) as a,
        ragtt.Project.open(tmp_path / "ray", progress=False) as b,
    ):
        assert "onnx" in a.embedder.model_id
        same_report(a.ingest(docs), b.ingest(docs, engine="ray"))
        assert_identical(a, b)
