"""The one retrieval path, shared by live queries and replays.

``retrieve(view, plan, query_vector)`` searches a table checked out at an exact version:
vector search on its Lance dataset, BM25 on LanceDB's full-text search (``View``). Lance does
not order ties deterministically, so every fetch over-fetches until the tie group at the
cut-off is complete, then sorts by (score descending, chunk_id ascending).

A version that has an ANN index (IVF-PQ, built by maintenance past ``ann_min_rows``) is
searched through it when the plan says ``vector_index="auto"``: ``nprobes`` partitions,
``refine_factor`` times the pool fetched on compressed distances, then reranked on exact
ones. ``execute`` resolves the plan at the version it searches (``searching``) and the run
records the resolved plan, so ``index_uuid`` names the index probed (None: an exact scan);
the same version resolves to the same index, so a replay runs the same search. Plans
recorded before ANN indexes existed read as ``vector_index="flat"``: an exact scan, as then.
The run also records the engines that ranked it (``engines``, see ``ragtt.index.engines``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ragtt.errors import ConfigError, StoreError
from ragtt.index.table import CHUNK_COLUMNS, SCAN_SIZES

if TYPE_CHECKING:
    import pyarrow as pa
    from numpy.typing import NDArray

    from ragtt.index.table import VectorIndex, View

__all__ = [
    "ANN_NPROBES",
    "ANN_REFINE_FACTOR",
    "RRF_K",
    "Hit",
    "RetrievalPlan",
    "lexical_overlap",
    "retrieve",
    "retrieve_many",
]

RRF_K = 60
# A live plan's ANN search: partitions probed, and candidates fetched on compressed
# distances per one kept (reranked on exact distances).
ANN_NPROBES = 32
ANN_REFINE_FACTOR = 10
_VECTOR_INDEX = ("auto", "flat")
_TOKEN = re.compile(r"\w+", re.UNICODE)
_ROW_ID = "_rowid"  # a search's hits carry their row address until ``_with_rows`` reads the rows


@dataclass(frozen=True)
class RetrievalPlan:
    """Everything that decides what a query retrieves: recorded in full, replayed exactly."""

    mode: str
    top_k: int
    candidate_pool: int
    hybrid_alpha: float
    reranker: str
    reranker_version: str
    embedder_id: str
    embedder_dim: int
    table_name: str
    vector_index: str = "flat"  # "auto": the version's ANN index if it has one; "flat": exact scan
    nprobes: int = 0
    refine_factor: int = 0
    index_uuid: str | None = None  # resolved by ``searching``: the ANN index searched, None = exact
    # What ranked the run (ragtt.index.engines), set by ``execute`` as it runs: None for a plan
    # not run yet, and for runs recorded before ragtt kept it.
    engines: dict[str, Any] | None = None

    def searching(self, index: VectorIndex | None) -> RetrievalPlan:
        """This plan as it runs on a version whose ANN index is ``index``: what the run records."""
        if self.vector_index not in _VECTOR_INDEX:
            raise ConfigError(f"vector_index must be 'auto' or 'flat'; got {self.vector_index!r}")
        use = index is not None and self.vector_index == "auto" and self.mode != "bm25"
        return replace(self, index_uuid=index.uuid if use and index is not None else None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "top_k": self.top_k,
            "candidate_pool": self.candidate_pool,
            "hybrid_alpha": self.hybrid_alpha,
            "fusion": "rrf",
            "rrf_k": RRF_K,
            "reranker": self.reranker,
            "reranker_version": self.reranker_version,
            "embedder_id": self.embedder_id,
            "embedder_dim": self.embedder_dim,
            "table_name": self.table_name,
            "vector_index": self.vector_index,
            "nprobes": self.nprobes,
            "refine_factor": self.refine_factor,
            "index_uuid": self.index_uuid,
            **({} if self.engines is None else {"engines": self.engines}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RetrievalPlan:
        return cls(
            mode=data["mode"],
            top_k=int(data["top_k"]),
            candidate_pool=int(data["candidate_pool"]),
            hybrid_alpha=float(data["hybrid_alpha"]),
            reranker=data["reranker"],
            reranker_version=data["reranker_version"],
            embedder_id=data["embedder_id"],
            embedder_dim=int(data["embedder_dim"]),
            table_name=data["table_name"],
            vector_index=data.get("vector_index", "flat"),
            nprobes=int(data.get("nprobes", 0)),
            refine_factor=int(data.get("refine_factor", 0)),
            index_uuid=data.get("index_uuid"),
            engines=data.get("engines"),
        )


@dataclass
class Hit:
    """One retrieved row with every score component kept beside the final score."""

    row: dict[str, Any]
    score: float
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def chunk_id(self) -> str:
        return str(self.row["chunk_id"])


def retrieve(view: View, plan: RetrievalPlan, query: str, query_vector: NDArray[np.float32] | None) -> list[Hit]:
    """Top ``plan.top_k`` hits of ``query`` on ``view``, deterministic for a given version."""
    return retrieve_many(view, plan, [query], [query_vector])[0]


def retrieve_many(
    view: View, plan: RetrievalPlan, queries: Sequence[str], query_vectors: Sequence[NDArray[np.float32] | None]
) -> list[list[Hit]]:
    """``retrieve`` for each query on ``view``, the queries searched together (one vector
    search holding every query vector, the BM25 searches in one trip to LanceDB): a query's
    hits are those it retrieves alone, ties included, since each one's fetch is completed
    and sorted on its own. ``retrieve`` is a batch of one."""
    pool = max(plan.candidate_pool, plan.top_k)
    if plan.mode == "vector":
        found = _vector(view, plan, [_need(v) for v in query_vectors], pool)
    elif plan.mode == "bm25":
        found = _bm25(view, queries, pool)
    elif plan.mode == "hybrid":
        vector_hits = _vector(view, plan, [_need(v) for v in query_vectors], pool)
        bm25_hits = _bm25(view, queries, pool)
        found = [_fuse(v, b, plan.hybrid_alpha) for v, b in zip(vector_hits, bm25_hits, strict=True)]
    else:
        raise ConfigError(f"retrieval mode must be 'vector', 'bm25' or 'hybrid'; got {plan.mode!r}")
    if plan.reranker != "none":
        from ragtt.index.rerank import rerank

        found = _with_rows(view, found)  # a reranker reads each candidate's text
        found = [rerank(plan.reranker, q, hits) for q, hits in zip(queries, found, strict=True)]
    return _with_rows(view, [hits[: plan.top_k] for hits in found])


def _need(vector: NDArray[np.float32] | None) -> NDArray[np.float32]:
    if vector is None:
        raise ValueError("vector and hybrid retrieval need the query's embedding")
    return vector


def _ordered(hits: list[Hit]) -> list[Hit]:
    return sorted(hits, key=lambda h: (-h.score, h.chunk_id))


Rows = list[dict[str, Any]]


def _complete_fetch(
    fetch: Callable[[list[int], int], list[Rows]], count: int, n: int, score_of: Callable[[dict[str, Any]], float]
) -> list[Rows]:
    """For each of ``count`` queries, at least n rows and every row tied with the n-th, however
    LanceDB breaks ties: ``fetch(queries, limit)`` returns each listed query's top ``limit``;
    a query whose tie group at the cut-off is incomplete is fetched again with twice the limit."""
    out: list[Rows] = [[] for _ in range(count)]
    todo = list(range(count))
    limit = n + 8
    while todo:
        again = []
        for k, rows in zip(todo, fetch(todo, limit), strict=True):
            out[k] = rows
            if len(rows) >= limit:
                scores = sorted((score_of(r) for r in rows), reverse=True)
                if not scores[n - 1] > scores[-1]:
                    again.append(k)
        todo = again
        limit *= 2
    return out


def _vector(view: View, plan: RetrievalPlan, vectors: list[NDArray[np.float32]], n: int) -> list[list[Hit]]:
    nearest: dict[str, Any] = {"column": "vector", "metric": "cosine"}
    if plan.index_uuid is None:
        nearest["use_index"] = False
    else:  # the index at this version: probe, over-fetch, rerank the candidates on exact distances
        nearest.update(use_index=True, nprobes=plan.nprobes, refine_factor=plan.refine_factor)

    def fetch(which: list[int], limit: int) -> list[Rows]:
        # Lance's batch search: one scan for every query vector, up to ``limit`` rows each,
        # tagged with the query's position in ``q``
        q = np.stack([vectors[k].astype(np.float32) for k in which])
        found = view.dataset.to_table(
            columns=["chunk_id", "_distance"],
            nearest={**nearest, "q": q, "k": limit},
            with_row_id=True,
            **SCAN_SIZES,
        )
        rows: list[Rows] = [[] for _ in which]
        for row in found.to_pylist():
            rows[row.pop("query_index")].append(row)
        return rows

    found = _complete_fetch(fetch, len(vectors), n, lambda r: -float(r["_distance"]))
    out = []
    for rows in found:
        hits = []
        for row in rows:
            similarity = 1.0 - float(row.pop("_distance"))
            hits.append(Hit(row, similarity, {"vector": similarity}))
        out.append(_ordered(hits)[:n])
    return out


def _bm25(view: View, queries: Sequence[str], n: int) -> list[list[Hit]]:
    searched = [k for k, q in enumerate(queries) if _TOKEN.search(q)]  # a query without a word finds nothing

    def fetch(which: list[int], limit: int) -> list[Rows]:
        # scores and row addresses only: each search's own read of other columns cost LanceDB
        # a sixth of the query; the chunk ids of every query's rows are read below, once
        found = view.full_text([queries[searched[k]] for k in which], [], limit)
        return [table.to_pylist() for table in found]

    fetched = _complete_fetch(fetch, len(searched), n, lambda r: float(r["_score"]))
    ids = _chunk_ids(view, {int(row[_ROW_ID]) for rows in fetched for row in rows})
    out: list[list[Hit]] = [[] for _ in queries]
    for k, rows in zip(searched, fetched, strict=True):
        hits = []
        for row in rows:
            score = float(row.pop("_score"))
            row["chunk_id"] = ids[int(row[_ROW_ID])]
            hits.append(Hit(row, score, {"bm25": score}))
        out[k] = _ordered(hits)[:n]
    return out


def _read_rows(view: View, row_ids: set[int], columns: list[str]) -> pa.Table:
    """``columns`` (and ``_rowid``) of the rows at ``row_ids`` of ``view``, in one read."""
    return view.dataset.to_table(
        columns=columns,
        filter=f"{_ROW_ID} IN ({', '.join(map(str, sorted(row_ids)))})",
        with_row_id=True,
        **SCAN_SIZES,
    )


def _chunk_ids(view: View, row_ids: set[int]) -> dict[int, str]:
    """Row address -> chunk id, for ``row_ids`` of ``view`` (every one of them: a search found them there)."""
    if not row_ids:
        return {}
    table = _read_rows(view, row_ids, ["chunk_id"])
    found = dict(zip(table.column(_ROW_ID).to_pylist(), table.column("chunk_id").to_pylist(), strict=True))
    if len(found) != len(row_ids):
        raise StoreError(
            "rows that full-text search found could not be read back at this version; "
            "`ragtt verify` checks the index files"
        )
    return found


def _with_rows(view: View, found: list[list[Hit]]) -> list[list[Hit]]:
    """``found`` with each hit's row read in full (``CHUNK_COLUMNS``), in one read of ``view``
    for every hit of every query: the searches fetch only ids and scores, and a row retrieved
    by many queries (or by both sides of a hybrid search) is read once."""
    wanted = {int(h.row[_ROW_ID]) for hits in found for h in hits if _ROW_ID in h.row}
    if not wanted:
        return found
    rows = {int(row.pop(_ROW_ID)): row for row in _read_rows(view, wanted, list(CHUNK_COLUMNS)).to_pylist()}
    out = []
    for hits in found:
        done = []
        for hit in hits:
            row = rows.get(int(hit.row[_ROW_ID])) if _ROW_ID in hit.row else hit.row
            if row is None or row["chunk_id"] != hit.chunk_id:
                raise StoreError(
                    f"the index row of chunk {hit.chunk_id} could not be read back at this version; "
                    "`ragtt verify` checks the index files"
                )
            done.append(Hit(dict(row), hit.score, hit.scores))
        out.append(done)
    return out


def _fuse(vector_hits: list[Hit], bm25_hits: list[Hit], alpha: float) -> list[Hit]:
    """Weighted reciprocal-rank fusion: alpha weighs the vector side, 1 - alpha the BM25 side."""
    fused: dict[str, Hit] = {}
    for weight, hits in ((alpha, vector_hits), (1.0 - alpha, bm25_hits)):
        for rank, hit in enumerate(hits, start=1):
            entry = fused.setdefault(hit.chunk_id, Hit(hit.row, 0.0, {}))
            entry.scores.update(hit.scores)
            entry.score += weight / (RRF_K + rank)
    for hit in fused.values():
        hit.scores["fused"] = hit.score
    return _ordered(list(fused.values()))


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())


def lexical_overlap(query: str, text: str) -> float:
    """Fraction of the query's distinct tokens that occur in ``text`` (0..1)."""
    wanted = set(tokens(query))
    if not wanted:
        return 0.0
    return len(wanted & set(tokens(text))) / len(wanted)
