"""The retrieval pipeline: middleware, query embedding, vector + full-text search at the
anchor, scoring, link expansion, trajectories, then middleware again.

Both sides filter by validity inside their search (the vector side in the vec0 KNN or in
the mask before the in-memory top-k, the full-text side in its SQL or, once the namespace's
matrix is up to date, on the matrix's arrays before its top-k), so claims valid at the
anchor are never crowded out by a global top-k of invalid ones. The candidates' filter
columns come from the matrix too, where it holds them.

With the matrix at hand the two sides run at once: the full-text side on the store's helper
thread, the vector side on the caller's (SQLite and ONNX Runtime both release the GIL; the
vector side does not touch the connection meanwhile, and the two write disjoint parts of
the matrix: its seq index, and its sealed segments).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from concurrent.futures import Future, wait
from typing import TYPE_CHECKING, Any

import numpy as np

from ragtt.errors import ValidationError
from ragtt.temporal.fts import match_expression
from ragtt.temporal.graph import linked_hits, neighbourhood
from ragtt.temporal.models import Assertion
from ragtt.temporal.results import RetrievalQuery, RetrievalResult, RetrievedAssertion
from ragtt.temporal.rows import chunks, load_assertions
from ragtt.temporal.scoring import Candidate, ScoringContext
from ragtt.temporal.vectors import VectorFilter, VectorMatrix, vec0_search

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ragtt.temporal.namespaces import NamespaceInfo
    from ragtt.temporal.store import AssertionStore

__all__ = ["retrieve", "supersession_chains"]

MAX_CHAIN = 10_000  # guards the predecessor walk against cycles written around the API
TEXT_OVERFETCH = 4  # full-text matches filtered on the matrix: TEXT_OVERFETCH * k + 64
LINK_DECAY = 0.5


def _before(chain: Sequence[Any], query: RetrievalQuery) -> RetrievalQuery:
    for mw in chain:
        hook = getattr(mw, "before", None)
        if hook is not None:
            changed = hook(query)
            if changed is not None:
                if not isinstance(changed, RetrievalQuery):
                    raise ValidationError(
                        f"middleware {mw!r}.before returned {type(changed).__name__}, not a RetrievalQuery"
                    )
                query = changed
    return query


def _after(chain: Sequence[Any], query: RetrievalQuery, result: RetrievalResult) -> RetrievalResult:
    for mw in reversed(chain):  # onion order: the first middleware sees the final result
        hook = getattr(mw, "after", None)
        if hook is not None:
            changed = hook(query, result)
            if changed is not None:
                result = changed
    return result


def _query_vector(
    store: AssertionStore, query: RetrievalQuery, info: NamespaceInfo, warnings: list[str]
) -> NDArray[np.float32] | None:
    """The normalised query vector, or None (with the reason in ``warnings``) for a hybrid query
    that falls back to full text; a ``vector`` query without one raises, never an empty result."""
    if query.strategy == "bm25":
        return None

    def skip(reason: str) -> None:
        if query.strategy == "vector":
            raise ValidationError(
                f"strategy 'vector' needs a query vector, but {reason}; pass query_embedding, open the store "
                "with an embedder of the namespace's dimension, or use strategy 'hybrid' or 'bm25'"
            )
        warnings.append(f"vector search skipped: {reason}; full-text only")

    if info.vectorless:
        skip(f"namespace {info.name!r} is vectorless")
        return None
    if not store.vector_enabled or info.vec_table is None:
        skip("sqlite-vec is not loaded")
        return None
    if query.query_embedding is not None:
        vector = query.query_embedding
        if vector.shape[0] != info.embedding_dimension:
            raise ValidationError(
                f"query_embedding has {vector.shape[0]} dimensions; namespace {info.name!r} "
                f"has {info.embedding_dimension}"
            )
    elif query.query_text:
        embedder, reason = store.namespaces.embedder_for(info)
        if embedder is None:
            skip(str(reason))
            return None
        embedded = embedder.embed([query.query_text])
        vector = np.asarray([] if embedded is None else embedded, dtype=np.float32).reshape(-1)
        if vector.shape[0] != info.embedding_dimension:
            # A broken embedder is an error whatever the strategy: falling back would answer
            # from full text alone (or with nothing) and never say why.
            raise ValidationError(
                f"the embedder {getattr(embedder, 'model_id', embedder)!r} returned "
                f"{'no vector' if embedded is None or vector.shape[0] == 0 else f'{vector.shape[0]} numbers'} "
                f"for the query {query.query_text!r}, not a {info.embedding_dimension}-dimension vector "
                f"(namespace {info.name!r}); fix the embedder, or pass query_embedding"
            )
    else:
        skip("the query has no query_text to embed")
        return None
    norm = float(np.linalg.norm(vector))
    if not np.isfinite(norm) or norm == 0.0:
        skip("the query vector is zero" if np.isfinite(norm) else "the query vector is not finite")
        return None
    return (vector / norm).astype(np.float32)


def _filter_sql(query: RetrievalQuery) -> tuple[list[str], list[Any]]:
    """The WHERE clauses (on ``assertions a``) and parameters of what the query admits."""
    where = ["a.namespace = ?", "a.valid_from <= ?"]
    params: list[Any] = [query.namespace, query.temporal_anchor]
    if not query.include_superseded:
        where.append("(a.valid_until IS NULL OR a.valid_until > ?)")
        params.append(query.temporal_anchor)
    if query.min_confidence is not None:
        where.append("a.confidence >= ?")
        params.append(query.min_confidence)
    for column, values in (("a.type", query.assertion_types), ("a.entity_type", query.entity_types)):
        if values is not None:
            where.append(f"{column} IN ({','.join('?' * len(values))})")
            params.extend(values)
    return where, params


def _vector_filter(query: RetrievalQuery) -> VectorFilter:
    return VectorFilter(
        query.temporal_anchor, query.include_superseded, query.min_confidence, query.assertion_types, query.entity_types
    )


def _text_hits(conn: Any, query: RetrievalQuery, k: int, matrix: VectorMatrix | None) -> list[tuple[int, float]]:
    """The full-text side's top ``k`` admitted rows by BM25: [(seq, score)], best first, ties by seq.

    With the namespace's matrix at hand the filter runs on its arrays: FTS5 ranks the
    matches alone, the best ``TEXT_OVERFETCH * k + 64`` of them are filtered on the matrix
    (the ones it does not hold are checked in SQL), and the first ``k`` admitted are the
    answer, exactly. Only when fewer than ``k`` of those are admitted and more matches exist
    does the join below run: it reads each match's row from ``assertions``, three times the
    cost of FTS5 alone. Of the matrix this writes only ``locate``'s cache, which the vector
    side's search never touches, so it may run while the matrix is searched.
    """
    assert query.query_text is not None  # the caller runs this side only for a query text
    expression = match_expression(query.query_text, query.query_text_mode)
    if expression is None:
        return []
    where, params = _filter_sql(query)
    admits = " AND ".join(where)
    if matrix is not None:
        fetch = TEXT_OVERFETCH * k + 64
        sql = (
            "SELECT rowid, -bm25(assertions_fts) AS s FROM assertions_fts WHERE assertions_fts MATCH ? "
            "ORDER BY s DESC, rowid LIMIT ?"
        )
        found = _fts(conn, query, sql, [expression, fetch])
        if not found:
            return []
        seqs = np.fromiter((row[0] for row in found), dtype=np.int64, count=len(found))
        scores = np.fromiter((row[1] for row in found), dtype=np.float64, count=len(found))
        ok, unknown = matrix.admitted(seqs, _vector_filter(query))
        for part in chunks(seqs[unknown].tolist()):
            sql = f"SELECT a.seq FROM assertions a WHERE a.seq IN ({','.join('?' * len(part))}) AND {admits}"
            ok |= np.isin(seqs, [seq for (seq,) in conn.execute(sql, [*part, *params])])
        if np.count_nonzero(ok) >= k or len(found) < fetch:  # already in (score, seq) order: the first k admitted
            return list(zip(seqs[ok][:k].tolist(), scores[ok][:k].tolist(), strict=True))
    sql = (
        "SELECT a.seq, -bm25(assertions_fts) AS s FROM assertions_fts CROSS JOIN assertions a "
        f"ON a.seq = assertions_fts.rowid WHERE assertions_fts MATCH ? AND {admits} "
        "ORDER BY s DESC, a.seq LIMIT ?"
    )
    return [(int(seq), float(score)) for seq, score in _fts(conn, query, sql, [expression, *params, k])]


def _fts(conn: Any, query: RetrievalQuery, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    """Rows of a full-text ``sql``; an invalid FTS5 expression of the caller's is a ValidationError."""
    try:
        return conn.execute(sql, params).fetchall()
    except Exception as exc:
        if query.query_text_mode == "fts5" and type(exc).__name__ == "OperationalError":
            raise ValidationError(
                f"invalid FTS5 query {query.query_text!r}: {exc} (use query_text_mode='terms' for untrusted input)"
            ) from exc
        raise


def _vector_hits(
    conn: Any,
    info: NamespaceInfo,
    query: RetrievalQuery,
    vector: NDArray[np.float32],
    k: int,
    matrix: VectorMatrix | None,
) -> tuple[list[tuple[int, float]], str, int]:
    """The vector side's hits, the backend that found them, and how many rows it scored on
    4-bit codes; on ``matrix`` without touching ``conn``, else in sqlite-vec."""
    flt = _vector_filter(query)
    if matrix is not None:
        hits = matrix.search(vector, k, flt)
        return hits, "memory", matrix.quantized_rows
    assert info.vec_table is not None
    return vec0_search(conn, info.vec_table, vector, k, flt), "sqlite-vec", 0


def _light_rows(conn: Any, seqs: list[int], matrix: VectorMatrix | None) -> list[tuple[Any, ...]]:
    """(seq, id, valid_from, valid_until, confidence, type, entity_type) of each of ``seqs``."""
    rows, missing = matrix.light_rows(seqs) if matrix is not None else ([], seqs)
    for part in chunks(missing):
        rows += conn.execute(
            "SELECT seq, id, valid_from, valid_until, confidence, type, entity_type FROM assertions "
            f"WHERE seq IN ({','.join('?' * len(part))})",
            list(part),
        ).fetchall()
    return rows


def _settle(side: Future[Any]) -> None:
    """Wait until the helper's ``side`` is done or cancelled, through an interrupt too (raised
    once it is done): until then the connection is the helper's, and the read transaction
    must not end under it."""
    interrupted: BaseException | None = None
    while not side.done():
        try:
            wait([side])
        except BaseException as exc:  # a KeyboardInterrupt in the wait
            interrupted = exc
    if interrupted is not None:
        raise interrupted


def _ranked(hits: list[tuple[int, float]]) -> dict[int, tuple[float, int]]:
    """{seq: (value, competition rank)}, ranks 1, 2, 2, 4: equal evidence earns an equal rank,
    whatever the tie order."""
    out: dict[int, tuple[float, int]] = {}
    last, rank = None, 0
    for position, (seq, value) in enumerate(hits, 1):
        if value != last:
            last, rank = value, position
        out[seq] = (value, rank)
    return out


def supersession_chains(conn: Any, heads: list[Assertion], ext: list[str]) -> dict[str, list[Assertion]]:
    """Each head's predecessors, oldest first (empty when it replaced nothing)."""
    chains: dict[str, list[Assertion]] = {}
    for head in heads:
        ids: list[str] = []
        seen = {head.id}
        current = head.supersedes_id
        while current and current not in seen and len(ids) < MAX_CHAIN:
            ids.append(current)
            seen.add(current)
            row = conn.execute("SELECT supersedes_id FROM assertions WHERE id = ?", (current,)).fetchone()
            current = row[0] if row else None
        loaded = load_assertions(conn, ids, ext) if ids else {}
        chains[head.id] = [loaded[i] for i in reversed(ids) if i in loaded]
    return chains


def retrieve(store: AssertionStore, query: RetrievalQuery, middleware: Sequence[Any] = ()) -> RetrievalResult:
    """``middleware`` runs inside the store's own: global before, per-call before, the core,
    per-call after (in reverse), global after (in reverse)."""
    started = time.perf_counter()
    if not isinstance(query, RetrievalQuery):
        raise ValidationError(f"retrieve() takes a RetrievalQuery; got {type(query).__name__}")
    if isinstance(middleware, str | bytes) or not isinstance(middleware, Sequence | tuple | list):
        raise ValidationError(f"middleware must be a list of objects with before/after hooks; got {middleware!r}")
    chain = (*store.middleware, *middleware)
    query = _before(chain, query)
    if query.query_text is None and query.query_embedding is None:
        raise ValidationError(
            "a RetrievalQuery needs query_text or query_embedding (use snapshot() to list "
            "everything valid at a position)"
        )
    warnings: list[str] = []
    vector = _query_vector(store, query, store.namespaces.info(query.namespace), warnings)
    k = query.candidate_limit or max(50, 5 * query.limit)
    ext = store.internals.columns("assertions")
    with store.internals.read() as conn:
        info = store.namespaces.info(query.namespace, conn=conn)
        matrix = store.namespaces.matrix(conn, info) if vector is not None else None
        text_side = query.strategy != "vector" and query.query_text is not None
        text = (
            store.internals.alongside(_text_hits, conn, query, k, matrix) if text_side and matrix is not None else None
        )
        try:
            vector_hits, backend, quantized = (
                _vector_hits(conn, info, query, vector, k, matrix) if vector is not None else ([], None, 0)
            )
        except BaseException:
            if text is not None:
                text.cancel()  # when not started yet, it never will be
            raise
        finally:
            if text is not None:
                _settle(text)
        if text is not None:
            text_hits: list[tuple[int, float]] | None = text.result()
        else:
            text_hits = _text_hits(conn, query, k, matrix) if text_side else None
        by_vector, by_text = _ranked(vector_hits), _ranked(text_hits or [])
        missed = (None, None)
        # score on the filter columns only; full records (with citations) are loaded for the winners
        candidates = [
            Candidate(*row[1:], *by_vector.get(row[0], missed), *by_text.get(row[0], missed))
            for row in _light_rows(conn, list(by_vector | by_text), matrix)
        ]
        # two subqueries, so each is one probe of the (namespace, valid_from) index: SQLite
        # answers MIN and MAX together only by scanning the namespace
        bounds = conn.execute(
            "SELECT (SELECT MIN(valid_from) FROM assertions WHERE namespace = ?), "
            "(SELECT MAX(valid_from) FROM assertions WHERE namespace = ?)",
            (query.namespace, query.namespace),
        ).fetchone()
        context = ScoringContext(
            query.namespace,
            query.temporal_anchor,
            query.query_text,
            query.strategy,
            None if bounds[0] is None else (float(bounds[0]), float(bounds[1])),
        )
        scores = _checked_scores(store.scorer, candidates, context)
        explain = getattr(store.scorer, "explain_batch", None)
        extra = explain(candidates, context) if explain and candidates else [{} for _ in candidates]
        ranked = sorted(zip(candidates, scores, extra, strict=True), key=lambda t: (-t[1], t[0].id))
        by_id = load_assertions(conn, [c.id for c, _, _ in ranked[: query.limit]], ext)
        results = []
        for cand, score, parts in ranked[: query.limit]:
            components = {
                name: value
                for name, value in (
                    ("vector_similarity", cand.vector_similarity),
                    ("vector_rank", cand.vector_rank),
                    ("bm25", cand.bm25),
                    ("bm25_rank", cand.bm25_rank),
                )
                if value is not None
            }
            components.update(parts)
            components["score"] = float(score)
            results.append(RetrievedAssertion.build(by_id[cand.id], float(score), components))
        if query.expand_links and results:
            results += _expanded(store, conn, query, results)
        if query.mode == "trajectory":
            chains = supersession_chains(conn, [r.assertion for r in results], ext)
            results = [dataclasses.replace(r, supersession_chain=chains[r.id]) for r in results]
    took = round((time.perf_counter() - started) * 1000, 3)
    meta = {
        "namespace": query.namespace,
        "anchor": query.temporal_anchor,
        "limit": query.limit,
        "candidate_count": len(candidates),
        "strategy": query.strategy,
        "vector_applied": vector is not None,
        "bm25_applied": text_hits is not None,
        "vector_backend": backend,
        "vector_quantized_rows": quantized,
        "query_text_mode": query.query_text_mode,
        "mode": query.mode,
        "took_ms": took,
        "warnings": warnings,
    }
    store.internals.emit("retrieve.took_ms", took, namespace=query.namespace, strategy=query.strategy)
    return _after(chain, query, RetrievalResult(results, meta))


def _checked_scores(scorer: Any, candidates: list[Candidate], context: ScoringContext) -> list[float]:
    """The scorer's scores, refused when there are not one per candidate or one is not finite:
    a NaN sorts anywhere and would silently scramble the ranking."""
    if not candidates:
        return []
    scores = list(scorer.score_batch(candidates, context))
    if len(scores) != len(candidates):
        raise ValidationError(
            f"scorer {scorer!r} returned {len(scores)} scores for {len(candidates)} candidates; "
            "score_batch must return one score per candidate, in order"
        )
    try:
        values = [float(v) for v in scores]
    except (TypeError, ValueError):
        raise ValidationError(
            f"scorer {scorer!r} returned a score that is not a number; score_batch must return finite floats"
        ) from None
    bad = [(c.id, v) for c, v in zip(candidates, values, strict=True) if not math.isfinite(v)]
    if bad:
        raise ValidationError(
            f"scorer {scorer!r} returned {len(bad)} non-finite score(s) (first: {bad[0][1]!r} for "
            f"{bad[0][0]!r}); score_batch must return finite floats"
        )
    return values


def _expanded(
    store: AssertionStore, conn: Any, query: RetrievalQuery, results: list[RetrievedAssertion]
) -> list[RetrievedAssertion]:
    """Assertions linked to the results (valid links, valid at the anchor), after them, decayed."""
    have = {r.id for r in results}
    found = neighbourhood(
        conn, query.namespace, [r.id for r in results], query.temporal_anchor, query.max_depth or 1, None, "both"
    )
    hit_links = linked_hits(conn, query.namespace, [r.id for r in results], query.temporal_anchor)
    for i, r in enumerate(results):  # a hit linked to other hits names the best-ranked of them
        if r.id in hit_links:
            results[i] = dataclasses.replace(r, link_depth=1, linked_from=hit_links[r.id])
    loaded = load_assertions(
        conn, [aid for aid, _, _ in found if aid not in have], store.internals.columns("assertions")
    )
    score_of = {r.id: r.score for r in results}
    out = []
    for aid, depth, path in found:
        if aid in have or aid not in loaded:
            continue
        origin = path[0].from_id if path[0].from_id in score_of else path[0].to_id
        score = score_of.get(origin, 0.0) * LINK_DECAY**depth
        out.append(
            RetrievedAssertion.build(
                loaded[aid],
                score,
                {"link_decay": LINK_DECAY**depth, "score": score},
                link_depth=depth,
                linked_from=origin,
            )
        )
        have.add(aid)
    return out
