"""The verb table: every ragtt verb declared once, for every front end.

A ``Verb`` names the verb, says what it does, lists its ``Arg``s, calls the ``Project`` and
renders the result as JSON-able data and as text (and, for some, as HTML). Nothing here
imports lancedb, polars, FastAPI or IPython: a front end imports this table cheaply and
loads only what the verb it runs needs.

How each front end is generated from the table:

- REST (``ragtt.serve``, built): a verb with ``route`` becomes that route. ``POST`` routes
  take a pydantic body built from the args (unknown fields rejected, so a typo is a 422 that
  names it); ``GET`` routes take the args named ``{...}`` in the path as path parameters and
  the rest as query parameters. ``html`` adds ``GET <html_route>``.
- MCP (``ragtt.serve_mcp``, built): one tool per verb, named ``verb.name``, whose input
  schema is the JSON schema of the same pydantic model (``ragtt.verbs.schema.body_model``).
- CLI (``ragtt.cli``, built with ``ragtt.verbs.cli``): one sub-parser per ``cli`` name
  (``name`` with ``_`` -> ``-`` unless ``cli_name`` is given; ``"test run"`` is ``run`` under
  ``test``), so a verb added here is a command with no code in cli.py. ``add_arguments`` turns
  each ``Arg`` into ``add_argument(*arg.flags or (arg.name,), ...)``: no flags means
  positional (``words``: it takes every remaining word, joined); ``list`` types become
  ``nargs="+"`` (positional) or ``action="append"`` (flag; ``list[int]`` flags also take
  ``3,7,12``); a ``bool`` with default False is ``store_true``, one with default True is
  ``BooleanOptionalAction`` (``--generate/--no-generate``); ``dict`` types take a JSON
  object; ``choices``, ``minimum``/``maximum`` are checked by ``cli_type``. Verbs that share
  a ``cli_name`` (``replay`` and ``replay_as_of``) share one sub-parser, and ``pick`` runs the
  first whose required args were all given (an arg only the other verb takes is an error).
  Bare words left over fill the first verb's required flags in order (``diff L R``,
  ``replay ID``). ``--json`` picks ``verb.to_json`` over ``verb.to_text`` (``to_text_in``
  when the project is still open, to name versions by label); the exit status is
  ``verb.exit_code(result)``. Output options that are the CLI's own (``diff --html``,
  ``events --out``, ``--queries-file``) are ``ragtt.cli.OWN_OPTIONS``, beside the generated
  args. ``help`` is the sub-parser's help and description (``describe``).
- Magics (``ragtt_nb.magics``): the same parser per verb (raising ``UsageError``), so
  ``%ragtt help VERB`` prints what ``ragtt VERB --help`` prints, but for the usage line and
  each front end's own options; the magic only adds display (widgets, ``last``, ``--table``:
  ``ragtt_nb.magics.DISPLAY``) around ``verb.run``.
- A verb that needs no project (``alone``: compare_configs) is called with the embedder a
  front end would open projects with; servers, which hold a project, call ``call`` with it.

The global options (``--project``, ``--embedder``, ``--events-uri``, ``--index-uri``,
``--json``) belong to each front end, not to a verb: they say which project to open, not
what to do with it. ``tests/serve/test_front_ends.py`` checks that the four front ends name
the same arguments for every verb.
"""

from __future__ import annotations

import argparse
import json
import typing
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from ragtt.config import INGEST_ENGINES, MAX_TOP_K
from ragtt.errors import RagttError

if TYPE_CHECKING:
    from ragtt.errors import ProjectDamagedError
    from ragtt.index.embedders import Embedder
    from ragtt.project import Project

__all__ = ["VERBS", "Arg", "At", "Verb", "VerbUsageError", "cli_type", "dumps", "result_text", "verb"]

At = int | str  # a version number, a snapshot label or an ISO datetime (Project.resolve_version)
MODES = ("vector", "bm25", "hybrid")


class VerbUsageError(RagttError, TypeError):
    """A verb was called with arguments it does not take (or without one it needs)."""


@dataclass(frozen=True)
class Arg:
    """One argument of a verb. ``name`` is the keyword in Python, JSON bodies and MCP tools."""

    name: str
    type: Any  # str, int, float, bool, datetime, At, list[str], list[int], dict[str, str]
    help: str
    default: Any = None
    required: bool = False
    flags: tuple[str, ...] = ()  # CLI spellings, first is canonical; () = positional
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    fronts: frozenset[str] = frozenset({"cli", "rest", "mcp", "magic"})  # where it exists
    words: bool = False  # CLI and magics: a positional text that takes every remaining word, joined by spaces


@dataclass(frozen=True)
class Verb:
    name: str
    help: str
    args: tuple[Arg, ...]
    call: Callable[[Project, dict[str, Any]], Any]
    to_json: Callable[[Any], Any]
    to_text: Callable[[Any], str]
    route: tuple[Literal["GET", "POST"], str] | None = None
    html: Callable[[Any], str] | None = None
    html_route: str | None = None
    writes_index: bool = False  # serialized by servers: one writer at a time
    creates: bool = False  # may create the project (only ingest)
    cli_name: str | None = None
    exit_code: Callable[[Any], int] = lambda result: 0  # the CLI's exit status for a result
    # The text with the project still open (versions named by their snapshot labels); else to_text.
    to_text_in: Callable[[Any, Project], str] | None = None
    # A verb that needs no project (compare_configs makes its own): how a front end with none
    # open calls it, with the embedder it would open projects with (None: ragtt's default).
    alone: Callable[[Embedder | None, dict[str, Any]], Any] | None = None
    # A result for damage found while opening the project (verify: damage is a finding).
    on_damage: Callable[[ProjectDamagedError], Any] | None = None

    @property
    def cli(self) -> str:
        return self.cli_name or self.name.replace("_", "-")

    def run(self, proj: Project, values: dict[str, Any]) -> Any:
        """Call the verb with ``values`` (missing optional args take their defaults)."""
        return self.call(proj, self.complete(values))

    def run_alone(self, embedder: Embedder | None, values: dict[str, Any]) -> Any:
        """Call a verb that needs no project (``alone`` is set) with ``values``."""
        if self.alone is None:
            raise VerbUsageError(f"{self.name} needs a project")
        return self.alone(embedder, self.complete(values))

    def complete(self, values: dict[str, Any]) -> dict[str, Any]:
        """``values`` with every arg, defaults filled in; unknown and missing args are usage errors."""
        known = {a.name for a in self.args}
        unknown = sorted(set(values) - known)
        if unknown:
            raise VerbUsageError(f"{self.name} takes no argument {unknown[0]!r}; its arguments are {sorted(known)}")
        full = {a.name: values.get(a.name, a.default) for a in self.args}
        missing = [a.name for a in self.args if a.required and full[a.name] is None]
        if missing:
            raise VerbUsageError(f"{self.name} needs {missing[0]!r}")
        return full


def _dict(result: Any) -> Any:
    return result.to_dict()


def _text(result: Any) -> str:
    return str(result.to_text())


def _rows(frame: Any) -> list[dict[str, Any]]:
    return list(frame.to_dicts())


def result_text(result: Any, at: str | None = None) -> str:
    """A QueryResult or ReplayResult as the CLI prints it; ``at`` is the version's label
    ("flask-1.0 (v6)") when the caller knows it."""
    where = at if at is not None else f"index version {result.index_version}"
    lines = [f"{type(result).__name__} {result.query_id} at {where} ({result.latency_ms:.1f} ms)"]
    if hasattr(result, "matches_original"):  # a ReplayResult (not imported: this module stays light)
        if result.original_query_id is None:
            lines.append("  a text run as of this version: no original query to compare with")
        else:
            verdict = "matches" if result.matches_original else "DIFFERS FROM"
            lines.append(f"  replay {verdict} original {result.original_query_id}")
    for c in result.chunks:
        preview = " ".join(c.text.split())[:90]
        lines.append(f"  #{c.rank} {c.score:.4f} {c.source} [{c.charspan[0]}:{c.charspan[1]}] {preview}")
    if result.answer is not None:
        lines.append(f"answer ({result.model}):")
        lines.append(result.answer)
    return "\n".join(lines)


def _events_text(frame: Any) -> str:
    """One line per event; a query's first event also shows its question."""
    lines = []
    for r in frame.iter_rows(named=True):
        line = (
            f"{r['ts']:%Y-%m-%d %H:%M:%S}  {r['type']:<34} v{r['index_version']}  {r['query_id'] or r['doc_id'] or ''}"
        )
        if r["type"].endswith("query.received"):
            line += f"  {json.loads(r['payload']).get('text', '')!r}"
        lines.append(line)
    return "\n".join(lines)


def _trace_text(frame: Any) -> str:
    return "\n".join(
        f"{r['ts']:%Y-%m-%d %H:%M:%S.%f}  v{r['index_version']}  {r['type']:<32} {r['payload'][:100]}"
        for r in frame.iter_rows(named=True)
    )


def _snapshots_text(snaps: Any) -> str:
    return str(snaps.to_text())


def _snapshot_json(snap: Any) -> Any:
    return None if snap is None else snap.to_dict()


def _snapshot_text(snap: Any) -> str:
    return "unchanged since the last snapshot; nothing to do" if snap is None else repr(snap)


def _snapshot_text_in(snap: Any, proj: Project) -> str:
    if snap is None:
        last = proj.snapshots()[-1]
        return f"unchanged since snapshot {last.label!r} (v{last.index_version}); nothing to do"
    return repr(snap)


def _labelled_text(result: Any, proj: Project) -> str:
    return result_text(result, proj.version_label(result.index_version))


def _verify_text(report: Any) -> str:
    """The summary when the history is intact, else one line per problem (for grep and CI logs)."""
    return str(report.to_text()) if report.ok else "\n".join(report.problems)


def _damage_found(exc: ProjectDamagedError) -> Any:
    from ragtt.verify import VerifyReport

    return VerifyReport(ok=False, problems=[str(exc)])


def _compare_configs(embedder: Embedder | None, a: dict[str, Any]) -> Any:
    from ragtt.config import PipelineConfig
    from ragtt.timetravel.compare import compare_configs

    if bool(a["corpus"]) == bool(a["texts"]):
        raise VerbUsageError(
            "compare_configs takes either a corpus (files and folders) or texts ({source: text}), not both"
        )
    config_a, config_b = (PipelineConfig.from_dict(a[name]) for name in ("config_a", "config_b"))
    return compare_configs(a["texts"] or a["corpus"], config_a, config_b, a["queries"], embedder=embedder)


def _ingest(proj: Project, a: dict[str, Any]) -> Any:
    if bool(a["paths"]) == bool(a["texts"]):
        raise VerbUsageError("ingest takes either paths (files and folders) or texts ({source: text}), not both")
    if a["texts"]:
        if a["engine"] != "local" or a["ray_address"] is not None:
            raise VerbUsageError("in-memory texts are ingested here (engine 'local'); the Ray engine ingests paths")
        return proj.ingest_texts(a["texts"])
    return proj.ingest(
        a["paths"],
        prune=a["prune"],
        follow_symlinks=a["follow_symlinks"],
        engine=a["engine"],
        ray_address=a["ray_address"],
    )


def _snapshot(proj: Project, a: dict[str, Any]) -> Any:
    return proj.snapshot_if_changed(a["label"]) if a["if_changed"] else proj.snapshot(a["label"])


def _regression_run(proj: Project, a: dict[str, Any]) -> Any:
    return proj.regression.run(a["suite"], threshold=a["threshold"], match=a["match"])


def _regression_capture(proj: Project, a: dict[str, Any]) -> Any:
    suite = proj.regression.capture(a["queries"], a["name"], top_k=a["top_k"], mode=a["mode"], at=a["at"])
    if a["out"]:
        suite.save(a["out"])
    return suite


def _suite_text(suite: Any) -> str:
    return f"captured {len(suite.queries)} golden queries at v{suite.index_version} ({suite.name})"


# Arguments several verbs share, declared once.
TOP_K = Arg(
    "top_k",
    int,
    "how many chunks to retrieve (default: the project's config)",
    flags=("--top-k",),
    minimum=1,
    maximum=MAX_TOP_K,
)
MODE = Arg("mode", str, "retrieval mode (default: the project's config)", flags=("--mode",), choices=MODES)
QUERY_ID = Arg("query_id", str, "id of a logged query or replay", required=True, flags=("--query-id",))
LEFT = Arg(
    "left",
    str,
    "query or replay id on the left ('last': the other's question, last run)",
    required=True,
    flags=("--left",),
)
RIGHT = Arg(
    "right",
    str,
    "query or replay id on the right ('last': the left's question, last run)",
    required=True,
    flags=("--right",),
)
A = Arg("a", At, "version, snapshot label or ISO datetime", required=True)
B = Arg("b", At, "version, snapshot label or ISO datetime", required=True)


VERBS: dict[str, Verb] = {}


def verb(v: Verb) -> Verb:
    if v.name in VERBS:
        raise ValueError(f"verb {v.name!r} is declared twice")
    VERBS[v.name] = v
    return v


verb(
    Verb(
        "ingest",
        "ingest files and folders (a folder is mirrored), or in-memory texts, in one index version",
        (
            Arg("paths", list[str], "files and folders to ingest", default=[]),
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
        ),
        _ingest,
        _dict,
        repr,
        route=("POST", "/ingest"),
        writes_index=True,
        creates=True,
        exit_code=lambda report: 1 if report.failed else 0,
    )
)

verb(
    Verb(
        "query",
        "retrieve (and answer) at the latest index version",
        (
            Arg("text", str, "the question (several words are one text)", required=True, words=True),
            TOP_K,
            MODE,
            Arg("generate", bool, "also generate an answer", default=True, flags=("--generate",)),
        ),
        lambda p, a: p.query(a["text"], top_k=a["top_k"], mode=a["mode"], generate=a["generate"]),
        _dict,
        result_text,
        route=("POST", "/query"),
        to_text_in=_labelled_text,
    )
)

verb(
    Verb(
        "replay",
        "re-run a logged query against the exact version and plan it ran with",
        (QUERY_ID, Arg("generate", bool, "also generate an answer", default=False, flags=("--generate",))),
        lambda p, a: p.replay(a["query_id"], generate=a["generate"]),
        _dict,
        result_text,
        route=("POST", "/replay"),
        to_text_in=_labelled_text,
    )
)

verb(
    Verb(
        "replay_as_of",
        "run a text against the index as it was at a version, snapshot label or datetime",
        (
            Arg("text", str, "the question", required=True, flags=("--text",)),
            Arg("at", At, "version number, snapshot label, or ISO datetime", required=True, flags=("--at", "--as-of")),
            TOP_K,
            MODE,
            Arg("generate", bool, "also generate an answer", default=False, flags=("--generate",)),
        ),
        lambda p, a: p.replay_text(a["text"], at=a["at"], top_k=a["top_k"], mode=a["mode"], generate=a["generate"]),
        _dict,
        result_text,
        route=("POST", "/replay/as-of"),
        cli_name="replay",
        to_text_in=_labelled_text,
    )
)

verb(
    Verb(
        "diff",
        "diff two queries or replays",
        (LEFT, RIGHT),
        lambda p, a: p.diff(a["left"], a["right"]),
        _dict,
        _text,
        route=("POST", "/diff"),
        html=lambda r: str(r.to_html()),
        html_route="/diff/{left}/{right}/html",
    )
)

verb(
    Verb(
        "trace",
        "every event of one query or replay",
        (Arg("query_id", str, "query or replay id", required=True),),
        lambda p, a: p.trace(a["query_id"]),
        _rows,
        _trace_text,
        route=("GET", "/query/{query_id}"),
    )
)


def _export_traces(proj: Project, a: dict[str, Any]) -> Any:
    otlp = proj.export_traces(a["query_id"], endpoint=a["endpoint"])
    if a["out"]:
        with open(a["out"], "w", encoding="utf-8") as out:
            out.write(dumps(otlp))
    return otlp


def _traces_text(otlp: Any) -> str:
    spans = [s for r in otlp["resourceSpans"] for scope in r["scopeSpans"] for s in scope["spans"]]
    return "\n".join(f"{s['traceId']} {s['spanId']} {s['name']}" for s in spans)


verb(
    Verb(
        "export_traces",
        "a query's or replay's OpenTelemetry trace (OTLP/JSON, OpenInference spans Phoenix shows)",
        (
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
        _export_traces,
        lambda otlp: otlp,
        _traces_text,
        route=("GET", "/query/{query_id}/traces"),
    )
)


def _utc(when: datetime | None) -> datetime | None:
    return when.replace(tzinfo=UTC) if when is not None and when.tzinfo is None else when  # naive means UTC


verb(
    Verb(
        "events",
        "the event log, oldest first",
        (
            Arg("type", list[str], "only these event types (repeatable)", default=[], flags=("--type",)),
            Arg("query_id", str, "only the events of this query or replay", flags=("--query-id",)),
            Arg("since", datetime, "only events at or after this ISO datetime (UTC if no offset)", flags=("--since",)),
            Arg("until", datetime, "only events at or before this ISO datetime (UTC if no offset)", flags=("--until",)),
        ),
        lambda p, a: p.events.frame(
            types=a["type"] or None, query_id=a["query_id"], since=_utc(a["since"]), until=_utc(a["until"])
        ),
        _rows,
        _events_text,
        route=("GET", "/events"),
    )
)

verb(
    Verb(
        "snapshot",
        "tag the latest index version with a label",
        (
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
        _snapshot,
        _snapshot_json,
        _snapshot_text,
        route=("POST", "/snapshot"),
        writes_index=True,
        to_text_in=_snapshot_text_in,
    )
)

verb(
    Verb(
        "snapshots",
        "list snapshots",
        (),
        lambda p, a: p.snapshots(),
        lambda snaps: [s.to_dict() for s in snaps],
        _snapshots_text,
        route=("GET", "/snapshots"),
    )
)

verb(
    Verb(
        "lineage",
        "why chunks entered or left the top-k between two runs",
        (LEFT, RIGHT),
        lambda p, a: p.lineage(a["left"], a["right"]),
        _dict,
        _text,
        route=("GET", "/lineage/{left}/{right}"),
    )
)

verb(
    Verb(
        "snapshot_diff",
        "documents and chunks changed between two versions",
        (A, B),
        lambda p, a: p.snapshot_diff(a["a"], a["b"]),
        _dict,
        _text,
        route=("GET", "/snapshots/{a}/{b}/diff"),
    )
)

verb(
    Verb(
        "drift",
        "embedding drift per source between two versions",
        (
            A,
            B,
            Arg(
                "threshold",
                float,
                "cosine below which a chunk counts as drifted",
                default=0.9,
                flags=("--threshold",),
                minimum=0.0,
                maximum=1.0,
            ),
        ),
        lambda p, a: p.drift(a["a"], a["b"], threshold=a["threshold"]),
        _dict,
        _text,
        route=("GET", "/drift/{a}/{b}"),
    )
)

verb(
    Verb(
        "bisect",
        "first version where a predicate on a query's result changes",
        (
            Arg("query", str, "a query id (its recorded plan is used) or a query text", required=True),
            Arg(
                "predicate",
                str,
                "chunk:<id> | source:<name> | answer:<substring>",
                required=True,
                flags=("--predicate",),
            ),
            Arg("versions", list[int], "versions to search (default: every data version)", flags=("--versions",)),
        ),
        lambda p, a: p.bisect(a["query"], a["predicate"], a["versions"] or None),
        _dict,
        _text,
        route=("POST", "/bisect"),
    )
)

verb(
    Verb(
        "compare_configs",
        "two PipelineConfigs on one corpus (throwaway projects, one embedding cache), query by query",
        (
            Arg("corpus", list[str], "files and folders to ingest under both configs", default=[]),
            Arg(
                "texts",
                dict[str, str],
                "an in-memory corpus: {source name: text}",
                default={},
                fronts=frozenset({"rest", "mcp"}),
            ),
            Arg(
                "config_a",
                dict[str, Any],
                'PipelineConfig fields as a JSON object, e.g. {"retrieval_mode": "vector"}',
                required=True,
                flags=("--config-a",),
            ),
            Arg("config_b", dict[str, Any], "the other config, the same way", required=True, flags=("--config-b",)),
            Arg("queries", list[str], "the queries to compare (repeatable)", required=True, flags=("--query",)),
        ),
        lambda p, a: _compare_configs(p.embedder, a),
        _dict,
        _text,
        route=("POST", "/compare-configs"),
        alone=_compare_configs,
    )
)

verb(
    Verb(
        "regression_run",
        "run a golden suite: exit 0 pass, 1 drift, 2 error",
        (
            Arg("suite", str, "path of the golden suite JSON file", required=True),
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
        ),
        _regression_run,
        lambda report: {**report.to_dict(), "exit_code": report.exit_code},
        _text,
        route=("POST", "/regression/run"),
        cli_name="test run",
        exit_code=lambda report: report.exit_code,
    )
)

verb(
    Verb(
        "regression_capture",
        "record golden queries from the current index",
        (
            Arg("queries", list[str], "the golden queries", required=True, flags=("--query",)),
            Arg("name", str, "suite name", required=True, flags=("--name",)),
            Arg("out", str, "also write the suite JSON here", flags=("-o", "--out")),
            TOP_K,
            MODE,
            Arg("at", At, "capture at this version, snapshot label or ISO datetime (default: latest)", flags=("--at",)),
        ),
        _regression_capture,
        _dict,
        _suite_text,
        route=("POST", "/regression/capture"),
        cli_name="test capture",
    )
)


def _prune(proj: Project, a: dict[str, Any]) -> Any:
    keep = [int(k) if k.isascii() and k.isdigit() else k for k in a["keep"] or []]  # a version, or an id/label
    return proj.prune(max_snapshots=a["max_snapshots"], max_age=a["max_age"], keep=keep)


verb(
    Verb(
        "prune",
        "forget old runs and the index versions nothing retained needs (recorded in the hash chain)",
        (
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
        _prune,
        _dict,
        _text,
        route=("POST", "/prune"),
        writes_index=True,
    )
)

verb(
    Verb(
        "verify",
        "re-walk the history: hash chain, guards, versions, tags and documents",
        (),
        lambda p, a: p.verify(),
        _dict,
        _verify_text,
        route=("GET", "/verify"),
        exit_code=lambda report: 0 if report.ok else 1,
        on_damage=_damage_found,
    )
)


def cli_type(arg: Arg) -> Callable[[str], Any]:
    """The argparse ``type=`` for ``arg``: its range and choices, checked with a message that says what came."""
    base = typing.get_args(arg.type)[0] if typing.get_origin(arg.type) is list else arg.type

    def convert(text: str) -> Any:
        if typing.get_origin(base) is dict:
            try:
                value: Any = json.loads(text)
            except json.JSONDecodeError as exc:
                raise argparse.ArgumentTypeError(f"expected a JSON object; got {text!r} ({exc})") from None
            if not isinstance(value, dict):
                raise argparse.ArgumentTypeError(f"expected a JSON object, {{...}}; got {text!r}")
            return value
        if base is int:
            if not (text.isascii() and text.isdigit()):  # '²' is a digit to Python, not to a user
                raise argparse.ArgumentTypeError(f"expected a whole number; got {text!r}")
            value = int(text)
        elif base is float:
            try:
                value = float(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"expected a number; got {text!r}") from None
        elif base is datetime:
            try:
                value = datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"expected an ISO datetime, e.g. 2026-03-01T12:00Z; got {text!r}"
                ) from None
        else:
            value = text
        low = arg.minimum if arg.minimum is not None else float("-inf")
        high = arg.maximum if arg.maximum is not None else float("inf")
        if base in (int, float) and not low <= value <= high:  # NaN fails this too
            raise argparse.ArgumentTypeError(f"expected a number from {low:g} to {high:g}; got {text!r}")
        if arg.choices is not None and value not in arg.choices:
            raise argparse.ArgumentTypeError(f"expected one of {', '.join(arg.choices)}; got {text!r}")
        return value

    return convert


def dumps(data: Any, indent: int | None = None) -> str:
    """JSON as every front end writes it (datetimes as ISO text, non-ASCII kept)."""
    return json.dumps(
        data,
        ensure_ascii=False,
        indent=indent,
        default=lambda v: v.isoformat() if hasattr(v, "isoformat") else str(v),
    )
