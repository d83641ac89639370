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
    """A result as the CLI prints it (its ``to_text``: a QueryResult, ReplayResult or
    RegressionReport); ``at`` is the version's label ("flask-1.0 (v6)") when the caller knows it."""
    return str(result.to_text(at))


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
