"""``proj.sync``: LangChain's indexing API (cleanup ``None`` / ``"incremental"`` / ``"full"`` /
``"scoped_full"``) over ragtt's one-version-per-write crash protocol.

Every call reads its whole input first, then writes ONE index version: the adds, updates and
deletes of a call are never visible apart, pieces of one source are joined before anything is
written (so they cannot delete each other across batches), and a source whose new text fails
keeps its old version. In ragtt a source is one document, replaced whole when its text
changes, so ``None``, ``"incremental"`` and ``"scoped_full"`` leave the same index; they differ
in that the last two refuse documents that name no source (their edits could never replace
the old text), as LangChain does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ragtt.errors import ConfigError
from ragtt.feeds.records import BadRecord, FeedRecord, SourceKey, feed_record

if TYPE_CHECKING:
    from ragtt.context import Context
    from ragtt.results import IngestReport

__all__ = ["CLEANUP_MODES", "FEED_REMOVAL", "ingest_records", "sync"]

CLEANUP_MODES = (None, "incremental", "full", "scoped_full")
FEED_REMOVAL = "removed by the feed (text None)"
_INPUT = "(input)"


def sync(
    ctx: Context, docs: Iterable[Any], cleanup: str | None, source_key: SourceKey, allow_empty: bool
) -> IngestReport:
    if cleanup not in CLEANUP_MODES:
        raise ConfigError(
            f"cleanup must be one of {', '.join(map(repr, CLEANUP_MODES))}; got {cleanup!r} "
            "(full: sources absent from the input leave the index; incremental: only the given ones change)"
        )
    records: list[FeedRecord] = []
    failed: list[tuple[str, str]] = []
    read_all = True
    try:
        for n, doc in enumerate(docs):
            try:
                records.append(feed_record(doc, source_key))
            except BadRecord as exc:
                failed.append((exc.source or f"{_INPUT} item {n}", str(exc)))
    except Exception as exc:  # a loader that dies mid-way: what it gave is synced, nothing is cleaned up
        failed.append((_INPUT, f"the input stopped with {type(exc).__name__}: {exc}"))
        read_all = False
    if cleanup in ("incremental", "scoped_full"):
        unnamed = [r for r in records if not r.named]
        if unnamed:
            raise ConfigError(
                f"cleanup={cleanup!r} needs every document to name its source; {len(unnamed)} do not "
                "(pass source_key= the metadata key or a function that names one, or cleanup=None)"
            )
    warnings: list[tuple[str, str]] = []
    prune = cleanup == "full"
    if prune and not records and not allow_empty:
        warnings.append(
            ("(cleanup)", "the input was empty: nothing was deleted (pass allow_empty=True to empty the index)")
        )
        prune = False
    if prune and not read_all:
        prune = False  # ingest_records says so, with the failure that stopped it
    return ingest_records(ctx, records, failed, prune=prune, warnings=warnings)


def ingest_records(
    ctx: Context,
    records: Iterable[FeedRecord],
    failed: list[tuple[str, str]],
    *,
    prune: bool = False,
    warnings: list[tuple[str, str]] | None = None,
) -> IngestReport:
    """Write ``records`` as ONE index version: pieces of a source joined in order (a ``None``
    text removes the source, and pieces after it start it again); with ``prune``, indexed
    sources absent from the records leave in that same version. A source named in ``failed``
    keeps its indexed version (none of its pieces is written)."""
    import dataclasses

    from ragtt.ingest.pipeline import SourceItem, run_ingest

    texts: dict[str, list[str] | None] = {}
    for r in records:
        pieces = texts.get(r.source)
        if r.text is None:
            texts[r.source] = None
        elif pieces is None:
            texts[r.source] = [r.text]
        else:
            pieces.append(r.text)
    held = {source for source, _ in failed}
    items = [
        SourceItem(s, data="\n\n".join(p).encode("utf-8")) for s, p in texts.items() if p is not None and s not in held
    ]
    removed = frozenset(s for s, p in texts.items() if p is None and s not in held)
    report = run_ingest(
        ctx, items, failed, prune=prune, keep=frozenset(held), remove=removed, removal_reason=FEED_REMOVAL
    )
    return dataclasses.replace(report, warnings=[*(warnings or []), *report.warnings]) if warnings else report
