"""The rag-timetravel side of the benchmark; runs in bench/.peer-venv, never beside ragtt.

Usage: ``peer_worker.py JOB.json``. The job names a fresh work folder, the documents, the
queries, the modes and the number of rounds; the results are written as JSON to the
job's ``out`` path (stdout is left to the peer's own logging).

How the peer is driven (its public API, rag-timetravel 1.2.0):
- ``RAGPipeline.create(folder, PipelineConfig(...), embedder=HashAdapter())``: the
  embedder plugin interface is an object with ``dim`` and ``async embed(texts) ->
  list[list[float]]``; the adapter calls bench/common.hash_embed, the same function as
  ragtt.HashEmbedder (checked bit-identical by bench/run.py).
- ingest: ``await pipeline.ingest(source, text)``, one call per document (its only API;
  its CLI loops the same way). ``auto_snapshot_every=0`` like ragtt's default.
- query: ``await pipeline.query(text, top_k=k)`` after ``update_config`` switches
  ``retrieval_mode``. Generation is mocked: ``litellm.acompletion`` is replaced by a
  coroutine returning a fixed answer, so no model is called and no time is spent there
  (ragtt runs with generate=False).
- replay (information only): ``ReplayEngine(pipeline).replay(query_id)`` after an explicit
  ``take_snapshot``.
- drift and lineage (issue 5; the job's ``analysis``): snapshot, vector queries, the same
  re-ingest as ragtt's (``pipeline.ingest(source, new_text)`` per revised document; the peer
  appends, it never replaces a source's old chunks), snapshot, the same queries again; then
  ``LineageTracer(pipeline).explain(q_before, q_after)`` per query pair and
  ``EmbeddingDriftDetector(pipeline).scan(v_a, v_b, 0.9, snap_a, snap_b)`` (what its CLI's
  ``drift --from --to`` and its API's ``/drift/{a}/{b}`` call) under ``asyncio.wait_for``
  with the job's timeout; sources scanned by then are counted.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("RUST_LOG", "error")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import common


def _chunk_rows(folder: Path) -> int | None:
    """The peer's chunk count, which rag-timetravel does not expose: read with LanceDB's public
    API from its folder (the rows of its one table at the latest version; None if it has more)."""
    import lancedb

    db = lancedb.connect(str(folder / "lancedb"))
    names = list(db.table_names())
    return int(db.open_table(names[0]).count_rows()) if len(names) == 1 else None


class HashAdapter:
    """rag-timetravel's Embedder protocol around bench/common.hash_embed."""

    def __init__(self, dim: int) -> None:
        self._dim = dim

    @property
    def dim(self) -> int:
        return self._dim

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return common.hash_embed(list(texts), self._dim).tolist()


async def _mock_acompletion(**_kwargs: Any) -> Any:
    message = SimpleNamespace(content="(generation mocked by the benchmark)")
    return SimpleNamespace(
        choices=[SimpleNamespace(message=message)], usage=SimpleNamespace(prompt_tokens=0, completion_tokens=0)
    )


async def run(job: dict[str, Any]) -> dict[str, Any]:
    import lancedb
    import litellm
    import rag_timetravel
    from rag_timetravel import PipelineConfig, RAGPipeline, ReplayEngine

    litellm.acompletion = _mock_acompletion  # generation off on both sides

    folder = Path(job["workdir"])
    docs: list[list[str]] = job["docs"]
    queries: list[str] = job["queries"]
    top_k = int(job["top_k"])
    config = PipelineConfig(
        embedder_model="bench-hash", model="mock/none", top_k=top_k, auto_snapshot_every=0, retrieval_mode="vector"
    )
    pipeline = await RAGPipeline.create(str(folder), config, embedder=HashAdapter(int(job["dim"])))
    out: dict[str, Any] = {
        "name": "rag-timetravel",
        "version": rag_timetravel.__version__,
        "lancedb": lancedb.__version__,
    }
    try:
        # -- ingest: one call per document -----------------------------------------------------
        started = time.perf_counter()
        for source, text in docs:
            await pipeline.ingest(source, text)
        seconds = time.perf_counter() - started
        out["ingest"] = {
            "docs": len(docs),
            "seconds": seconds,
            "docs_per_s": len(docs) / seconds,
            "chunks": _chunk_rows(folder),
            "table_version": await pipeline.index.current_version(),
        }
        out["disk"] = {
            "index_bytes": common.dir_bytes(folder / "lancedb"),
            "index_files": common.file_count(folder / "lancedb"),
            "project_bytes": common.dir_bytes(folder),
        }
        await pipeline.take_snapshot(label="bench-after-ingest")
        await asyncio.sleep(0.01)  # the peer picks the snapshot strictly before a query's time

        # -- queries per mode ------------------------------------------------------------------
        out["query"] = {}
        vector_ids: list[str] = []
        for mode in job["modes"]:
            cfg = dataclasses.replace(pipeline.config, retrieval_mode=mode).bump()
            await pipeline.update_config(cfg)
            if job.get("warmup", True):
                await pipeline.query(queries[0], top_k=top_k)
            samples: list[float] = []
            top: list[list[str]] = []
            for round_no in range(int(job["rounds"])):
                for text in queries:
                    t0 = time.perf_counter()
                    result = await pipeline.query(text, top_k=top_k)
                    samples.append((time.perf_counter() - t0) * 1e3)
                    if round_no == 0:
                        top.append([c.source for c in result.chunks])
                        if mode == "vector":
                            vector_ids.append(result.query_id)
            out["query"][mode] = {**common.summary(samples), "top_sources": top}

        # -- replay (information only; vector mode, the snapshot's config) ---------------------
        if job.get("replay", True) and vector_ids:
            engine = ReplayEngine(pipeline)
            samples = []
            for qid in vector_ids:
                t0 = time.perf_counter()
                await engine.replay(qid)
                samples.append((time.perf_counter() - t0) * 1e3)
            out["replay_vector"] = common.summary(samples)

        if job.get("analysis"):
            out["analysis"] = await analysis(
                pipeline, folder, job["analysis"], top_k, sources=len({source for source, _ in docs})
            )
    finally:
        await pipeline.aclose()
    return out


async def analysis(pipeline: Any, folder: Path, spec: dict[str, Any], top_k: int, sources: int) -> dict[str, Any]:
    """Drift and lineage across one re-ingest (see the module docstring)."""
    from rag_timetravel.drift import EmbeddingDriftDetector
    from rag_timetravel.lineage import LineageTracer

    if pipeline.config.retrieval_mode != "vector":
        await pipeline.update_config(dataclasses.replace(pipeline.config, retrieval_mode="vector").bump())
    queries: list[str] = spec["queries"]
    snap_a = await pipeline.take_snapshot(label="bench-before-revisions")
    await asyncio.sleep(0.01)  # the peer picks the snapshot strictly before a query's time
    before = [(await pipeline.query(q, top_k=top_k)).query_id for q in queries]
    started = time.perf_counter()
    for source, text in spec["revisions"].items():
        await pipeline.ingest(source, text)
    out: dict[str, Any] = {"reingest": {"docs": len(spec["revisions"]), "ms": (time.perf_counter() - started) * 1e3}}
    snap_b = await pipeline.take_snapshot(label="bench-after-revisions")
    await asyncio.sleep(0.01)
    after = [(await pipeline.query(q, top_k=top_k)).query_id for q in queries]
    va, vb = snap_a["lancedb_version"], snap_b["lancedb_version"]
    out["reingest"].update(version_before=va, version_after=vb, chunks_after=_chunk_rows(folder))

    # -- lineage: the first ``lineage_pairs`` query pairs, once each ---------------------------
    tracer = LineageTracer(pipeline)
    samples: list[float] = []
    entries: dict[str, int] = {}
    for qa, qb in list(zip(before, after, strict=True))[: int(spec["lineage_pairs"])]:
        t0 = time.perf_counter()
        report = await tracer.explain(qa, qb)
        samples.append((time.perf_counter() - t0) * 1e3)
        for e in report.entries:
            entries[e.direction] = entries.get(e.direction, 0) + 1
    out["lineage"] = {**common.summary(samples), "entries": entries}

    # -- drift: one full scan, cut off at the timeout ------------------------------------------
    detector = EmbeddingDriftDetector(pipeline)
    done = 0
    per_source = detector.drift_for_source

    async def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal done
        result = await per_source(*args, **kwargs)
        done += 1
        return result

    detector.drift_for_source = counted  # type: ignore[method-assign]
    timeout = float(spec["drift_timeout_s"])
    t0 = time.perf_counter()
    try:
        scan = await asyncio.wait_for(detector.scan(va, vb, 0.9, snap_a, snap_b), timeout)
        seconds = time.perf_counter() - t0
        out["drift"] = {
            "seconds": seconds,
            "timed_out": False,
            "sources_scanned": done,
            "drifted": len(scan.sources),
            "embedder_changed": scan.embedder_changed,
        }
    except TimeoutError:
        seconds = time.perf_counter() - t0
        out["drift"] = {"seconds": seconds, "timed_out": True, "timeout_s": timeout, "sources_scanned": done}
    out["drift"]["sources_total"] = sources  # every source is at both versions
    return out


def main() -> int:
    job = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    probe = common.hash_embed(common.SELF_CHECK_TEXTS, int(job["dim"]))
    result = asyncio.run(run(job))
    result["embed_probe"] = probe.tolist()
    Path(job["out"]).write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
