"""Ingest: sources -> parsed documents -> chunks -> embeddings -> ONE new table version.

An unchanged document (same bytes, same chunking) is skipped before parsing and writes
nothing. One bad source fails alone, with its reason in the report.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt._hashing import chunk_id_for, doc_id_for, sha256_hex, stable_json, time_ordered_id
from ragtt.errors import IngestError
from ragtt.events.store import Event, format_ts, utc_now
from ragtt.ingest.chunk import build_chunks
from ragtt.ingest.loaders import loader_for, supported_suffixes
from ragtt.ingest.types import ParsedDocument, TextChunk
from ragtt.results import IngestReport

if TYPE_CHECKING:
    from ragtt.project import Project

__all__ = ["SourceItem", "collect_paths", "run_ingest"]

_PROGRESS_MIN_DOCS = 8
_PROGRESS_MIN_CHUNKS = 20
_PROGRESS_DELAY_S = 2.0


@dataclass(frozen=True)
class SourceItem:
    """One source to ingest: its name and how to get its bytes."""

    source: str
    path: Path | None = None
    data: bytes | None = None

    def read(self) -> bytes:
        if self.data is not None:
            return self.data
        assert self.path is not None
        try:
            return self.path.read_bytes()
        except OSError as exc:
            raise IngestError(f"cannot read {self.path}: {exc.strerror or exc}") from None


def collect_paths(paths: Iterable[str | Path] | str | Path) -> tuple[list[SourceItem], list[tuple[str, str]]]:
    """Expand files and folders into named sources; a folder's files are named relative to it."""
    if isinstance(paths, str | Path):
        paths = [paths]
    items: list[SourceItem] = []
    failed: list[tuple[str, str]] = []
    suffixes = set(supported_suffixes())
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in suffixes
                           and not any(part.startswith(".") for part in p.relative_to(path).parts))
            items += [SourceItem(p.relative_to(path).as_posix(), path=p) for p in found]
        elif path.is_file():
            items.append(SourceItem(path.name, path=path))
        else:
            failed.append((str(raw), f"no such file or folder: {path}"))
    seen: dict[str, SourceItem] = {}
    unique: list[SourceItem] = []
    for item in items:
        if item.source in seen:
            failed.append((item.source, f"two inputs share this source name ({seen[item.source].path} and "
                                        f"{item.path}); ingest them in separate calls or folders"))
        else:
            seen[item.source] = item
            unique.append(item)
    return unique, failed


@dataclass
class _Prepared:
    source: str
    path: str | None
    doc_id: str
    doc_key: str
    content_hash: str
    parsed: ParsedDocument
    chunks: list[TextChunk]
    chunk_ids: list[str]


def run_ingest(proj: Project, items: list[SourceItem], failed: list[tuple[str, str]], *,
               prune: bool = False) -> IngestReport:
    """Ingest ``items`` in one table version; with ``prune``, indexed sources absent from
    ``items`` are removed in that same version (a folder ingest mirrors the folder)."""
    started = time.perf_counter()
    table = proj._table
    version_before = table.latest_version()
    current = _current_state(proj, version_before)
    chunking = _chunking_signature(proj)
    added: list[str] = []
    updated: list[str] = []
    unchanged: list[str] = []
    warnings: list[tuple[str, str]] = []
    prepared: list[_Prepared] = []
    progress = _progress(len(items), "parse", proj)
    for item in items:
        try:
            data = item.read()
            content_hash = sha256_hex(data)
            doc_key = sha256_hex(stable_json([item.source, content_hash, chunking]))[:32]
            state = current.get(item.source)
            if state is not None and state["doc_key"] == doc_key:
                unchanged.append(item.source)
                continue
            parsed = _parse(proj, item, data)
            chunks = build_chunks(parsed.markdown, parsed.blocks or None, max_size=proj.config.chunk_size,
                                  overlap=proj.config.chunk_overlap, strategy=proj.config.chunk_strategy)
            if not chunks:
                raise IngestError(f"{item.source}: no text to index (the document is empty after parsing)")
            path = str(item.path.resolve()) if item.path is not None else None
            prepared.append(_Prepared(item.source, path, doc_id_for(item.source), doc_key, content_hash, parsed,
                                      chunks, _chunk_ids(item.source, chunks)))
            warnings += [(item.source, w) for w in parsed.warnings]
            (updated if state is not None else added).append(item.source)
        except IngestError as exc:
            failed.append((item.source, str(exc).removeprefix(f"{item.source}: ")))
        except Exception as exc:  # a loader bug must not sink the batch either
            failed.append((item.source, f"{type(exc).__name__}: {exc}"))
        finally:
            if progress is not None:
                progress.update(1)
    if progress is not None:
        progress.close()

    listed = {item.source for item in items}
    pruned = sorted(s for s in current if s not in listed) if prune else []
    counts = {"added": 0, "removed": 0, "kept": 0, "computed": 0, "reused": 0}
    version_after = version_before
    if prepared or pruned:
        version_after = _write(proj, prepared, pruned, current, counts)
        if proj._history.maintenance_due(counts["added"] + counts["kept"]):
            version_after = ([version_after, *proj.optimize()])[-1]
    report = IngestReport(
        documents_added=added, documents_updated=updated, documents_unchanged=unchanged, failed=failed,
        chunks_added=counts["added"], chunks_removed=counts["removed"], chunks_kept=counts["kept"],
        embeddings_computed=counts["computed"], embeddings_reused=counts["reused"],
        index_version_before=version_before, index_version_after=version_after,
        elapsed_s=round(time.perf_counter() - started, 4), documents_removed=pruned, warnings=warnings,
    )
    if prepared and proj.config.auto_snapshot_every:
        proj._maybe_auto_snapshot()
    return report


def _parse(proj: Project, item: SourceItem, data: bytes) -> ParsedDocument:
    loader = loader_for(item.path if item.path is not None else item.source)
    if loader is None:
        if item.path is not None:
            raise IngestError(
                f"{item.source}: unsupported file type {item.path.suffix or '(none)'!r}; "
                f"supported: {', '.join(supported_suffixes())}"
            )
        loader = loader_for("in-memory.txt")  # ingest_texts: any name is text
        assert loader is not None
    return loader(data, item.source, proj.ingest_options)


def _chunking_signature(proj: Project) -> dict[str, Any]:
    c = proj.config
    # How a source is read changes its text, so the options are part of "unchanged";
    # vision_kwargs (api keys, mock responses) are not: repr keeps them out of JSON's way.
    options = dataclasses.asdict(proj.ingest_options)
    options["vision_kwargs"] = sorted(options.get("vision_kwargs", {}))
    return {"strategy": c.chunk_strategy, "size": c.chunk_size, "overlap": c.chunk_overlap,
            "options": json.dumps(options, sort_keys=True, default=repr)}


def _chunk_ids(source: str, chunks: list[TextChunk]) -> list[str]:
    seen: dict[str, int] = {}
    ids = []
    for chunk in chunks:
        occurrence = seen.get(chunk.text, 0)
        seen[chunk.text] = occurrence + 1
        ids.append(chunk_id_for(source, chunk.text, occurrence))
    return ids


def _current_state(proj: Project, version: int) -> dict[str, dict[str, Any]]:
    rows = proj._table.scan(version, ["source", "doc_key", "chunk_id"]).to_pylist()
    state: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry = state.setdefault(row["source"], {"doc_key": row["doc_key"], "chunk_ids": set()})
        entry["chunk_ids"].add(row["chunk_id"])
    return state


def _write(proj: Project, prepared: list[_Prepared], pruned: list[str], current: dict[str, dict[str, Any]],
           counts: dict[str, int]) -> int:
    import pyarrow as pa

    from ragtt.index.table import chunk_schema

    texts = [c.embed_text for p in prepared for c in p.chunks]  # a table row is embedded with its header
    progress = _progress(len(prepared), "embed", proj, total=len(texts))
    vectors, computed, reused = proj._cache.embed(proj.embedder, texts, progress=progress)
    if progress is not None:
        progress.close()
    counts["computed"], counts["reused"] = computed, reused
    ingest_id = time_ordered_id()
    rows: dict[str, list[Any]] = {name: [] for name in chunk_schema(proj.embedder.dim).names}
    for p in prepared:
        for chunk, chunk_id in zip(p.chunks, p.chunk_ids, strict=True):
            rows["chunk_id"].append(chunk_id)
            rows["doc_id"].append(p.doc_id)
            rows["doc_key"].append(p.doc_key)
            rows["source"].append(p.source)
            rows["content_hash"].append(p.content_hash)
            rows["text"].append(chunk.text)
            rows["char_start"].append(chunk.char_start)
            rows["char_end"].append(chunk.char_end)
            rows["regions"].append([r._asdict() for r in chunk.regions])
            rows["ingest_id"].append(ingest_id)
    rows["vector"] = list(vectors)
    arrow = pa.table(rows, schema=chunk_schema(proj.embedder.dim))
    version = proj._table.replace_sources(arrow, [p.source for p in prepared] + pruned)

    now = utc_now()
    events = []
    for p in prepared:
        old = current.get(p.source, {}).get("chunk_ids", set())
        new = set(p.chunk_ids)
        counts["added"] += len(new - old)
        counts["removed"] += len(old - new)
        counts["kept"] += len(new & old)
        events.append(Event("document.ingested", {
            "doc_id": p.doc_id, "source": p.source, "path": p.path, "content_hash": p.content_hash,
            "doc_key": p.doc_key,
            "status": "updated" if p.source in current else "added",
            "chunk_ids_added": sorted(new - old), "chunk_ids_removed": sorted(old - new),
            "chunk_count": len(new), "routes": [r.to_dict() for r in p.parsed.routes],
            "ingest_id": ingest_id,
        }, index_version=version, doc_id=p.doc_id, ts=now))
    for source in pruned:
        removed = sorted(current[source]["chunk_ids"])
        counts["removed"] += len(removed)
        events.append(Event("document.removed", {
            "doc_id": doc_id_for(source), "source": source, "chunk_ids_removed": removed,
            "reason": "absent from the ingested folder", "ingest_id": ingest_id,
        }, index_version=version, doc_id=doc_id_for(source), ts=now))
    events.append(Event("ingest.completed", {
        "ingest_id": ingest_id, "documents": [p.source for p in prepared], "removed": pruned,
        "chunks_added": counts["added"], "chunks_removed": counts["removed"], "chunks_kept": counts["kept"],
        "embeddings_computed": computed, "embeddings_reused": reused,
        "embedder_id": proj.embedder.model_id, "config_id": proj.config.config_id,
    }, index_version=version, ts=now))
    with proj._events.transaction() as conn:
        conn.executemany(
            "INSERT OR IGNORE INTO documents (doc_key, doc_id, source, content_hash, text, routes, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(p.doc_key, p.doc_id, p.source, p.content_hash, p.parsed.markdown,
              stable_json([r.to_dict() for r in p.parsed.routes]), format_ts(now)) for p in prepared],
        )
        proj._history.record(conn, version, "ingest", now)
        proj._events.append_many(events, conn=conn)
    return version


def _progress(n_docs: int, stage: str, proj: Project, total: int | None = None) -> Any:
    """A bar at once for real work (many documents, more than 20 chunks to embed); otherwise
    one that appears only if the stage runs longer than 2 s, so quick ingests stay quiet."""
    if not proj.progress or not n_docs:
        return None
    from tqdm.auto import tqdm

    big = n_docs >= _PROGRESS_MIN_DOCS or (total or 0) > _PROGRESS_MIN_CHUNKS
    unit = "doc" if total is None else "chunk"
    return tqdm(total=total if total is not None else n_docs, desc=f"ragtt {stage}", unit=unit, leave=False,
                delay=0 if big else _PROGRESS_DELAY_S)
