"""Administration: check the history, forget what is no longer needed, export traces."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragtt.verbs import Arg, Verb, verb
from ragtt.verbs import results as r
from ragtt.verbs.args import QUERY_ID
from ragtt.verbs.render import as_dict, as_text, dumps

if TYPE_CHECKING:
    from ragtt.errors import ProjectDamagedError
    from ragtt.project import Project


def _export_traces(proj: Project, a: dict[str, Any]) -> Any:
    otlp = proj.export_traces(a["query_id"], endpoint=a["endpoint"])
    if a["out"]:
        with open(a["out"], "w", encoding="utf-8") as out:
            out.write(dumps(otlp))
    return otlp


def _traces_text(otlp: Any) -> str:
    spans = [s for r in otlp["resourceSpans"] for scope in r["scopeSpans"] for s in scope["spans"]]
    return "\n".join(f"{s['traceId']} {s['spanId']} {s['name']}" for s in spans)


def _prune(proj: Project, a: dict[str, Any]) -> Any:
    keep = [int(k) if k.isascii() and k.isdigit() else k for k in a["keep"] or []]  # a version, or an id/label
    return proj.prune(max_snapshots=a["max_snapshots"], max_age=a["max_age"], keep=keep)


def _verify_text(report: Any) -> str:
    """The summary when the history is intact, else one line per problem (for grep and CI logs)."""
    return str(report.to_text()) if report.ok else "\n".join(report.problems)


def _damage_found(exc: ProjectDamagedError) -> Any:
    from ragtt.verify import VerifyReport, as_finding

    return VerifyReport(ok=False, problems=[as_finding(exc)])


verb(
    Verb(
        name="export_traces",
        writes=False,
        help="a query's or replay's OpenTelemetry trace (OTLP/JSON, OpenInference spans Phoenix shows)",
        args=(
            QUERY_ID,
            # A server must not post to URLs or write files a client names: CLI and magics only.
            Arg(
                "endpoint",
                str,
                "also send it over OTLP/HTTP to this collector (Phoenix: http://127.0.0.1:6006)",
                flags=("--endpoint",),
                fronts=frozenset({"cli", "magic"}),
            ),
            Arg("out", str, "also write the OTLP/JSON here", flags=("-o", "--out"), fronts=frozenset({"cli", "magic"})),
        ),
        call=_export_traces,
        to_json=lambda otlp: otlp,
        to_text=_traces_text,
        result=r.OtlpTrace,
        route=("GET", "/query/{query_id}/traces"),
    )
)

verb(
    Verb(
        name="prune",
        help="forget old runs and the index versions nothing retained needs (recorded in the hash chain)",
        args=(
            Arg(
                "max_snapshots",
                int,
                "keep the N newest snapshots (and history back to the oldest of them)",
                flags=("--max-snapshots",),
                minimum=0,
            ),
            Arg(
                "max_age",
                str,
                "forget runs older than this: a number and s, m, h, d or w (e.g. 30d, 12h)",
                flags=("--max-age",),
            ),
            Arg(
                "keep",
                list[str],
                "a query id, snapshot label or version number never to prune (repeatable)",
                default=[],
                flags=("--keep",),
            ),
        ),
        call=_prune,
        to_json=as_dict,
        to_text=as_text,
        result=r.PruneReport,
        route=("POST", "/prune"),
        writes_index=True,
    )
)

verb(
    Verb(
        name="verify",
        writes=False,
        help="re-walk the history: SQLite checks, hash chain, guards, versions, tags, documents and index files",
        args=(
            Arg(
                "deep",
                bool,
                "also re-hash every retained index file and run SQLite's full integrity_check",
                default=False,
                flags=("--deep",),
            ),
        ),
        call=lambda p, a: p.verify(deep=a["deep"]),
        to_json=as_dict,
        to_text=_verify_text,
        result=r.VerifyReport,
        route=("GET", "/verify"),
        exit_code=lambda report: 0 if report.ok else 1,
        on_damage=_damage_found,
    )
)
