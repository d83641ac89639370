"""Polars frames over the store: a snapshot at a position, and an entity's history.

Columns are named as the fields (``id``, ``content``, ``valid_from``, ``valid_until``,
``entity_id``, ...); ``metadata`` is a JSON string column, extension columns follow.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragtt.temporal.models import PositionLike, to_position
from ragtt.temporal.rows import ASSERTION_COLUMNS, quoted

if TYPE_CHECKING:
    import polars as pl

    from ragtt.temporal.store import AssertionStore

__all__ = ["entity_history", "entity_trajectory", "snapshot"]

_TYPES = {
    "id": "str",
    "namespace": "str",
    "type": "str",
    "content": "str",
    "valid_from": "f64",
    "valid_until": "f64",
    "confidence": "f64",
    "source_episode_id": "str",
    "supersedes_id": "str",
    "superseded_by": "str",
    "entity_id": "str",
    "entity_type": "str",
    "metadata": "str",
    "citation_count": "i64",
}
_SELECT = (
    ", ".join(f"a.{c}" for c in ASSERTION_COLUMNS)
    + ", (SELECT s.id FROM assertions s WHERE s.supersedes_id = a.id) AS superseded_by"
    + ", (SELECT COUNT(*) FROM citations c WHERE c.assertion_id = a.id) AS citation_count"
)


def _frame(
    store: AssertionStore,
    sql: str,
    params: list[Any],
    extra: dict[str, str] | None = None,
) -> pl.DataFrame:
    import polars as pl

    dtypes = {"str": pl.String, "f64": pl.Float64, "i64": pl.Int64, "bool": pl.Boolean}
    ext = store.internals.columns("assertions")
    names = [*ASSERTION_COLUMNS, "superseded_by", "citation_count", *ext, *(extra or {})]
    schema: dict[str, Any] = {n: dtypes[_TYPES[n]] for n in (*ASSERTION_COLUMNS, "superseded_by", "citation_count")}
    with store.internals.read() as conn:
        rows = conn.execute(sql, params).fetchall()
        declared = {r[1]: r[2].upper() for r in conn.execute("PRAGMA table_info(assertions)")}
    for column in ext:
        kind = declared.get(column, "TEXT")
        schema[column] = pl.Int64 if kind == "INTEGER" else pl.Float64 if kind == "REAL" else pl.String
    for column, kind in (extra or {}).items():
        schema[column] = dtypes[kind]
    return pl.DataFrame(rows, schema={n: schema[n] for n in names}, orient="row")


def _filters(where: list[str], params: list[Any], column: str, values: Sequence[str] | None) -> None:
    if values is not None:
        items = [values] if isinstance(values, str) else list(values)
        where.append(f"{column} IN ({','.join('?' * len(items))})" if items else "0")
        params.extend(items)


def snapshot(
    store: AssertionStore,
    namespace: str,
    at_position: PositionLike,
    assertion_types: Sequence[str] | None,
    entity_types: Sequence[str] | None,
    include_superseded: bool,
) -> pl.DataFrame:
    at = to_position(at_position, "at_position")
    store.namespaces.info(namespace)
    where = ["a.namespace = ?", "a.valid_from <= ?"]
    params: list[Any] = [namespace, at]
    if not include_superseded:
        where.append("(a.valid_until IS NULL OR a.valid_until > ?)")
        params.append(at)
    _filters(where, params, "a.type", assertion_types)
    _filters(where, params, "a.entity_type", entity_types)
    ext = "".join(f", a.{quoted(c)}" for c in store.internals.columns("assertions"))
    sql = (
        f"SELECT {_SELECT}{ext}, (a.valid_until IS NULL OR a.valid_until > ?) AS valid_at_position "
        f"FROM assertions a WHERE {' AND '.join(where)} ORDER BY a.valid_from, a.id"
    )
    frame = _frame(store, sql, [at, *params], {"valid_at_position": "bool"})
    return frame


def entity_history(store: AssertionStore, namespace: str, entity_id: str) -> pl.DataFrame:
    store.namespaces.info(namespace)
    ext = "".join(f", a.{quoted(c)}" for c in store.internals.columns("assertions"))
    sql = (
        f"SELECT {_SELECT}{ext} FROM assertions a WHERE a.namespace = ? AND a.entity_id = ? ORDER BY a.valid_from, a.id"
    )
    return _frame(store, sql, [namespace, entity_id])


def entity_trajectory(store: AssertionStore, namespace: str, entity_id: str) -> pl.DataFrame:
    """Each supersession chain of the entity, oldest step first: ``chain`` numbers the chains,
    ``step`` counts from 0, ``previous_content`` is what the step replaced."""
    import polars as pl

    history = entity_history(store, namespace, entity_id)
    by_id = {row["id"]: row for row in history.iter_rows(named=True)}
    heads = [r for r in history.iter_rows(named=True) if r["supersedes_id"] not in by_id]
    rows: list[dict[str, Any]] = []
    for chain, head in enumerate(heads):
        step, previous, seen = 0, None, set()
        current: dict[str, Any] | None = head
        while current is not None and current["id"] not in seen:
            seen.add(current["id"])
            rows.append(
                {
                    **current,
                    "chain": chain,
                    "step": step,
                    "previous_content": None if previous is None else previous["content"],
                }
            )
            previous, step = current, step + 1
            nxt = current["superseded_by"]
            current = by_id.get(nxt) if nxt is not None else None
    schema: dict[str, Any] = {**history.schema, "chain": pl.Int64, "step": pl.Int64, "previous_content": pl.String}
    return pl.DataFrame(rows, schema=schema)
