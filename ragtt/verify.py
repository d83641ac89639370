"""``proj.verify()``: re-walk the history and check that the stores agree with it.

Checks that the hash chain is intact; that the history guards are in place; that every
version the log names exists in the table and none is unlogged; that every tag has its
snapshot event and every snapshot event its tag; that every document indexed at the
latest version has its text, matching the hash its ingest logged; and that no write is
left half done.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ragtt._hashing import sha256_hex
from ragtt._html import STYLE, esc
from ragtt.events import types as ev
from ragtt.index.snapshots import snapshot_events as live_snapshot_events
from ragtt.results import Result

if TYPE_CHECKING:
    from ragtt.context import Context

__all__ = ["VerifyReport", "verify"]

_GUARDS = [
    f"{t}_no_{op}"
    for t in ("events", "documents", "document_text_parts", "index_versions")
    for op in ("update", "delete", "replace")
]


@dataclass(frozen=True)
class VerifyReport(Result):
    ok: bool
    problems: list[str] = field(default_factory=list)
    events_checked: int = 0
    versions_checked: int = 0
    documents_checked: int = 0

    def to_text(self) -> str:
        head = (
            f"verify: {'ok' if self.ok else f'{len(self.problems)} problem(s)'}: {self.events_checked} events, "
            f"{self.versions_checked} versions, {self.documents_checked} documents checked"
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


def verify(ctx: Context) -> VerifyReport:
    log, table = ctx.log, ctx.table
    checked, problems = log.verify_chain()
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

    documents = _check_documents(ctx, min(latest, max(logged, default=latest)), problems)
    return VerifyReport(not problems, problems, checked, len(rows), documents)


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
