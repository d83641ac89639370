"""Links between assertions: breadth-first traversal and shortest paths at a position.

A link counts only inside its own validity window, and a node only while its assertion is
valid, both at ``at`` (None: currently open). With ``include_superseded`` the walk is the
history up to ``at`` instead: every link and assertion that had started by then, whether or
not it has expired or been superseded since (None: all of them), as ``snapshot`` does.
Traversal stays in the start's namespace; a link reaches another namespace only when it
was written with ``allow_cross_namespace``.
Order is deterministic: by depth, then link type, then assertion id, then link id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragtt.errors import NotFoundError, ValidationError
from ragtt.temporal.models import Link, PositionLike, to_position
from ragtt.temporal.results import ConnectedAssertion
from ragtt.temporal.rows import LINK_COLUMNS, chunks, load_assertions, row_to_link

if TYPE_CHECKING:
    from ragtt.temporal.store import AssertionStore

__all__ = ["connected", "find_path", "linked_hits", "neighbourhood"]

DIRECTIONS = ("out", "in", "both")
Found = tuple[str, int, tuple[Link, ...]]


def _valid(alias: str, at: float | None, params: list[Any], include_superseded: bool = False) -> str:
    if include_superseded:
        if at is None:
            return "1"
        params.append(at)
        return f"{alias}.valid_from <= ?"
    if at is None:
        return f"{alias}.valid_until IS NULL"
    params += [at, at]
    return f"{alias}.valid_from <= ? AND ({alias}.valid_until IS NULL OR {alias}.valid_until > ?)"


def _edges(
    conn: Any,
    namespace: str,
    frontier: Sequence[str],
    at: float | None,
    link_types: Sequence[str] | None,
    direction: str,
    include_superseded: bool,
) -> dict[str, list[tuple[str, Link]]]:
    """``{node: [(neighbour, link), ...]}`` sorted by (link type, neighbour, link id)."""
    out: dict[str, list[tuple[str, Link]]] = {}
    sides = (
        [("from_id", "to_id")]
        if direction == "out"
        else [("to_id", "from_id")]
        if direction == "in"
        else [("from_id", "to_id"), ("to_id", "from_id")]
    )
    link_cols = ", ".join(f"l.{c.strip()}" for c in LINK_COLUMNS.split(","))
    for near, far in sides:
        for part in chunks(list(frontier)):
            params: list[Any] = [namespace, *part]
            where = ["l.namespace = ?", f"l.{near} IN ({','.join('?' * len(part))})"]
            where.append(_valid("l", at, params, include_superseded))
            where.append(_valid("a", at, params, include_superseded))
            if link_types is not None:
                where.append(f"l.link_type IN ({','.join('?' * len(link_types))})")
                params += list(link_types)
            sql = f"SELECT {link_cols} FROM links l JOIN assertions a ON a.id = l.{far} WHERE {' AND '.join(where)}"
            for row in conn.execute(sql, params):
                link = row_to_link(row)
                node, other = (link.from_id, link.to_id) if near == "from_id" else (link.to_id, link.from_id)
                out.setdefault(node, []).append((other, link))
    for edges in out.values():
        edges.sort(key=lambda e: (e[1].link_type, e[0], e[1].id))
    return out


def neighbourhood(
    conn: Any,
    namespace: str,
    starts: Sequence[str],
    at: float | None,
    max_depth: int,
    link_types: Sequence[str] | None,
    direction: str,
    include_superseded: bool = False,
) -> list[Found]:
    """Breadth-first from ``starts``: (assertion id, depth, links walked), starts excluded."""
    if direction not in DIRECTIONS:
        raise ValidationError(f"direction must be one of {DIRECTIONS}; got {direction!r}")
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0:
        raise ValidationError(f"max_depth must be a non-negative int; got {max_depth!r}")
    paths: dict[str, tuple[Link, ...]] = {s: () for s in starts}
    frontier = list(dict.fromkeys(starts))
    found: list[Found] = []
    for depth in range(1, max_depth + 1):
        if not frontier:
            break
        edges = _edges(conn, namespace, frontier, at, link_types, direction, include_superseded)
        nxt: list[str] = []
        for node in frontier:
            for other, link in edges.get(node, ()):
                if other in paths:
                    continue
                paths[other] = (*paths[node], link)
                found.append((other, depth, paths[other]))
                nxt.append(other)
        frontier = nxt
    return found


def linked_hits(conn: Any, namespace: str, ranked: Sequence[str], at: float | None) -> dict[str, str]:
    """``{hit: the best-ranked other hit linked to it}`` over links valid at ``at``, either direction."""
    rank = {aid: i for i, aid in enumerate(ranked)}
    edges = _edges(conn, namespace, list(rank), at, None, "both", False)
    out: dict[str, str] = {}
    for node, near in edges.items():
        others = [other for other, _ in near if other in rank and other != node]
        if others:
            out[node] = min(others, key=rank.__getitem__)
    return out


def _start(store: AssertionStore, conn: Any, assertion_id: str) -> str:
    row = conn.execute("SELECT namespace FROM assertions WHERE id = ?", (assertion_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"assertion {assertion_id!r} does not exist")
    return str(row[0])


def connected(
    store: AssertionStore,
    assertion_id: str,
    *,
    at: PositionLike | None,
    max_depth: int,
    link_types: Sequence[str] | None,
    direction: str,
    include_superseded: bool = False,
) -> list[ConnectedAssertion]:
    anchor = None if at is None else to_position(at, "at")
    with store.internals.read() as conn:
        namespace = _start(store, conn, assertion_id)
        found = neighbourhood(
            conn, namespace, [assertion_id], anchor, max_depth, link_types, direction, include_superseded
        )
        loaded = load_assertions(conn, [aid for aid, _, _ in found], store.internals.columns("assertions"))
    return [ConnectedAssertion(loaded[aid], depth, path) for aid, depth, path in found if aid in loaded]


def find_path(
    store: AssertionStore,
    from_id: str,
    to_id: str,
    *,
    at: PositionLike | None,
    max_depth: int,
    link_types: Sequence[str] | None,
    direction: str = "out",
    include_superseded: bool = False,
) -> list[Link] | None:
    anchor = None if at is None else to_position(at, "at")
    with store.internals.read() as conn:
        namespace = _start(store, conn, from_id)
        _start(store, conn, to_id)
        if from_id == to_id:
            return []
        for aid, _, path in neighbourhood(
            conn, namespace, [from_id], anchor, max_depth, link_types, direction, include_superseded
        ):
            if aid == to_id:
                return list(path)
    return None
