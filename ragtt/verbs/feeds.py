"""The feed verbs: ``sync``, LangChain's indexing semantics over texts sent by a client."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragtt.verbs import Arg, Verb, verb
from ragtt.verbs import results as r
from ragtt.verbs.render import as_dict

if TYPE_CHECKING:
    from ragtt.project import Project

_CLEANUP = ("none", "incremental", "full", "scoped_full")


def _sync(proj: Project, a: dict[str, Any]) -> Any:
    records: list[tuple[str, str | None]] = [*a["texts"].items(), *((s, None) for s in a["remove"])]
    cleanup = None if a["cleanup"] == "none" else a["cleanup"]
    return proj.sync(records, cleanup=cleanup, allow_empty=a["allow_empty"])


verb(
    Verb(
        name="sync",
        help="sync sources in one index version (LangChain's cleanup modes: full removes what is absent)",
        args=(
            Arg(
                "texts",
                dict[str, str],
                "the sources' texts: {source name: text}",
                default={},
                fronts=frozenset({"rest", "mcp"}),
            ),
            Arg("remove", list[str], "sources to remove in the same version", default=[], flags=("--remove",)),
            Arg(
                "cleanup",
                str,
                "full: indexed sources absent from the input leave; incremental, scoped_full, none: only given ones",
                default="incremental",
                flags=("--cleanup",),
                choices=_CLEANUP,
            ),
            Arg(
                "allow_empty",
                bool,
                "let an empty input with cleanup full empty the index",
                default=False,
                flags=("--allow-empty",),
            ),
        ),
        call=_sync,
        to_json=as_dict,
        to_text=repr,
        result=r.IngestReport,
        route=("POST", "/sync"),
        writes_index=True,
        creates=True,
        exit_code=lambda report: 1 if report.failed else 0,
    )
)
