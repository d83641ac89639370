"""How verbs render results: JSON as every front end writes it, and the text the CLI prints.

The helpers many verbs share live here; a verb's own rendering sits beside its declaration.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragtt.project import Project

__all__ = ["as_dict", "as_text", "dumps", "labelled_text", "result_text", "rows"]


def as_dict(result: Any) -> Any:
    """A result record's JSON: its ``to_dict()``."""
    return result.to_dict()


def as_text(result: Any) -> str:
    """A result record's text: its ``to_text()``."""
    return str(result.to_text())


def rows(frame: Any) -> list[dict[str, Any]]:
    """A Polars frame as a list of row dicts."""
    return list(frame.to_dicts())


def result_text(result: Any, at: str | None = None) -> str:
    """A QueryResult or ReplayResult as the CLI prints it; ``at`` is the version's label
    ("flask-1.0 (v6)") when the caller knows it."""
    where = at if at is not None else f"index version {result.index_version}"
    lines = [f"{type(result).__name__} {result.query_id} at {where} ({result.latency_ms:.1f} ms)"]
    if getattr(result, "original_query_id", ""):
        verdict = "matches" if result.matches_original else "DIFFERS FROM"
        lines.append(f"  replay {verdict} original {result.original_query_id}")
    for c in result.chunks:
        preview = " ".join(c.text.split())[:90]
        lines.append(f"  #{c.rank} {c.score:.4f} {c.source} [{c.charspan[0]}:{c.charspan[1]}] {preview}")
    if result.answer is not None:
        lines.append(f"answer ({result.model}):")
        lines.append(result.answer)
    return "\n".join(lines)


def labelled_text(result: Any, proj: Project) -> str:
    """``result_text`` with the version named by its snapshot label, if one names it."""
    return result_text(result, proj.version_label(result.index_version))


def dumps(data: Any, indent: int | None = None) -> str:
    """JSON as every front end writes it (datetimes as ISO text, non-ASCII kept)."""
    return json.dumps(
        data,
        ensure_ascii=False,
        indent=indent,
        default=lambda v: v.isoformat() if hasattr(v, "isoformat") else str(v),
    )
