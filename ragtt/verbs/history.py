"""History: the event log, one run's trace, snapshots, and golden suites over versions."""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ragtt.values import counted
from ragtt.verbs import Arg, At, Verb, verb
from ragtt.verbs import results as r
from ragtt.verbs.args import MODE, TOP_K
from ragtt.verbs.model import utc
from ragtt.verbs.render import as_dict, as_text, labelled_text, rows

if TYPE_CHECKING:
    from ragtt.project import Project


def _events_text(frame: Any) -> str:
    """One line per event; a query's first event also shows its question."""
    lines = []
    for row in frame.iter_rows(named=True):
        line = (
            f"{row['ts']:%Y-%m-%d %H:%M:%S}  {row['type']:<34} v{row['index_version']}  "
            f"{row['query_id'] or row['doc_id'] or ''}"
        )
        if row["type"].endswith("query.received"):
            line += f"  {json.loads(row['payload']).get('text', '')!r}"
        lines.append(line)
    return "\n".join(lines)


def _trace_text(frame: Any) -> str:
    return "\n".join(
        f"{r['ts']:%Y-%m-%d %H:%M:%S.%f}  v{r['index_version']}  {r['type']:<32} {r['payload'][:100]}"
        for r in frame.iter_rows(named=True)
    )


def _snapshot(proj: Project, a: dict[str, Any]) -> Any:
    return proj.snapshot_if_changed(a["label"]) if a["if_changed"] else proj.snapshot(a["label"])


def _snapshot_json(snap: Any) -> Any:
    return None if snap is None else snap.to_dict()


def _snapshot_text(snap: Any) -> str:
    return "unchanged since the last snapshot; nothing to do" if snap is None else repr(snap)


def _snapshot_text_in(snap: Any, proj: Project) -> str:
    if snap is None:
        last = proj.snapshots()[-1]
        return f"unchanged since snapshot {last.label!r} (v{last.index_version}); nothing to do"
    return repr(snap)


def _snapshots_text(snaps: Any) -> str:
    return str(snaps.to_text())


def _regression_run(proj: Project, a: dict[str, Any]) -> Any:
    return proj.regression.run(a["suite"], threshold=a["threshold"], match=a["match"], at=a["at"])


def _regression_capture(proj: Project, a: dict[str, Any]) -> Any:
    musts = [[m.strip() for m in value.split("|") if m.strip()] for value in a["must_contain"] or []]
    suite = proj.regression.capture(
        a["queries"],
        a["name"],
        top_k=a["top_k"],
        mode=a["mode"],
        at=a["at"],
        references=a["reference"],
        must_contain=musts,
    )
    if a["out"]:
        suite.save(a["out"])
    return suite


def _suite_text(suite: Any) -> str:
    return _suite_text_at(suite, f"v{suite.index_version}")


def _suite_text_in(suite: Any, proj: Project) -> str:
    return _suite_text_at(suite, proj.version_label(suite.index_version))


def _suite_text_at(suite: Any, at: str) -> str:
    return f"captured {counted(len(suite.queries), 'golden query', 'golden queries')} at {at} ({suite.name})"


verb(
    Verb(
        name="trace",
        writes=False,
        help="every event of one query or replay",
        args=(Arg("query_id", str, "query or replay id", required=True),),
        call=lambda p, a: p.trace(a["query_id"]),
        to_json=rows,
        to_text=_trace_text,
        result=list[r.Event],
        route=("GET", "/query/{query_id}"),
    )
)

verb(
    Verb(
        name="events",
        writes=False,
        help="the event log, oldest first",
        args=(
            Arg("type", list[str], "only these event types (repeatable)", default=[], flags=("--type",)),
            Arg("query_id", str, "only the events of this query or replay", flags=("--query-id",)),
            Arg("since", datetime, "only events at or after this ISO datetime (UTC if no offset)", flags=("--since",)),
            Arg("until", datetime, "only events at or before this ISO datetime (UTC if no offset)", flags=("--until",)),
        ),
        call=lambda p, a: p.events.frame(
            types=a["type"] or None, query_id=a["query_id"], since=utc(a["since"]), until=utc(a["until"])
        ),
        to_json=rows,
        to_text=_events_text,
        result=list[r.Event],
        route=("GET", "/events"),
    )
)

verb(
    Verb(
        name="snapshot",
        help="tag the latest index version with a label",
        args=(
            Arg(
                "label",
                str,
                "letters, digits, '.', '-', '_'; with if_changed may hold {ts} and {version}",
                required=True,
            ),
            Arg(
                "if_changed",
                bool,
                "only if no snapshot names the latest version (for cron and CI); never collides",
                default=False,
                flags=("--if-changed",),
            ),
        ),
        call=_snapshot,
        to_json=_snapshot_json,
        to_text=_snapshot_text,
        result=r.Snapshot | None,
        route=("POST", "/snapshot"),
        writes_index=True,
        to_text_in=_snapshot_text_in,
    )
)

verb(
    Verb(
        name="snapshots",
        writes=False,
        help="list snapshots",
        args=(),
        call=lambda p, a: p.snapshots(),
        to_json=lambda snaps: [s.to_dict() for s in snaps],
        to_text=_snapshots_text,
        result=list[r.Snapshot],
        route=("GET", "/snapshots"),
    )
)

verb(
    Verb(
        name="regression_run",
        help="run a golden suite: exit 0 pass, 1 drift, 2 error",
        args=(
            Arg("suite", str, "path of the golden suite JSON file", required=True, server_path=True),
            Arg(
                "threshold",
                float,
                "least recall a query must keep",
                default=0.8,
                flags=("--threshold",),
                minimum=0.0,
                maximum=1.0,
            ),
            Arg(
                "match",
                str,
                "gate on passages found at this similarity (default 0.8), or: passages | chunks | sources",
                default="0.8",
                flags=("--match",),
            ),
            Arg("at", At, "run at this version, snapshot label or ISO datetime (default: latest)", flags=("--at",)),
        ),
        call=_regression_run,
        to_json=lambda report: {**report.to_dict(), "exit_code": report.exit_code},
        to_text=as_text,
        to_text_in=labelled_text,
        result=r.RegressionReport,
        route=("POST", "/regression/run"),
        cli_name="test run",
        exit_code=lambda report: report.exit_code,
    )
)

verb(
    Verb(
        name="regression_capture",
        help="record golden queries from the current index",
        args=(
            Arg("queries", list[str], "the golden queries", required=True, flags=("--query",)),
            Arg("name", str, "suite name", required=True, flags=("--name",)),
            Arg("out", str, "also write the suite JSON here", flags=("-o", "--out"), server_path=True),
            TOP_K,
            MODE,
            Arg("at", At, "capture at this version, snapshot label or ISO datetime (default: latest)", flags=("--at",)),
            Arg(
                "reference",
                list[str],
                "a reference answer per query, in the queries' order ('' for none)",
                flags=("--reference",),
            ),
            Arg(
                "must_contain",
                list[str],
                "strings each answer must hold, per query in order, joined by '|' ('' for none)",
                flags=("--must-contain",),
            ),
        ),
        call=_regression_capture,
        to_json=as_dict,
        to_text=_suite_text,
        to_text_in=_suite_text_in,
        result=r.GoldenSuite,
        route=("POST", "/regression/capture"),
        cli_name="test capture",
    )
)
