"""``proj.verify()``: re-walk the history and check that the stores agree with it.

Checks that SQLite finds every SQLite file of the project whole (``quick_check``;
``integrity_check`` when ``deep``); that the hash chain is intact; that the history guards
are in place; that every version the log names exists in the table and none is unlogged;
that every tag has its snapshot event and every snapshot event its tag; that every document
indexed at the latest version has its text, matching the hash its ingest logged; that no
write is left half done; and that every file a retained version reads is the one the log
recorded when the version was written: there, with its size (and, when ``deep``, its
SHA-256). A damaged or missing file is a problem line naming it, the versions that read it
and the logged queries that searched them.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ragtt._hashing import sha256_hex
from ragtt._html import STYLE, esc
from ragtt.damage import named_damage
from ragtt.events import probe
from ragtt.events import types as ev
from ragtt.index.files import FileRecord
from ragtt.index.snapshots import snapshot_events as live_snapshot_events
from ragtt.index.table import tracked_paths, versions_reading
from ragtt.results import Result

if TYPE_CHECKING:
    from ragtt.context import Context
    from ragtt.events.base import EventLog

__all__ = ["VerifyReport", "as_finding", "recorded_files", "verify"]

_GUARDS = list(probe.EVENT_LOG_GUARDS)
# damage raised while reading sends the reader to `ragtt verify`: in verify's own report, circular
_SEND_TO_VERIFY = re.compile(r";? \(?`ragtt verify` lists what is affected\)?")
_QUERIES_NAMED = 5  # query ids a problem line names before it counts the rest


@dataclass(frozen=True)
class VerifyReport(Result):
    ok: bool
    problems: list[str] = field(default_factory=list)
    events_checked: int = 0
    versions_checked: int = 0
    documents_checked: int = 0
    files_checked: int = 0  # index files of the retained versions
    files_adopted: int = 0  # of which recorded at a first open, not when written: "adopted, not proven"
    deep: bool = False  # whether every file was hashed, and SQLite ran integrity_check

    def to_text(self) -> str:
        how = "hashed" if self.deep else "sizes checked"
        adopted = f", {self.files_adopted} adopted, not proven" if self.files_adopted else ""
        head = (
            f"verify{' --deep' if self.deep else ''}: {'ok' if self.ok else f'{len(self.problems)} problem(s)'}: "
            f"{self.events_checked} events, {self.versions_checked} versions, {self.documents_checked} documents, "
            f"{self.files_checked} index files ({how}{adopted})"
        )
        return "\n".join([head, *(f"  {p}" for p in self.problems)])

    def __repr__(self) -> str:
        return f"VerifyReport({self.to_text()})"

    def _repr_html_(self) -> str:
        items = "".join(f"<li>{esc(p)}</li>" for p in self.problems)
        return (
            f"{STYLE}<div class='ragtt-r'><b>{'OK' if self.ok else 'PROBLEMS'}</b> "
            f"{esc(self.to_text().splitlines()[0])}<ul>{items}</ul></div>"
        )


def verify(ctx: Context, deep: bool = False) -> VerifyReport:
    problems: list[str] = []
    _check_sqlite_files(ctx, deep, problems)
    checked, rows, documents, files, adopted = 0, [], 0, 0, 0
    with _damage_as_problem(ctx, problems):
        checked, chain = ctx.log.verify_chain()
        problems += chain
    with _damage_as_problem(ctx, problems):
        rows = _check_log(ctx, problems)
    with _damage_as_problem(ctx, problems):
        files, adopted = _check_files(ctx, deep, problems)
    with _damage_as_problem(ctx, problems):
        logged = {v for v, _, _ in rows}
        latest = ctx.table.latest_version()
        documents = _check_documents(ctx, min(latest, max(logged, default=latest)), problems)
    return VerifyReport(not problems, problems, checked, len(rows), documents, files, adopted, deep)


@contextlib.contextmanager
def _damage_as_problem(ctx: Context, problems: list[str]) -> Iterator[None]:
    """A store that cannot be read for a check is the check's finding, named."""
    try:
        yield
    except Exception as exc:
        damage = named_damage(exc, ctx)
        if damage is None:
            raise
        if as_finding(damage) not in problems:
            problems.append(as_finding(damage))


def as_finding(damage: Exception) -> str:
    """Damage raised while reading, as a line of verify's report (without "run ragtt verify")."""
    return _SEND_TO_VERIFY.sub("", str(damage))


def _check_sqlite_files(ctx: Context, deep: bool, problems: list[str]) -> None:
    pragma = "integrity_check" if deep else "quick_check"
    found = [("the event log", str(ctx.log.file or ctx.log.location), ctx.log.integrity_problems(deep))]
    for what, path in (("the assertion store", ctx.path / "assertions.db"), ("the embedding cache", ctx.cache.path)):
        if path is not None and Path(path).exists():
            found.append((what, str(path), probe.integrity_problems(Path(path), deep=deep)))
    for what, where, damage in found:
        if damage:
            fix = (
                "it is only a cache: delete it and ragtt embeds again"
                if what == "the embedding cache"
                else "restore it from a backup of the project folder"
            )
            problems.append(f"{what} {where}: SQLite's {pragma} finds it damaged ({damage[0]}); {fix}")


def _check_log(ctx: Context, problems: list[str]) -> list[tuple[int, str, str]]:
    log, table = ctx.log, ctx.table
    missing_guards = sorted(set(_GUARDS) - set(log.guards()))
    if missing_guards:
        problems.append(f"event log: history guards removed: {', '.join(missing_guards)}")
    for intent in log.intents.pending():
        problems.append(
            f"a {intent.operation} from {intent.created_at} is half done (open the project with write "
            "access to finish or roll it back)"
        )

    latest = table.latest_version()
    rows = log.versions.rows()
    logged = {v for v, _, _ in rows}
    for version in sorted(v for v in logged if v > latest):
        problems.append(f"index: version {version} is in the event log but not in the table")
    unlogged = [v for v in range(1, latest + 1) if v not in logged]
    if unlogged:
        problems.append(f"index: versions {_span(unlogged)} are in the table but not in the event log")
    named = _versions_named_by_events(ctx)
    for version, committed_at, operation in rows:
        if version not in named:
            problems.append(f"index: version {version} ({operation}, {committed_at}) is named by no event")

    tags = table.tags()
    snapshot_events = live_snapshot_events(ctx)  # a prune that dropped a snapshot took its tag
    for label, version in sorted(tags.items()):
        event = snapshot_events.get(label)
        if event is None:
            problems.append(f"snapshot {label!r}: the tag (v{version}) has no index.snapshot_taken event")
        elif event.index_version != version:
            problems.append(f"snapshot {label!r}: tagged v{version} but its event says v{event.index_version}")
    for label in sorted(set(snapshot_events) - set(tags)):
        problems.append(f"snapshot {label!r}: its event has no tag in the index")
    return rows


def recorded_files(log: EventLog, name: str) -> dict[str, tuple[FileRecord, bool]]:
    """Path -> (its record, whether it was adopted) of every file ``log`` recorded of the table ``name``."""
    found: dict[str, tuple[FileRecord, bool]] = {}
    for payload in log.payloads(ev.INDEX_FILES_RECORDED):  # payloads only: a verify reads thousands
        if payload.get("table", name) != name:
            continue
        adopted = bool(payload.get("adopted"))
        for row in payload.get("files", []):
            if row[0] not in found:
                found[row[0]] = (FileRecord.from_list(row), adopted)
    return found


def _check_files(ctx: Context, deep: bool, problems: list[str]) -> tuple[int, int]:
    """Every file a retained version reads: recorded, there, its size (deep: its SHA-256)."""
    table = ctx.table
    recorded = recorded_files(ctx.log, table.table_name)
    if not recorded:
        problems.append(
            f"index: the event log records none of the files of {table.where} (open the project with write "
            "access once to record them)"
        )
        return 0, 0
    # Deep: Lance's manifests are read once (every file a retained version reads, recorded or
    # not), and each file is hashed, its size coming with its digest. Not deep: every recorded
    # file is stat'ed, and the manifests are read only when one is gone, to tell a pruned file
    # from a lost one.
    rows = table.tracked_table() if deep else None
    names = sorted(tracked_paths(rows) if rows is not None else recorded)
    bad: dict[str, str] = {}
    if deep:
        # read from the store itself, never from the index cache's copies: a cached file's
        # checksum proves the cached copy, not the object in the bucket a fresh reader gets
        for name, got in zip(names, table.files().digests(names), strict=True):
            entry = recorded.get(name)
            if entry is None:
                bad[name] = "is not recorded in the event log (written outside ragtt?)"
            elif got is None:
                bad[name] = "is missing"
            elif got.size != entry[0].size:
                bad[name] = f"has changed: it is {got.size} bytes, recorded as {entry[0].size}"
            elif got.sha256 != entry[0].sha256:
                bad[name] = "has changed: its SHA-256 is not the one recorded when it was written"
    else:
        for name, size in table.files().sizes(names).items():
            if size is None:
                bad[name] = "is missing"
            elif size != recorded[name][0].size:
                bad[name] = f"has changed: it is {size} bytes, recorded as {recorded[name][0].size}"
        if bad:
            rows = table.tracked_table()
            retained = tracked_paths(rows)
            pruned = {n for n, what in bad.items() if n not in retained and what == "is missing"}  # none reads it
            names = [n for n in names if n not in pruned]
            bad = {n: what for n, what in bad.items() if n not in pruned}
    if bad:
        assert rows is not None
        # the log and the index are restored together: an older copy of the index alone lacks the
        # files of the versions after it
        fix = (
            "Restore the project from a backup (`ragtt restore` puts one back into a new database and bucket)"
            if "://" in table.where
            else "Restore the project folder from a backup"
        )
        tracked = versions_reading(rows, bad)
        searched = _queries_by_version(ctx)
        for name, what in bad.items():
            versions = sorted(tracked.get(name, ()))
            queries = sorted({q for v in versions for q in searched.get(v, ())})
            noun = "versions" if len(versions) > 1 else "version"
            line = f"index file {table.where}/{name} {what}; {noun} {_list(versions)} read it"
            if queries:
                more = f" and {len(queries) - _QUERIES_NAMED} more" if len(queries) > _QUERIES_NAMED else ""
                line += f"; logged queries that searched them: {', '.join(queries[:_QUERIES_NAMED])}{more}"
            problems.append(f"{line}. {fix}")
    adopted = sum(1 for n in names if n in recorded and recorded[n][1])
    return len(names), adopted


def _queries_by_version(ctx: Context) -> dict[int, list[str]]:
    found: dict[int, list[str]] = {}
    for e in ctx.log.query(types=[ev.RETRIEVAL_EXECUTED, ev.REPLAY_PREFIX + ev.RETRIEVAL_EXECUTED]):
        if e.index_version is not None and e.query_id is not None:
            found.setdefault(int(e.index_version), []).append(e.query_id)
    return found


def _list(versions: list[int]) -> str:
    if len(versions) > 1 and versions == list(range(versions[0], versions[-1] + 1)):
        return _span(versions)
    return ", ".join(map(str, versions[:10])) + (f" (and {len(versions) - 10} more)" if len(versions) > 10 else "")


def _versions_named_by_events(ctx: Context) -> set[int]:
    """Versions some event accounts for: a write's last event lists the versions it made
    (``versions``); logs written before that named one version per event."""
    named: set[int] = set()
    created = False
    for e in ctx.log.query(
        types=[
            ev.INGEST_COMPLETED,
            ev.DOCUMENT_REMOVED,
            ev.INDEX_OPTIMIZED,
            ev.INDEX_REEMBEDDED,
            ev.INDEX_CREATED,
            ev.INDEX_VECTOR_BUILT,
        ]
    ):
        named.update(int(v) for v in e.payload.get("versions", []))
        created |= e.type == ev.INDEX_CREATED
        if e.type != ev.INDEX_OPTIMIZED and e.index_version is not None:
            named.add(int(e.index_version))
    if not created:  # a project created before INDEX_CREATED existed
        named.update(v for v, _, op in ctx.log.versions.rows() if op == "create")
    return named


def _check_documents(ctx: Context, version: int, problems: list[str]) -> int:
    if version < 1:
        return 0
    keys = sorted(set(ctx.table.scan(version, ["doc_key"]).column("doc_key").to_pylist()))
    texts = ctx.log.documents.texts(keys)
    hashes: dict[str, str | None] = {}  # doc_key -> the text hash its ingest logged (None: logged before hashes)
    for e in ctx.log.query(types=ev.DOCUMENT_INGESTED):
        hashes[e.payload["doc_key"]] = e.payload.get("text_sha256")
    for key in keys:
        if key not in texts:
            problems.append(f"document {key}: indexed at v{version} but its text is missing from the event log")
        elif key not in hashes:
            problems.append(f"document {key}: indexed at v{version} but no document.ingested event produced it")
        elif hashes[key] is not None and sha256_hex(texts[key]) != hashes[key]:
            problems.append(f"document {key}: its stored text does not match the hash its ingest logged")
    return len(keys)


def _span(versions: list[int]) -> str:
    return f"{versions[0]}..{versions[-1]}" if len(versions) > 1 else str(versions[0])
