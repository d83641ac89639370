"""Rows to records: batched loading of assertions (with citations), episodes and links."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from ragtt.temporal.models import Assertion, Citation, Episode, Link, stored

__all__ = ["ASSERTION_COLUMNS", "load_assertions", "load_episode", "quoted", "row_to_link"]

ASSERTION_COLUMNS = (
    "id",
    "namespace",
    "type",
    "content",
    "valid_from",
    "valid_until",
    "confidence",
    "source_episode_id",
    "supersedes_id",
    "entity_id",
    "entity_type",
    "metadata",
)
LINK_COLUMNS = "id, namespace, from_id, to_id, link_type, valid_from, valid_until, metadata"
_CHUNK = 500


def _json(value: str | None) -> Any:
    return None if value is None else json.loads(value)


def chunks(values: Sequence[Any], size: int = _CHUNK) -> Iterable[Sequence[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def quoted(identifier: str) -> str:
    """An extension identifier (already checked against ``schema.IDENTIFIER``) quoted for SQL, so
    names that are SQL keywords (``order``, ``select``) work like any other."""
    return f'"{identifier}"'


def load_assertions(
    conn: Any, keys: Sequence[str] | Sequence[int], ext_columns: Sequence[str] = (), *, by: str = "id"
) -> dict[Any, Assertion]:
    """Assertions keyed by ``id`` (or by ``seq`` with ``by="seq"``), citations included."""
    columns = ", ".join(("seq", *ASSERTION_COLUMNS, *map(quoted, ext_columns)))
    rows: list[Any] = []
    for part in chunks(list(dict.fromkeys(keys))):
        rows += conn.execute(
            f"SELECT {columns} FROM assertions WHERE {by} IN ({','.join('?' * len(part))})", list(part)
        ).fetchall()
    citations: dict[str, list[Citation]] = {}
    ids = [row[1] for row in rows]
    for part in chunks(ids):
        for cid, aid, episode_id, ref, excerpt, start, end, meta in conn.execute(
            "SELECT id, assertion_id, episode_id, source_ref, excerpt, excerpt_start, excerpt_end, metadata "
            f"FROM citations WHERE assertion_id IN ({','.join('?' * len(part))}) ORDER BY id",
            list(part),
        ):
            citation = stored(
                Citation,
                id=cid,
                episode_id=episode_id,
                source_ref=ref,
                excerpt=excerpt,
                excerpt_start=start,
                excerpt_end=end,
                metadata=_json(meta),
            )
            citations.setdefault(aid, []).append(citation)
    out: dict[Any, Assertion] = {}
    width = len(ASSERTION_COLUMNS) + 1
    for row in rows:
        (seq, aid, ns, typ, content, vf, vu, conf, episode, sup, eid, etype, meta) = row[:width]
        extensions = dict(zip(ext_columns, row[width:], strict=True)) if ext_columns else None
        assertion = stored(
            Assertion,
            id=aid,
            namespace=ns,
            type=typ,
            content=content,
            valid_from=vf,
            confidence=conf,
            source_episode_id=episode,
            citations=tuple(citations.get(aid, ())),
            valid_until=vu,
            supersedes_id=sup,
            entity_id=eid,
            entity_type=etype,
            metadata=_json(meta),
            extensions=extensions,
        )
        out[seq if by == "seq" else aid] = assertion
    return out


def load_episode(conn: Any, episode_id: str, ext_columns: Sequence[str] = ()) -> Episode | None:
    columns = ", ".join(
        ("id", "namespace", "position", "occurred_at", "type", "content", "metadata", *map(quoted, ext_columns))
    )
    row = conn.execute(f"SELECT {columns} FROM episodes WHERE id = ?", (episode_id,)).fetchone()
    if row is None:
        return None
    extensions = dict(zip(ext_columns, row[7:], strict=True)) if ext_columns else None
    return Episode(row[0], row[1], row[2], row[3], row[4], row[5], _json(row[6]), extensions)


def row_to_link(row: Sequence[Any]) -> Link:
    return Link(row[0], row[1], row[2], row[3], row[4], row[5], row[6], _json(row[7]))
