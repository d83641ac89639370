"""Ingest on a Ray cluster: parsing, chunking and embedding fan out over Ray Data.

``proj.ingest(paths, engine="ray")`` replaces only the per-document work of an ingest
(``ragtt.ingest.pipeline.Engine``); the diff against the table, the events and the one
table version are the local ingest's own code, so the result is the same. Two Ray Data
jobs run:

1. **prepare**: each worker reads, parses and chunks its share of the sources with
   ``prepare_source`` (the local function) and sends the outcomes back, in input order: a
   ``Prepared`` holds its chunks as spans over the document's text (``ChunkPlan``), so the
   text is pickled once and the driver makes the chunk texts a write batch at a time.
2. **embed**, once per eight write batches (``BatchLimits``, ``embed_scale``) that the cache
   misses: the driver looks the batches' chunk texts up in its embedding cache (a file
   workers on other machines cannot open); only the misses go out, in the cache's own
   batches of 256, to tasks on the same (already warm) worker processes; each process
   unpickles the embedder, and loads its model, once. The driver stores the new vectors in
   its cache as they come back.

The workers must see the sources' paths (a shared or identical folder) and have ragtt,
the loaders' packages (PyMuPDF; Tesseract for OCR) and the embedder's weights installed.
A page engine a worker cannot run fails that source with the worker's name, as a local
ingest would fail it; the driver's loader table (``register_loader``) travels with the job.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import pickle
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragtt.errors import ConfigError
from ragtt.ingest.loaders import loader_for
from ragtt.ingest.pipeline import IN_MEMORY, Failed, prepare_source

if TYPE_CHECKING:
    import pyarrow as pa
    from numpy.typing import NDArray

    from ragtt.context import Context
    from ragtt.index.embedders import Embedder
    from ragtt.ingest.loaders import Loader
    from ragtt.ingest.pipeline import Outcome, PrepareSpec, SourceItem

__all__ = ["RayEngine"]

_BLOCKS_PER_WORKER = 4  # enough blocks to balance uneven documents, few enough to keep task overhead low
# Write batches per embed job: each Ray Data job costs a few hundred ms to plan and start, a
# job per 1,024-chunk batch took a third of a 20,000-chunk ingest; eight hold about 12 MiB of
# 384-dimension vectors in the driver at a time
_BATCHES_PER_EMBED_JOB = 8


class RayEngine:
    """An ingest engine on the Ray cluster this process is connected to."""

    embed_scale = _BATCHES_PER_EMBED_JOB

    def __init__(self, workers: int, *, progress: bool = False) -> None:
        self.workers = max(1, workers)
        self.progress = progress

    @classmethod
    def connect(cls, address: str | None = None, *, progress: bool = False) -> RayEngine:
        """Use the Ray this process is connected to; else connect to ``address`` (or
        ``$RAY_ADDRESS``), or start a local one. ``progress``: show Ray Data's bars."""
        try:
            import ray
            import ray.data  # the extra's other half: fail here, not mid-ingest
        except ImportError:
            raise ConfigError("engine='ray' needs Ray Data: pip install 'ragtt[ray]'") from None
        if ray.is_initialized():
            current = ray.get_runtime_context().gcs_address
            if address not in (None, "auto", current):
                raise ConfigError(
                    f"this process is already connected to the Ray cluster at {current}, not {address}; "
                    "call ray.shutdown() first, or leave ray_address out to use that cluster"
                )
        else:
            try:
                if address is None and not os.environ.get("RAY_ADDRESS"):
                    ray.init(include_dashboard=False)  # a new local Ray: no dashboard to serve
                else:
                    ray.init(address=address)
            except ConnectionError as exc:
                raise ConfigError(f"cannot connect to the Ray cluster at {address}: {exc}") from None
        return cls(int(ray.cluster_resources().get("CPU", 1)), progress=progress)

    def prepare(
        self, ctx: Context, spec: PrepareSpec, items: list[SourceItem], known: list[str | None]
    ) -> list[Outcome]:
        import ray.data

        if not items:
            return []
        tasks = zip(items, known, strict=True)
        rows = [{"i": i, "task": pickle.dumps(task)} for i, task in enumerate(tasks)]
        outcomes: list[Outcome] = [None] * len(items)
        with self._quiet():
            ds = ray.data.from_items(rows, override_num_blocks=self._blocks(len(rows))).map_batches(
                functools.partial(_prepare_batch, spec=spec, loaders=_loaders(items)),
                batch_size=None,
                batch_format="pyarrow",
            )
            for batch in _tables(ds):
                for i, blob in zip(batch["i"].to_pylist(), batch["out"].to_pylist(), strict=True):
                    outcomes[i] = pickle.loads(blob)
        return outcomes

    def embed_batches(self, embedder: Embedder, batches: list[list[str]]) -> Iterator[NDArray[np.float32]]:
        """Each batch's vectors, in order, as the workers finish them (the cache stores each
        batch as it arrives, as it does for a local ingest)."""
        import ray.cloudpickle
        import ray.data

        if not batches:
            return
        try:
            pickled = ray.cloudpickle.dumps(embedder)
        except Exception as exc:
            raise ConfigError(
                f"engine='ray' ships the embedder to its workers by pickling it, and {embedder!r} cannot be "
                f"pickled ({type(exc).__name__}: {exc}); leave loaded models out of its pickled state "
                "(__getstate__), or ingest with engine='local'"
            ) from None
        rows = [{"i": i, "texts": texts} for i, texts in enumerate(batches)]
        arrived: dict[int, NDArray[np.float32]] = {}
        done = 0
        with self._quiet():
            ds = ray.data.from_items(rows, override_num_blocks=self._blocks(len(rows))).map_batches(
                functools.partial(_embed_batch, pickled=pickled),
                batch_size=None,
                batch_format="pyarrow",
            )
            for batch in _tables(ds):
                for i, shape, blob in zip(
                    batch["i"].to_pylist(), batch["shape"].to_pylist(), batch["vectors"].to_pylist(), strict=True
                ):
                    arrived[i] = np.frombuffer(blob, dtype=np.float32).reshape(shape)
                while done in arrived:
                    yield arrived.pop(done)
                    done += 1

    def _blocks(self, n: int) -> int:
        return max(1, min(n, self.workers * _BLOCKS_PER_WORKER))

    @contextlib.contextmanager
    def _quiet(self) -> Iterator[None]:
        """Ray Data's progress bars and execution logs only when the project shows progress."""
        import ray.data

        data = ray.data.DataContext.get_current()
        logger = logging.getLogger("ray.data")
        saved = data.enable_progress_bars, data.print_on_execution_start, logger.level
        if not self.progress:
            data.enable_progress_bars = data.print_on_execution_start = False
            logger.setLevel(logging.WARNING)
        try:
            yield
        finally:
            data.enable_progress_bars, data.print_on_execution_start = saved[:2]
            logger.setLevel(saved[2])


def _tables(ds: Any) -> Iterator[pa.Table]:
    """A dataset's output blocks as Arrow tables, as they are ready."""
    yield from ds.iter_batches(batch_size=None, batch_format="pyarrow")


def _loaders(items: list[SourceItem]) -> dict[str, Loader | None]:
    """The driver's loader for each suffix the items have: a loader registered in this
    process (``register_loader``) reads the same way on the workers."""
    names = {_suffix(item.path if item.path is not None else item.source) for item in items}
    if any(item.path is None for item in items):
        names.add(_suffix(IN_MEMORY))
    return {suffix: loader_for(f"x{suffix}") for suffix in names}


def _suffix(path: str | Path) -> str:
    return Path(path).suffix.lower()


def _find(loaders: dict[str, Loader | None], path: str | Path) -> Loader | None:
    return loaders.get(_suffix(path))


def _prepare_batch(batch: pa.Table, spec: PrepareSpec, loaders: dict[str, Loader | None]) -> pa.Table:
    """On a worker: prepare each source of a block, exactly as a local ingest does."""
    import pyarrow as pa

    find = functools.partial(_find, loaders)
    out = []
    for blob in batch["task"].to_pylist():
        item, key = pickle.loads(blob)
        outcome: Any = prepare_source(spec, item, key, find)
        if isinstance(outcome, Failed):  # which machine could not read it matters on a cluster
            outcome = Failed(f"{outcome.reason} (on Ray worker {socket.gethostname()})")
        out.append(pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL))
    return pa.table({"i": batch["i"], "out": pa.array(out, pa.large_binary())})


# The embedders a worker process has unpickled, by their pickled bytes: Ray reuses worker
# processes, so a model is loaded once per worker, not once per block or per ingest.
_EMBEDDERS: dict[bytes, Embedder] = {}


def _embed_batch(batch: pa.Table, pickled: bytes) -> pa.Table:
    """On a worker: embed each row's batch of texts (the cache's batches, unchanged)."""
    import pyarrow as pa

    embedder = _EMBEDDERS.get(pickled)
    if embedder is None:
        embedder = _EMBEDDERS[pickled] = pickle.loads(pickled)
    shapes, blobs = [], []
    for texts in batch["texts"].to_pylist():
        vectors = np.ascontiguousarray(embedder.embed(texts), dtype=np.float32)
        shapes.append(list(vectors.shape))
        blobs.append(vectors.tobytes())
    shape = pa.array(shapes, pa.list_(pa.int64()))
    return pa.table({"i": batch["i"], "shape": shape, "vectors": pa.array(blobs, pa.large_binary())})
