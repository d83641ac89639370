"""The ``ragtt`` command: the same verbs as the notebook magics, for shells and CI jobs.

User errors exit 2 with one line on stderr; a failed ingest exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from ragtt import __version__
from ragtt.config import MAX_TOP_K
from ragtt.errors import RagttError
from ragtt.verbs import result_text

__all__ = ["main"]

Handler = Callable[[argparse.Namespace], int]


def _open(args: argparse.Namespace, *, create: bool = False) -> Any:
    """Only ``ingest`` creates a project; every other verb needs one to exist."""
    import ragtt

    embedder = ragtt.HashEmbedder() if args.embedder == "hash" else None
    return ragtt.Project.open(
        args.project,
        embedder=embedder,
        progress=sys.stderr.isatty(),
        create=create,
        events_uri=args.events_uri,
        index_uri=args.index_uri,
    )


def _print_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


def cmd_ingest(args: argparse.Namespace) -> int:
    with _open(args, create=True) as proj:
        report = proj.ingest(args.paths, prune=args.prune, follow_symlinks=args.follow_symlinks)
    if args.json:
        _print_json(report.to_dict())
    else:
        print(repr(report))
    return 1 if report.failed else 0


def cmd_snapshot(args: argparse.Namespace) -> int:
    with _open(args) as proj:
        snap = proj.snapshot_if_changed(args.label) if args.if_changed else proj.snapshot(args.label)
        if snap is None:
            last = proj.snapshots()[-1]
            print(f"unchanged since snapshot {last.label!r} (v{last.index_version}); nothing to do")
            return 0
    _print_json(snap.to_dict()) if args.json else print(repr(snap))
    return 0


def cmd_snapshots(args: argparse.Namespace) -> int:
    with _open(args) as proj:
        snaps = proj.snapshots()
    if args.json:
        _print_json([s.to_dict() for s in snaps])
    else:
        for snap in snaps:
            print(repr(snap))
        if not snaps:
            print("no snapshots yet (ragtt snapshot LABEL)")
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    with _open(args) as proj:
        result = proj.query(args.text, top_k=args.top_k, mode=args.mode, generate=not args.no_generate)
        at = proj.version_label(result.index_version)
    _print_json(result.to_dict()) if args.json else print(result_text(result, at))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    if bool(args.query_id) == bool(args.text):
        raise _UsageError("replay needs either --query-id ID, or --text TEXT with --as-of VERSION|LABEL|DATETIME")
    with _open(args) as proj:
        if args.query_id:
            result = proj.replay(args.query_id, generate=args.generate)
        else:
            if args.as_of is None:
                raise _UsageError("--text needs --as-of VERSION|LABEL|DATETIME")
            result = proj.replay_text(
                args.text, at=args.as_of, top_k=args.top_k, mode=args.mode, generate=args.generate
            )
        at = proj.version_label(result.index_version)
    _print_json(result.to_dict()) if args.json else print(result_text(result, at))
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    with _open(args) as proj:
        report = proj.diff(args.left, args.right)
    if args.html:
        Path(args.html).write_text(report.to_html(), encoding="utf-8")
        print(f"wrote {args.html}", file=sys.stderr)
    _print_json(report.to_dict()) if args.json else print(report.to_text())
    return 0


def cmd_trace(args: argparse.Namespace) -> int:
    with _open(args) as proj:
        frame = proj.trace(args.query_id)
    if args.json:
        _print_json(frame.to_dicts())
    else:
        for row in frame.iter_rows(named=True):
            print(
                f"{row['ts']:%Y-%m-%d %H:%M:%S.%f}  v{row['index_version']}  {row['type']:<32} {row['payload'][:100]}"
            )
    return 0


def cmd_events(args: argparse.Namespace) -> int:
    with _open(args) as proj:
        frame = proj.events.frame(types=args.type or None)
    if args.out:
        out = Path(args.out)
        if out.suffix == ".parquet":
            frame.write_parquet(out)
        elif out.suffix == ".csv":
            frame.write_csv(out)
        else:
            raise _UsageError(f"--out must end in .parquet or .csv; got {out.name!r}")
        print(f"wrote {len(frame)} events to {out}", file=sys.stderr)
    elif args.json:
        _print_json(frame.to_dicts())
    else:
        for row in frame.iter_rows(named=True):
            print(
                f"{row['ts']:%Y-%m-%d %H:%M:%S}  {row['type']:<34} v{row['index_version']}  "
                f"{row['query_id'] or row['doc_id'] or ''}"
            )
    return 0


def _show(args: argparse.Namespace, report: Any) -> None:
    _print_json(report.to_dict()) if args.json else print(report.to_text())


def cmd_lineage(args: argparse.Namespace) -> int:
    with _open(args) as proj:
        _show(args, proj.lineage(args.left, args.right))
    return 0


def cmd_snapshot_diff(args: argparse.Namespace) -> int:
    with _open(args) as proj:
        _show(args, proj.snapshot_diff(args.a, args.b))
    return 0


def cmd_drift(args: argparse.Namespace) -> int:
    with _open(args) as proj:
        _show(args, proj.drift(args.a, args.b, threshold=args.threshold))
    return 0


def cmd_bisect(args: argparse.Namespace) -> int:
    with _open(args) as proj:
        _show(args, proj.bisect(args.query, args.predicate, args.versions))
    return 0


def cmd_compare_configs(args: argparse.Namespace) -> int:
    import ragtt

    def config(text: str) -> ragtt.PipelineConfig:
        try:
            return ragtt.PipelineConfig.from_dict(json.loads(text))
        except json.JSONDecodeError as exc:
            raise _UsageError(f"a config must be a JSON object of PipelineConfig fields: {exc}") from None

    queries = _queries(args)
    embedder = ragtt.HashEmbedder() if args.embedder == "hash" else None
    _show(
        args,
        ragtt.compare_configs(args.corpus, config(args.config_a), config(args.config_b), queries, embedder=embedder),
    )
    return 0


def _queries(args: argparse.Namespace) -> list[str]:
    queries = list(args.query or [])
    if args.queries_file:
        lines = Path(args.queries_file).read_text(encoding="utf-8").splitlines()
        queries += [line.strip() for line in lines if line.strip()]
    if not queries:
        raise _UsageError("give queries with --query TEXT (repeatable) or --queries-file FILE (one per line)")
    return queries


def cmd_test_capture(args: argparse.Namespace) -> int:
    with _open(args) as proj:
        suite = proj.regression.capture(_queries(args), args.name, top_k=args.top_k, mode=args.mode, at=args.at)
        at = proj.version_label(suite.index_version)
    suite.save(args.out)
    print(f"captured {len(suite.queries)} golden queries at {at} into {args.out}")
    return 0


def cmd_test_run(args: argparse.Namespace) -> int:
    from ragtt.timetravel.regression import EXIT_ERROR, GoldenSuite

    try:
        suite = GoldenSuite.load(args.suite)
    except RagttError as exc:
        print(f"ragtt test run: {exc}", file=sys.stderr)
        return EXIT_ERROR
    with _open(args) as proj:
        report = proj.regression.run(suite, threshold=args.threshold, match=args.match)
    _show(args, report)
    return report.exit_code


def cmd_verify(args: argparse.Namespace) -> int:
    from ragtt.errors import ProjectDamagedError

    try:
        proj = _open(args)
    except ProjectDamagedError as exc:  # damage found while opening is a finding, not a usage error
        print(exc)
        return 1
    with proj:
        report = proj.verify()
    if args.json:
        _print_json(report.to_dict())
    elif report.ok:
        print(report.to_text())
    else:
        for problem in report.problems:
            print(problem)
    return 0 if report.ok else 1


def _export_store_uris(args: argparse.Namespace) -> None:
    """A server opens its Projects itself: the store URIs reach them as the environment does."""
    from ragtt.opening import EVENTS_URI_ENV, INDEX_URI_ENV

    for name, value in ((EVENTS_URI_ENV, args.events_uri), (INDEX_URI_ENV, args.index_uri)):
        if value is not None:
            os.environ[name] = value


def cmd_serve(args: argparse.Namespace) -> int:
    import ragtt

    try:
        from ragtt.serve import serve
    except ImportError as exc:
        raise _UsageError(f"needs the serve extra (pip install 'ragtt[serve]'): {exc}") from None
    _export_store_uris(args)
    serve(
        args.project,
        host=args.host,
        port=args.port,
        token=args.token,
        embedder=ragtt.HashEmbedder() if args.embedder == "hash" else None,
    )
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    import ragtt

    try:
        from ragtt.serve_mcp import run_stdio
    except ImportError as exc:
        raise _UsageError(f"needs the mcp extra (pip install 'ragtt[mcp]'): {exc}") from None
    _export_store_uris(args)
    run_stdio(args.project, embedder=ragtt.HashEmbedder() if args.embedder == "hash" else None)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from ragtt.demo import run_demo

    return run_demo(Path(args.out), embedder=args.embedder)


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """User errors in one line (what was wrong and where to look), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _count(text: str) -> int:
    """A positive count, in ASCII digits ('²' is a digit to Python, not to a user)."""
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= MAX_TOP_K:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to {MAX_TOP_K}; got {text!r}")
    return int(text)


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 <= value <= 1.0:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1; got {text!r}")
    return value


def _versions(text: str) -> list[int]:
    parts = [p.strip() for p in text.split(",")]
    if not all(p.isascii() and p.isdigit() and len(p) < 10 for p in parts):
        raise argparse.ArgumentTypeError(f"expected comma-separated version numbers, e.g. 3,7,12; got {text!r}")
    return [int(p) for p in parts]


def build_parser() -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    common.add_argument(
        "--project",
        default=os.environ.get("RAGTT_PROJECT", "./ragtt-project"),
        help="project folder (default: $RAGTT_PROJECT or ./ragtt-project)",
    )
    common.add_argument(
        "--embedder",
        choices=["default", "hash"],
        default=None,
        help="'hash' needs no torch; default: the embedder the project was built with",
    )
    common.add_argument(
        "--events-uri",
        default=None,
        metavar="URI",
        help="event log in Postgres (postgresql://...; default: $RAGTT_EVENTS_URI, else the project's events.db)",
    )
    common.add_argument(
        "--index-uri",
        default=None,
        metavar="URI",
        help="index on object storage (s3://bucket/prefix; credentials from the AWS_* environment; "
        "default: $RAGTT_INDEX_URI, else the project's lancedb/)",
    )
    common.add_argument("--json", action="store_true", help="print JSON instead of text")

    parser = _Parser(prog="ragtt", description="Time-travel debugging for RAG.")
    parser.add_argument("--version", action="version", version=f"ragtt {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, handler: Handler, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help_, description=help_)
        p.set_defaults(handler=handler)
        return p

    p = add("ingest", cmd_ingest, "ingest files and folders (a folder is mirrored) in one index version")
    p.add_argument("paths", nargs="+")
    p.add_argument(
        "--prune",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="remove indexed sources absent from the input (default: only for folder-only input)",
    )
    p.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="also ingest files that symlinks inside a folder point to outside it",
    )
    p = add("snapshot", cmd_snapshot, "tag the latest index version with a label")
    p.add_argument("label", help="with --if-changed, may hold {ts} and {version}")
    p.add_argument(
        "--if-changed",
        action="store_true",
        help="only if no snapshot names the latest version (for cron and CI); never collides",
    )
    add("snapshots", cmd_snapshots, "list snapshots")
    p = add("query", cmd_query, "retrieve (and answer) at the latest index version")
    p.add_argument("text")
    p.add_argument("--top-k", type=_count)
    p.add_argument("--mode", choices=["vector", "bm25", "hybrid"])
    p.add_argument("--no-generate", action="store_true", help="retrieval only")
    p = add("replay", cmd_replay, "replay a logged query, or a text as of a version/label/datetime")
    p.add_argument("--query-id")
    p.add_argument("--text")
    p.add_argument("--as-of", help="version number, snapshot label, or ISO datetime")
    p.add_argument("--top-k", type=_count)
    p.add_argument("--mode", choices=["vector", "bm25", "hybrid"])
    p.add_argument("--generate", action="store_true", help="also generate an answer")
    p = add("diff", cmd_diff, "diff two queries or replays")
    p.add_argument("--left", required=True)
    p.add_argument("--right", required=True)
    p.add_argument("--html", help="also write a self-contained HTML report here")
    p = add("trace", cmd_trace, "every event of one query or replay")
    p.add_argument("query_id")
    p = add("events", cmd_events, "the event log")
    p.add_argument("--type", action="append", help="only these event types (repeatable)")
    p.add_argument("--out", help="write to FILE.parquet or FILE.csv")
    p = add("lineage", cmd_lineage, "why chunks entered or left the top-k between two runs")
    p.add_argument("--left", required=True)
    p.add_argument("--right", required=True)
    p = add("snapshot-diff", cmd_snapshot_diff, "documents and chunks changed between two versions")
    p.add_argument("a", help="version, snapshot label or ISO datetime")
    p.add_argument("b")
    p = add("drift", cmd_drift, "embedding drift per source between two versions")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--threshold", type=_fraction, default=0.9)
    p = add("bisect", cmd_bisect, "first version where a predicate on a query's result changes")
    p.add_argument("query", help="a query id (its recorded plan is used) or a query text")
    p.add_argument("--predicate", required=True, help="chunk:<id> | source:<name> | answer:<substring>")
    p.add_argument(
        "--versions", type=_versions, help="comma-separated versions to search (default: every data version)"
    )
    p = add("compare-configs", cmd_compare_configs, "two PipelineConfigs on one corpus, query by query")
    p.add_argument("corpus", nargs="+")
    p.add_argument("--config-a", required=True, help='JSON, e.g. \'{"retrieval_mode": "vector"}\'')
    p.add_argument("--config-b", required=True)
    p.add_argument("--query", action="append")
    p.add_argument("--queries-file")
    test = sub.add_parser("test", help="golden-query regression suites", description="golden-query regression")
    test_sub = test.add_subparsers(dest="test_command", required=True, metavar="ACTION")
    p = test_sub.add_parser("capture", parents=[common], help="record golden queries from the current index")
    p.set_defaults(handler=cmd_test_capture)
    p.add_argument("--name", required=True)
    p.add_argument("-o", "--out", required=True, help="suite JSON file to write")
    p.add_argument("--query", action="append")
    p.add_argument("--queries-file")
    p.add_argument("--top-k", type=_count)
    p.add_argument("--mode", choices=["vector", "bm25", "hybrid"])
    p.add_argument("--at", help="capture at this version, snapshot label or ISO datetime (default: latest)")
    p = test_sub.add_parser("run", parents=[common], help="run a golden suite; exit 0 pass, 1 drift, 2 error")
    p.set_defaults(handler=cmd_test_run)
    p.add_argument("suite")
    p.add_argument("--threshold", type=_fraction, default=0.8)
    p.add_argument(
        "--match",
        default="0.8",
        help="gate on passages found at this similarity (default 0.8), or: passages | chunks | sources",
    )
    p = add("verify", cmd_verify, "re-walk the history: exit 0 when intact, 1 with one line per problem")
    p = add("serve", cmd_serve, "the REST API over the project (needs ragtt[serve]); OpenAPI at /docs")
    p.add_argument("--host", default="127.0.0.1", help="anything but loopback needs --token")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument(
        "--token", default=os.environ.get("RAGTT_TOKEN"), help="bearer token clients must send (default: $RAGTT_TOKEN)"
    )
    add("mcp", cmd_mcp, "the verbs as MCP tools over stdio (needs ragtt[mcp])")
    p = add("demo", cmd_demo, "the guided demo on the bundled sample (offline)")
    p.add_argument("--out", default="demo-output", help="folder for the demo project and report")
    _add_plugins(sub, common)
    return parser


def _add_plugins(sub: Any, common: argparse.ArgumentParser) -> None:
    """Verbs from other packages (``ragtt report`` comes from ragtt_nb) via the ``ragtt.cli``
    entry-point group: each is ``register(subparsers, common_parent)`` and sets ``handler``.
    The core never imports the notebook layer itself."""
    from importlib.metadata import entry_points

    for entry in sorted(entry_points(group="ragtt.cli"), key=lambda e: e.name):
        try:
            register = entry.load()
        except ImportError:
            continue  # the extra that provides it is not installed
        register(sub, common)


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("RUST_LOG", "error")
    argv = list(sys.argv[1:] if argv is None else argv)
    for position, arg in enumerate(argv, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:  # bytes the OS could not decode arrive as lone surrogates
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            print(f"ragtt: argument {position} is not valid UTF-8: {shown!r}", file=sys.stderr)
            return 2
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except _UsageError as exc:
        parser.exit(2, f"ragtt {args.command}: {exc}\n")
    except (RagttError, OSError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"ragtt {args.command}: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
