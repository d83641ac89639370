"""Result objects: frozen, with ``to_dict()``, a readable repr and escaped HTML reprs."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ragtt._html import BOX, STYLE, esc, table
from ragtt.generate import answer_content
from ragtt.ingest.types import PageRoute, Region
from ragtt.values import counted

__all__ = [
    "TRANSIENT",
    "Document",
    "EngineChange",
    "IngestReport",
    "QueryResult",
    "ReplayResult",
    "Result",
    "RetrievedChunk",
    "Snapshot",
    "Snapshots",
    "iso_utc",
    "version_label",
    "version_names",
]


# Field metadata for a live reference a result keeps for convenience (not data: no to_dict).
TRANSIENT = {"transient": True}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value) if not f.metadata.get("transient")
        }
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Region):
        return value._asdict()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class Result:
    """The base of ragtt's result records: ``to_dict()`` gives plain, JSON-able data."""

    def to_dict(self) -> dict[str, Any]:
        return _plain(self)  # type: ignore[no-any-return]


def version_label(version: int | None, names: Mapping[int, str] | None = None) -> str:
    """How a version reads in every report and CLI line: "flask-1.0 (v6)" when a snapshot
    names version 6, plain "v6" otherwise (``names`` from ``version_names``).

    >>> version_label(6, {6: "flask-1.0"}), version_label(7, {6: "flask-1.0"})
    ('flask-1.0 (v6)', 'v7')
    """
    if version is None:
        return "no version"
    name = (names or {}).get(version)
    return f"{name} (v{version})" if name else f"v{version}"


def version_names(snapshots: Iterable[Snapshot]) -> dict[int, str]:
    """Version -> the snapshot label that names it. A label the user chose beats an
    automatic ``auto-v*`` one; among equals the latest snapshot wins."""
    names: dict[int, str] = {}
    for snap in sorted(snapshots, key=lambda s: (not s.label.startswith("auto-v"), s.created_at)):
        names[snap.index_version] = snap.label
    return names


def iso_utc(moment: datetime | None) -> str:
    """ISO 8601 in UTC with a Z, to the second: how every report shows a datetime."""
    if moment is None:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class RetrievedChunk(Result):
    chunk_id: str
    doc_id: str
    source: str
    text: str
    rank: int
    score: float
    scores: dict[str, float]
    charspan: tuple[int, int]
    regions: list[Region] = field(default_factory=list)

    def __repr__(self) -> str:
        preview = self.text[:60].replace("\n", " ")
        return f"RetrievedChunk(#{self.rank} {self.score:.4f} {self.source} {self.chunk_id[:10]} {preview!r})"


def _chunks_html(chunks: list[RetrievedChunk]) -> str:
    return table(
        ["rank", "score", "source", "chunk", "text"],
        [(c.rank, f"{c.score:.4f}", c.source, c.chunk_id[:10], esc(c.text, 240)) for c in chunks],
        raw_columns=frozenset({4}),
    )


@dataclass(frozen=True)
class QueryResult(Result):
    query_id: str
    text: str
    index_version: int
    config_id: str
    chunks: list[RetrievedChunk]
    answer: str | None
    model: str | None
    latency_ms: float

    @property
    def chunk_ids(self) -> list[str]:
        return [c.chunk_id for c in self.chunks]

    def __repr__(self) -> str:
        lines = [
            f"{type(self).__name__}({self.query_id} @ v{self.index_version}, {self.latency_ms:.1f} ms) {self.text!r}"
        ]
        lines += [f"  {c!r}" for c in self.chunks]
        if self.answer is not None:
            content, _ = answer_content(self.answer)  # the model's name marks an extractive one
            lines.append(f"  answer [{self.model}]: {content[:200]!r}")
        return "\n".join(lines)

    def to_text(self, at: str | None = None) -> str:
        """The result as the CLI prints it; ``at`` is the version's label ("flask-1.0 (v6)")
        when the caller knows it."""
        where = at if at is not None else f"index version {self.index_version}"
        lines = [f"{type(self).__name__} {self.query_id} at {where} ({self.latency_ms:.1f} ms)"]
        lines += [f"  {line}" for line in self._verdict()]
        for c in self.chunks:
            preview = " ".join(c.text.split())[:90]
            lines.append(f"  #{c.rank} {c.score:.4f} {c.source} [{c.charspan[0]}:{c.charspan[1]}] {preview}")
        if self.answer is not None:
            lines.append(f"answer ({self.model}):")
            lines.append(self.answer)
        return "\n".join(lines)

    def _verdict(self) -> list[str]:
        return []

    def _header_html(self) -> str:
        return (
            f"<b>{esc(type(self).__name__)}</b> <code>{esc(self.query_id)}</code> at index version "
            f"<b>{self.index_version}</b>, {self.latency_ms:.1f} ms<br><i>{esc(self.text)}</i>"
        )

    def _repr_html_(self) -> str:
        answer = ""
        if self.answer is not None:
            answer = (
                f"<div><b>answer</b> <span class='dim'>({esc(self.model)})</span><pre>{esc(self.answer)}</pre></div>"
            )
        return f"{STYLE}{BOX}{self._header_html()}{_chunks_html(self.chunks)}{answer}</div>"


@dataclass(frozen=True)
class EngineChange(Result):
    """One component that ranked a logged run and is not what ranks its replay today: an
    engine's version ("lancedb"), a tokenizer setting ("fts_tokenizer.stem"), the embedder's
    runtime ("embedder.runtime")."""

    component: str
    role: str
    recorded: Any
    today: Any

    def __str__(self) -> str:
        return f"{self.component} ({self.role}): {self.recorded} when recorded, {self.today} today"


NO_ORIGINAL = "a text run as of this version: no original query to compare with"


@dataclass(frozen=True)
class ReplayResult(QueryResult):
    """A replayed run. A replay of a logged query names it (``original_query_id``) and says
    whether it retrieved the same (``matches_original``); a text run as of a version
    (``replay_text``) and a bisect's probes have no original: both are None.
    ``engine_changes``: the components that ranked the original and are not today's
    (``plan["engines"]``); ``engines_recorded`` is False for a run logged before ragtt
    recorded them, whose engines are unknown."""

    original_query_id: str | None = None
    matches_original: bool | None = None
    engine_changes: list[EngineChange] = field(default_factory=list)
    engines_recorded: bool = False

    def __repr__(self) -> str:
        head, *rest = super().__repr__().split("\n")
        return "\n".join([head, *(f"  {line}" for line in self._verdict()), *rest])

    def _why(self) -> str:
        """Whether the engines explain the outcome: what the verdict says after its colon."""
        if self.matches_original:
            return "on changed engines" if self.engine_changes else ""
        if self.engine_changes:
            return "engines changed since it ran"
        if self.engines_recorded:
            return "on the engines it recorded, so not an engine upgrade (check the project with verify())"
        return "its engines are unknown (it was logged before ragtt recorded them): an upgrade may explain it"

    def _verdict(self) -> list[str]:
        if not self.original_query_id:  # a question asked of the past, not a logged run's replay
            return [NO_ORIGINAL]
        word = "matches" if self.matches_original else "DIFFERS FROM"
        why = self._why()
        head = f"replay {word} original {self.original_query_id}" + (f": {why}" if why else "")
        return [head, *(f"  {change}" for change in self.engine_changes)]

    def _header_html(self) -> str:
        if not self.original_query_id:
            return super()._header_html() + f"<br>{esc(NO_ORIGINAL)}"
        verdict = "matches the original" if self.matches_original else "DIFFERS from the original"
        why = self._why()
        changes = "".join(f"<li>{esc(str(change))}</li>" for change in self.engine_changes)
        return (
            super()._header_html()
            + f"<br>replay of <code>{esc(self.original_query_id)}</code>: <b>{verdict}</b>"
            + (f": {esc(why)}" if why else "")
            + (f"<ul>{changes}</ul>" if changes else "")
        )


@dataclass(frozen=True)
class IngestReport(Result):
    documents_added: list[str]
    documents_updated: list[str]
    documents_unchanged: list[str]
    failed: list[tuple[str, str]]
    chunks_added: int
    chunks_removed: int
    chunks_kept: int
    embeddings_computed: int
    embeddings_reused: int
    index_version_before: int
    index_version_after: int
    elapsed_s: float
    documents_removed: list[str] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed

    def summary(self) -> str:
        removed = f"{len(self.documents_removed)} removed, " if self.documents_removed else ""
        return (
            f"{len(self.documents_added)} added, {len(self.documents_updated)} updated, {removed}"
            f"{len(self.documents_unchanged)} unchanged, {len(self.failed)} failed; chunks "
            f"+{self.chunks_added} -{self.chunks_removed} ={self.chunks_kept}; embedded "
            f"{self.embeddings_computed} (reused {self.embeddings_reused}); index v"
            f"{self.index_version_before} -> v{self.index_version_after} in {self.elapsed_s:.2f} s"
        )

    def __repr__(self) -> str:
        lines = [f"IngestReport({self.summary()})"]
        lines += [f"  FAILED {s}: {r}" for s, r in self.failed]
        lines += [f"  SKIPPED {s}: {r}" for s, r in self.skipped]
        lines += [f"  WARNING {s}: {w}" for s, w in self.warnings]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows: list[tuple[str, str, str]] = []
        for status, names in (
            ("added", self.documents_added),
            ("updated", self.documents_updated),
            ("removed", self.documents_removed),
            ("unchanged", self.documents_unchanged),
        ):
            rows += [(status, n, "") for n in names]
        rows += [("FAILED", s, r) for s, r in self.failed]
        rows += [("skipped", s, r) for s, r in self.skipped]
        rows += [("warning", s, w) for s, w in self.warnings]
        return (
            f"{STYLE}{BOX}<b>IngestReport</b> {esc(self.summary())}{table(['status', 'source', 'detail'], rows)}</div>"
        )


@dataclass(frozen=True)
class Snapshot(Result):
    snapshot_id: str
    label: str
    index_version: int
    created_at: datetime
    doc_count: int
    chunk_count: int
    # the date its version's ingest was dated with (``ingest(..., as_of=...)``, ``--as-of-date``:
    # a release date; the timeline places the version there), None when it had none
    as_of: datetime | None = None

    def __repr__(self) -> str:
        dated = f", as of {iso_utc(self.as_of)}" if self.as_of else ""
        return (
            f"Snapshot({self.label!r} = v{self.index_version}, {counted(self.doc_count, 'doc')}, "
            f"{counted(self.chunk_count, 'chunk')}, {self.created_at:%Y-%m-%d %H:%M:%S} UTC{dated})"
        )

    def _repr_html_(self) -> str:
        return snapshots_html([self])


class Snapshots(list[Snapshot]):
    """``proj.snapshots()``: a plain list of Snapshot that renders as one table in notebooks."""

    def _repr_html_(self) -> str:
        if not self:
            return f"{STYLE}{BOX}<i>no snapshots yet (proj.snapshot(label))</i></div>"
        return snapshots_html(self)

    def to_text(self) -> str:
        """One aligned row per snapshot under a header (what ``ragtt snapshots`` prints)."""
        if not self:
            return "no snapshots yet (ragtt snapshot LABEL)"
        rows = [("label", "version", "documents", "chunks", "created (UTC)", "as of (UTC)")]
        rows += [
            (
                s.label,
                f"v{s.index_version}",
                str(s.doc_count),
                str(s.chunk_count),
                iso_utc(s.created_at),
                iso_utc(s.as_of),
            )
            for s in self
        ]
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows)


def snapshots_html(snapshots: list[Snapshot]) -> str:
    rows = [
        (s.label, s.index_version, s.doc_count, s.chunk_count, iso_utc(s.created_at), iso_utc(s.as_of))
        for s in snapshots
    ]
    return f"{STYLE}{BOX}{table(['label', 'version', 'documents', 'chunks', 'created', 'as of'], rows)}</div>"


@dataclass(frozen=True)
class Document(Result):
    doc_id: str
    source: str
    content_hash: str
    text: str
    routes: list[PageRoute] = field(default_factory=list)

    def __repr__(self) -> str:
        return (
            f"Document({self.source!r}, {len(self.text)} chars, {len(self.routes)} routed pages, "
            f"sha256 {self.content_hash[:12]})"
        )
