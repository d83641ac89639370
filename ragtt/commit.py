"""The crash protocol: one write to two stores (the chunk table and the event log) that a
reader sees whole or not at all, whatever line the writer dies on.

A write runs these steps (docs/ARCHITECTURE.md has the argument in full):

1. **lock**: take the project's write lock (the event log's ``write_lock``); writers of one
   project are serialized, so every table version after a write's base is that write's.
2. **recover**: settle an intent a dead writer left (step 6).
3. **stage**: ONE log transaction stores the documents the write needs and an *intent*:
   the operation, the table version it starts from, the events it will log.
4. **table**: the LanceDB commit(s) (or the tag, for a snapshot).
5. **log**: ONE log transaction records the versions made, appends the events stamped
   with them, applies the settings the write changes, and removes the intent.
6. **recovery** reads the table alone: still at the intent's base (no tag for a
   snapshot) means step 4 never happened, and the intent is dropped; anything newer means
   step 4 did, and step 5 runs now with those versions (roll forward).

Readers see a version only once step 5 has recorded it (``Context.version`` reads the
log), so between 4 and 5 they keep seeing the state before the write.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ragtt._hashing import time_ordered_id
from ragtt.errors import ProjectDamagedError
from ragtt.events.store import Event
from ragtt.events.time import utc_now

if TYPE_CHECKING:
    from ragtt.context import Context
    from ragtt.events.base import EventLog
    from ragtt.events.documents import DocumentRow
    from ragtt.events.intents import Intent
    from ragtt.index.files import FileRecord
    from ragtt.index.table import ChunkTable

__all__ = ["Write", "files_event", "recover", "writing"]


@dataclass
class Write:
    """One write in progress, between ``writing()``'s lock and its release."""

    ctx: Context
    operation: str
    base: int
    intent: Intent | None = None
    versions: list[int] = field(default_factory=list)
    done: bool = False

    def stage(
        self,
        events: Sequence[Event],
        *,
        documents: Sequence[DocumentRow] = (),
        meta: dict[str, str] | None = None,
        tag: str | None = None,
        text_index: bool = False,
    ) -> None:
        """Step 3: the documents and the intent, in one transaction, before the table is touched.

        ``events`` with ``index_version=None`` are stamped with the write's last version;
        ``tag`` makes the tag's existence the table commit (snapshots); ``text_index`` says
        the write must end with the full-text index in place (a rewrite drops it).
        """
        from ragtt.events.intents import Intent

        log = self.ctx.log
        body = {
            "events": [_event_body(e) for e in events],
            "meta": meta or {},
            "tag": tag,
            "text_index": text_index,
            "table": self.ctx.table.table_name,
        }
        now = utc_now()
        intent_id = time_ordered_id()
        with log.transaction() as conn:
            log.documents.put(conn, documents)
            log.intents.add(conn, intent_id, self.operation, self.base, now, body)
        self.intent = Intent(intent_id, self.operation, self.base, "", body)

    def commit(self) -> list[int]:
        """Step 5: log the write; returns the versions it made."""
        assert self.intent is not None, "a write commits once, after stage()"
        self.versions = _complete(self.ctx.log, self.ctx.table, self.intent)
        self.done = True
        # Logged: the body (every event's payload, a big document's chunk ids) need not outlive
        # the write, and an ingest's caller holds its Write while the maintenance after it runs.
        self.intent = None
        return self.versions


@contextlib.contextmanager
def writing(ctx: Context, operation: str) -> Iterator[Write]:
    """Steps 1, 2 and the clean-up: a write whose body raised after its table commit is
    rolled forward now; one that raised before it is dropped."""
    with ctx.log.write_lock():
        recover(ctx.log, ctx.table)
        ctx.check_embedder()
        write = Write(ctx, operation, ctx.table.latest_version())
        try:
            yield write
        except BaseException:
            if write.intent is not None and not write.done:
                try:
                    _settle(ctx.log, ctx.table, write.intent)
                except Exception as exc:  # the next open or write settles it; never hide the first error
                    warnings.warn(
                        f"ragtt: could not settle the interrupted {operation} now ({exc}); it will be on the next open",
                        RuntimeWarning,
                        stacklevel=3,
                    )
            raise
        if write.intent is not None and not write.done:
            write.commit()


def recover(log: EventLog, table: ChunkTable) -> list[str]:
    """Settle every intent a dead writer left; the caller holds the write lock. Then the
    table and the log must agree on the newest version, or the project is damaged.

    Returns one line per intent settled (what recovery did), for reports and logs.
    """
    # Only this table's intents: a project may hold several tables, each with its own versions.
    mine = [i for i in log.intents.pending() if i.body.get("table", table.table_name) == table.table_name]
    done = [_settle(log, table, intent) for intent in mine]
    logged = log.versions.latest() or 0
    latest = table.latest_version()
    if logged > latest:
        raise ProjectDamagedError(
            f"the index {table.where} is at version {latest} but the event log records version {logged}: "
            "the table's newest manifests are missing. Restore the project folder from a backup"
        )
    if latest > logged:
        raise ProjectDamagedError(
            f"index versions {logged + 1}..{latest} of {table.where} are not in the event log (written "
            "outside ragtt?); ragtt will not write on top of history it cannot account for. `ragtt verify` "
            "lists the problems"
        )
    return done


def _settle(log: EventLog, table: ChunkTable, intent: Intent) -> str:
    forget = intent.body.get("forget")
    if forget is not None:
        # A deletion goes log first (retention): its log transaction already recorded what the
        # table loses, so the table part is only ever rolled forward, and it is idempotent.
        table.forget([int(v) for v in forget["versions"]], [str(t) for t in forget["tags"]])
        with log.transaction() as conn:
            log.intents.remove(conn, intent.intent_id)
        return f"completed an interrupted {intent.operation} ({len(forget['versions'])} versions deleted)"
    tag = intent.body.get("tag")
    # A snapshot's table commit is its tag; any other write's is a newer version.
    happened = tag in table.tags() if tag is not None else table.latest_version() > intent.base_version
    if not happened:
        with log.transaction() as conn:
            log.intents.remove(conn, intent.intent_id)
        return f"rolled back an interrupted {intent.operation} (the index was never changed)"
    if intent.body.get("text_index") and not table.has_text_index():
        table.create_text_index()
    versions = _complete(log, table, intent)
    return f"completed an interrupted {intent.operation} (versions {versions or 'unchanged'})"


def _complete(log: EventLog, table: ChunkTable, intent: Intent) -> list[int]:
    latest = table.latest_version()
    versions = list(range(intent.base_version + 1, latest + 1)) if intent.body.get("tag") is None else []
    last = versions[-1] if versions else intent.base_version
    now = utc_now()
    events = [_event_from_body(b, now, last) for b in intent.body["events"]]
    if versions and events:  # the write's last event names every version it made
        events[-1] = replace(events[-1], payload={**events[-1].payload, "versions": versions})
    # The bytes of what the versions added, in the same transaction: the chain covers them.
    files = table.added_files(intent.base_version, versions)
    if files:
        events.append(files_event(table.table_name, versions, files, now))
    with log.transaction() as conn:
        log.versions.record(conn, versions, intent.operation, now)
        for key, value in intent.body.get("meta", {}).items():
            log.set_meta(key, value, conn)
        log.append_many(events, conn=conn)
        log.intents.remove(conn, intent.intent_id)
    return versions


def files_event(
    table_name: str, versions: list[int], files: Sequence[FileRecord], ts: Any, *, adopted: bool = False
) -> Event:
    """The event that records ``files`` (what ``versions`` added, or all of an adopted table's)."""
    from ragtt.events import types as ev

    payload = {"table": table_name, "versions": versions, "files": [f.to_list() for f in files], "adopted": adopted}
    return Event(ev.INDEX_FILES_RECORDED, payload, index_version=max(versions, default=None), ts=ts)


def _event_body(e: Event) -> dict[str, Any]:
    return {
        "type": e.type,
        "payload": e.payload,
        "query_id": e.query_id,
        "index_version": e.index_version,
        "doc_id": e.doc_id,
        "event_id": e.event_id,
    }


def _event_from_body(b: dict[str, Any], ts: Any, last: int) -> Event:
    version = b["index_version"] if b["index_version"] is not None else last
    return Event(
        b["type"],
        b["payload"],
        query_id=b["query_id"],
        index_version=version,
        doc_id=b["doc_id"],
        ts=ts,
        event_id=b["event_id"],
    )
