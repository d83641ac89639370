"""Checks that need the database, and the inserts: run inside the caller's write transaction.

Every check of a batch runs before the first insert and all failures are reported
together. Supersession is checked in batch order, so one batch may hold a chain, and
the predecessor's close is conditional (``valid_until IS NULL OR = the successor's
start``) so a concurrent writer can never overwrite a window another one closed.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragtt._hashing import stable_json
from ragtt.errors import NotFoundError, SupersessionError, ValidationError
from ragtt.temporal.models import Assertion, Citation, Episode, Link, MissingExcerptWarning
from ragtt.temporal.rows import ASSERTION_COLUMNS, chunks, quoted

__all__ = ["VectorRow", "close_assertion", "insert_assertions", "insert_citations", "insert_episodes", "insert_link"]

# (seq, valid_from, valid_until, confidence, type, entity_type): what vec0 keeps beside a vector
VectorRow = tuple[int, float, float | None, float, str, str | None]


@dataclass
class _Window:
    namespace: str
    valid_from: float
    valid_until: float | None


def _existing(conn: Any, table: str, key: str, values: Sequence[str], columns: str = "1") -> dict[str, Any]:
    """``{key: (columns...)}`` for the rows of ``table`` whose ``key`` is among ``values``."""
    found: dict[str, Any] = {}
    for part in chunks(list(dict.fromkeys(values))):
        marks = ",".join("?" * len(part))
        for row in conn.execute(f"SELECT {key}, {columns} FROM {table} WHERE {key} IN ({marks})", list(part)):
            found[row[0]] = row[1:]
    return found


def _duplicates(ids: Sequence[str]) -> set[str]:
    seen: set[str] = set()
    return {i for i in ids if i in seen or seen.add(i)}  # type: ignore[func-returns-value]


def _check_extensions(errors: list[str], what: str, values: Mapping[str, Any] | None, known: Collection[str]) -> None:
    unknown = sorted(set(values or {}) - set(known))
    if unknown:
        errors.append(f"{what}: unknown extension columns {unknown}; known: {sorted(known)}")


def bump_change_seq(conn: Any, namespace: str) -> int:
    conn.execute("UPDATE namespaces SET change_seq = change_seq + 1 WHERE name = ?", (namespace,))
    return int(conn.execute("SELECT change_seq FROM namespaces WHERE name = ?", (namespace,)).fetchone()[0])


def insert_episodes(conn: Any, episodes: Sequence[Episode], ext_columns: Mapping[str, Any]) -> None:
    """Insert episodes; an extension column a record leaves out gets its declared default."""
    errors: list[str] = []
    ids = [e.id for e in episodes]
    for dup in sorted(_duplicates(ids)):
        errors.append(f"episode {dup!r} appears twice")
    for eid in sorted(_existing(conn, "episodes", "id", ids)):
        errors.append(f"episode {eid!r} already exists")
    namespaces = _existing(conn, "namespaces", "name", [e.namespace for e in episodes])
    for e in episodes:
        if e.namespace not in namespaces:
            errors.append(f"episode {e.id!r}: namespace {e.namespace!r} does not exist (init_namespace first)")
        _check_extensions(errors, f"episode {e.id!r}", e.extensions, ext_columns)
    if errors:
        raise ValidationError("cannot write episodes: " + "; ".join(errors), errors)
    cols = ["id", "namespace", "position", "occurred_at", "type", "content", "metadata", *map(quoted, ext_columns)]
    conn.executemany(
        f"INSERT INTO episodes ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
        [
            (
                e.id,
                e.namespace,
                e.position,
                e.occurred_at,
                e.type,
                e.content,
                None if e.metadata is None else stable_json(e.metadata),
                *((e.extensions or {}).get(c, default) for c, default in ext_columns.items()),
            )
            for e in episodes
        ],
    )


def _check_citations(
    conn: Any, errors: list[str], pairs: Sequence[tuple[str, Citation]], owner_namespaces: Mapping[str, str]
) -> None:
    """Citations must be new and cite an episode of their assertion's own namespace: provenance
    never crosses a namespace (one tenant's claim cannot rest on another tenant's episode)."""
    ids = [c.id for _, c in pairs]
    for dup in sorted(_duplicates(ids)):
        errors.append(f"citation {dup!r} appears twice")
    for cid in sorted(_existing(conn, "citations", "id", ids)):
        errors.append(f"citation {cid!r} already exists")
    episodes = _existing(conn, "episodes", "id", [c.episode_id for _, c in pairs], "namespace")
    for owner, c in pairs:
        if c.episode_id not in episodes:
            errors.append(f"citation {c.id!r} of {owner!r}: episode {c.episode_id!r} does not exist")
        elif owner in owner_namespaces and episodes[c.episode_id][0] != owner_namespaces[owner]:
            errors.append(
                f"citation {c.id!r} of {owner!r}: episode {c.episode_id!r} is in namespace "
                f"{episodes[c.episode_id][0]!r}, but the assertion is in namespace {owner_namespaces[owner]!r}; "
                "cite an episode of the assertion's own namespace"
            )


def insert_citations(conn: Any, pairs: Sequence[tuple[str, Citation]], *, checked: bool = False) -> None:
    """Insert (assertion_id, citation) pairs; warn once when some quote no excerpt."""
    if not checked:
        errors: list[str] = []
        owners = {
            aid: row[0] for aid, row in _existing(conn, "assertions", "id", [a for a, _ in pairs], "namespace").items()
        }
        _check_citations(conn, errors, pairs, owners)
        if errors:
            raise ValidationError("cannot write citations: " + "; ".join(errors), errors)
    conn.executemany(
        "INSERT INTO citations VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                c.id,
                aid,
                c.episode_id,
                c.source_ref,
                c.excerpt,
                c.excerpt_start,
                c.excerpt_end,
                None if c.metadata is None else stable_json(c.metadata),
            )
            for aid, c in pairs
        ],
    )
    bare = [c.id for _, c in pairs if not c.excerpt]
    if bare:
        warnings.warn(
            f"{len(bare)} citation(s) without an excerpt ({', '.join(bare[:3])}{'...' if len(bare) > 3 else ''}):"
            " a claim is easier to check when its citation quotes the source",
            MissingExcerptWarning,
            stacklevel=4,
        )


def _check_supersession(conn: Any, assertions: Sequence[Assertion]) -> tuple[list[str], dict[str, float]]:
    """Supersession refusals, and the close position of each predecessor (batch or stored)."""
    errors: list[str] = []
    closes: dict[str, float] = {}
    wanted = [a.supersedes_id for a in assertions if a.supersedes_id]
    if not wanted:
        return errors, closes
    stored = {
        aid: _Window(*row)
        for aid, row in _existing(conn, "assertions", "id", wanted, "namespace, valid_from, valid_until").items()
    }
    taken = set(_existing(conn, "assertions", "supersedes_id", wanted))
    batch: dict[str, _Window] = {}
    for a in assertions:
        sid = a.supersedes_id
        if sid:
            pred = batch.get(sid) or stored.get(sid)
            what = f"{a.id!r} cannot supersede {sid!r}"
            if pred is None:
                errors.append(f"{what}: it does not exist")
            elif pred.namespace != a.namespace:
                errors.append(f"{what}: it is in namespace {pred.namespace!r}, not {a.namespace!r}")
            elif a.valid_from <= pred.valid_from:
                errors.append(
                    f"{what}: the successor must start after {pred.valid_from:g}; it starts at {a.valid_from:g}"
                )
            elif pred.valid_until is not None and pred.valid_until != a.valid_from:
                errors.append(
                    f"{what}: it was closed at {pred.valid_until:g}, and only an open assertion "
                    f"(or one closed at exactly {a.valid_from:g}) can be superseded"
                )
            elif sid in taken:
                errors.append(f"{what}: another assertion already supersedes it")
            else:
                taken.add(sid)
                closes[sid] = a.valid_from
                pred.valid_until = a.valid_from
        batch[a.id] = _Window(a.namespace, a.valid_from, a.valid_until)
    return errors, closes


def insert_assertions(
    conn: Any, assertions: Sequence[Assertion], ext_columns: Mapping[str, Any], change_seq: int
) -> tuple[list[VectorRow], list[tuple[str, float]]]:
    """Insert a batch and close its predecessors; returns the vector rows and the stored closes."""
    errors: list[str] = []
    ids = [a.id for a in assertions]
    for dup in sorted(_duplicates(ids)):
        errors.append(f"assertion {dup!r} appears twice in the batch")
    for aid in sorted(_existing(conn, "assertions", "id", ids)):
        errors.append(f"assertion {aid!r} already exists")
    episodes = {
        eid: row[0]
        for eid, row in _existing(
            conn, "episodes", "id", [a.source_episode_id for a in assertions], "namespace"
        ).items()
    }
    namespaces = _existing(conn, "namespaces", "name", [a.namespace for a in assertions])
    for a in assertions:
        if a.namespace not in namespaces:
            errors.append(f"assertion {a.id!r}: namespace {a.namespace!r} does not exist (init_namespace first)")
        if a.source_episode_id not in episodes:
            errors.append(f"assertion {a.id!r}: source episode {a.source_episode_id!r} does not exist")
        elif episodes[a.source_episode_id] != a.namespace:
            errors.append(
                f"assertion {a.id!r}: source episode {a.source_episode_id!r} is in namespace "
                f"{episodes[a.source_episode_id]!r}, not {a.namespace!r}"
            )
        _check_extensions(errors, f"assertion {a.id!r}", a.extensions, ext_columns)
    pairs = [(a.id, c) for a in assertions for c in a.citations]
    _check_citations(conn, errors, pairs, {a.id: a.namespace for a in assertions})
    sup_errors, closes = _check_supersession(conn, assertions)
    if errors or sup_errors:
        cls = SupersessionError if sup_errors and not errors else ValidationError
        everything = errors + sup_errors
        raise cls(f"cannot write {len(assertions)} assertion(s): " + "; ".join(everything), everything)

    in_batch = set(ids)
    stored_closes = [(sid, pos) for sid, pos in closes.items() if sid not in in_batch]
    for sid, pos in stored_closes:
        cur = conn.execute(
            "UPDATE assertions SET valid_until = ?, change_seq = ? "
            "WHERE id = ? AND (valid_until IS NULL OR valid_until = ?)",
            (pos, change_seq, sid, pos),
        )
        if cur.rowcount != 1:  # only reachable when another writer changed it under our lock: never silently
            raise SupersessionError(f"predecessor {sid!r} changed while it was being superseded")
    seq = int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM assertions").fetchone()[0])
    now = time.time()
    cols = [*ASSERTION_COLUMNS, "change_seq", "created_at", *map(quoted, ext_columns)]
    rows = []
    vector_rows: list[VectorRow] = []
    for offset, a in enumerate(assertions):
        until = closes.get(a.id, a.valid_until)
        rows.append(
            (
                a.id,
                a.namespace,
                a.type,
                a.content,
                a.valid_from,
                until,
                a.confidence,
                a.source_episode_id,
                a.supersedes_id,
                a.entity_id,
                a.entity_type,
                None if a.metadata is None else stable_json(a.metadata),
                change_seq,
                now,
                *((a.extensions or {}).get(c, default) for c, default in ext_columns.items()),
            )
        )
        vector_rows.append((seq + offset + 1, a.valid_from, until, a.confidence, a.type, a.entity_type))
    conn.executemany(f"INSERT INTO assertions ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", rows)
    # the batch's full text in one statement: its rows are the ones past the old maximum seq
    conn.execute("INSERT INTO assertions_fts(rowid, content) SELECT seq, content FROM assertions WHERE seq > ?", (seq,))
    last = conn.execute("SELECT seq FROM assertions WHERE id = ?", (ids[-1],)).fetchone()[0]
    if last != seq + len(assertions):  # rowids are max+1 under our write lock; check rather than trust
        found = {aid: row[0] for aid, row in _existing(conn, "assertions", "id", ids, "seq").items()}
        vector_rows = [(found[a.id], *row[1:]) for a, row in zip(assertions, vector_rows, strict=True)]
    insert_citations(conn, pairs, checked=True)
    return vector_rows, stored_closes


def close_assertion(conn: Any, assertion_id: str, valid_until: float, change_seq: int) -> tuple[int, str]:
    """Close an open assertion at ``valid_until``; returns (seq, namespace)."""
    row = conn.execute(
        "SELECT seq, namespace, valid_from, valid_until FROM assertions WHERE id = ?", (assertion_id,)
    ).fetchone()
    if row is None:
        raise NotFoundError(f"assertion {assertion_id!r} does not exist")
    seq, ns, vf, vu = row
    if vu is not None:
        raise ValidationError(f"assertion {assertion_id!r} is already closed at {vu:g}")
    if valid_until <= vf:
        raise ValidationError(f"valid_until ({valid_until:g}) must be after valid_from ({vf:g}) of {assertion_id!r}")
    conn.execute("UPDATE assertions SET valid_until = ?, change_seq = ? WHERE seq = ?", (valid_until, change_seq, seq))
    return int(seq), str(ns)


def insert_link(conn: Any, link: Link, *, allow_cross_namespace: bool) -> None:
    errors: list[str] = []
    if conn.execute("SELECT 1 FROM links WHERE id = ?", (link.id,)).fetchone():
        errors.append(f"link {link.id!r} already exists")
    if not conn.execute("SELECT 1 FROM namespaces WHERE name = ?", (link.namespace,)).fetchone():
        errors.append(f"namespace {link.namespace!r} does not exist")
    ends = {
        aid: row[0] for aid, row in _existing(conn, "assertions", "id", [link.from_id, link.to_id], "namespace").items()
    }
    for end in (link.from_id, link.to_id):
        if end not in ends:
            errors.append(f"assertion {end!r} does not exist")
        elif ends[end] != link.namespace and not allow_cross_namespace:
            errors.append(
                f"assertion {end!r} is in namespace {ends[end]!r}, not {link.namespace!r}; "
                "pass allow_cross_namespace=True to link across namespaces"
            )
    if errors:
        raise ValidationError(f"cannot write link {link.id!r}: " + "; ".join(errors), errors)
    conn.execute(
        "INSERT INTO links VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            link.id,
            link.namespace,
            link.from_id,
            link.to_id,
            link.link_type,
            link.valid_from,
            link.valid_until,
            None if link.metadata is None else stable_json(link.metadata),
        ),
    )
