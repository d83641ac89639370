"""The ingest verb: files, folders or in-memory texts into one index version."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from ragtt.config import INGEST_ENGINES
from ragtt.verbs import Arg, Verb, VerbUsageError, verb
from ragtt.verbs import results as r
from ragtt.verbs.model import utc
from ragtt.verbs.render import as_dict

if TYPE_CHECKING:
    from ragtt.project import Project


def _ingest(proj: Project, a: dict[str, Any]) -> Any:
    if bool(a["paths"]) == bool(a["texts"]):
        raise VerbUsageError("ingest takes either paths (files and folders) or texts ({source: text}), not both")
    if a["texts"]:
        if a["engine"] != "local" or a["ray_address"] is not None:
            raise VerbUsageError("in-memory texts are ingested here (engine 'local'); the Ray engine ingests paths")
        return proj.ingest_texts(a["texts"], as_of=utc(a["as_of"]))
    return proj.ingest(
        a["paths"],
        prune=a["prune"],
        follow_symlinks=a["follow_symlinks"],
        engine=a["engine"],
        ray_address=a["ray_address"],
        as_of=utc(a["as_of"]),
    )


verb(
    Verb(
        name="ingest",
        help="ingest files and folders (a folder is mirrored), or in-memory texts, in one index version",
        args=(
            Arg("paths", list[str], "files and folders to ingest", default=[], server_path=True),
            Arg(
                "texts",
                dict[str, str],
                "in-memory sources: {source name: text}",
                default={},
                fronts=frozenset({"rest", "mcp"}),
            ),
            Arg(
                "prune",
                bool | None,
                "remove indexed sources absent from the input (default: only for folder-only input)",
                flags=("--prune",),
            ),
            Arg(
                "follow_symlinks",
                bool,
                "also ingest files that symlinks inside a folder point to outside it",
                default=False,
                flags=("--follow-symlinks",),
            ),
            Arg(
                "engine",
                str,
                "where parsing, chunking and embedding run: here, or fanned out on Ray (pip install 'ragtt[ray]')",
                default="local",
                flags=("--engine",),
                choices=INGEST_ENGINES,
            ),
            Arg(
                "ray_address",
                str,
                "the Ray cluster for --engine ray (default: $RAY_ADDRESS, else a new local one)",
                flags=("--ray-address",),
                fronts=frozenset({"cli", "magic"}),  # a server's clients do not pick its cluster
            ),
            Arg(
                "as_of",
                datetime,
                "the date the content is of, e.g. a release date 2023-04-25 (UTC if no offset): "
                "the timeline's axis and --as-of datetimes use it",
                flags=("--as-of-date",),
            ),
        ),
        call=_ingest,
        to_json=as_dict,
        to_text=repr,
        result=r.IngestReport,
        route=("POST", "/ingest"),
        writes_index=True,
        creates=True,
        exit_code=lambda report: 1 if report.failed else 0,
    )
)
