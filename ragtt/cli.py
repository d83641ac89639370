"""The ``ragtt`` command: every verb of the table (``ragtt.verbs``) as a sub-command, for
shells and CI jobs, plus the long-running ``serve``, ``mcp`` and ``watch``, ``demo`` and plugins
(``report``).

The verb sub-commands are generated (``ragtt.verbs.cli``): a verb added to the table is a
sub-command with no code here. What is the CLI's own sits beside them: the global options
(``--project``, ``--embedder``, ``--events-uri``, ``--index-uri``, ``--json``; before or
after the sub-command) and the options that read or write files (``OWN_OPTIONS``).

User errors exit 2 with one line on stderr; otherwise the verb says (a failed ingest exits 1).
A model that kept failing on its side (``ServiceError``: an LLM judge's rate limit) exits 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from ragtt import __version__
from ragtt.errors import RagttError, ServiceError
from ragtt.values import first_line
from ragtt.verbs import VERBS, Verb, VerbUsageError, dumps
from ragtt.verbs.cli import HelpFormatter, add_arguments, add_store_options, describe, fill, groups

__all__ = ["OWN_OPTIONS", "Own", "build_parser", "main"]

Handler = Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class Own:
    """An option that is the CLI's own (a file to read or write), beside a verb's generated args."""

    flags: tuple[str, ...]
    help: str
    metavar: str = "FILE"
    before: Callable[[Path, argparse.Namespace], None] | None = None  # fills the verb's args from the file
    after: Callable[[Path, Verb, Any], bool] | None = None  # writes the result; True: print nothing more

    @property
    def dest(self) -> str:
        return self.flags[-1].lstrip("-").replace("-", "_")


def _read_queries(path: Path, args: argparse.Namespace) -> None:
    """One query a line; or, from a dataset (.jsonl, .csv, .parquet, .json), its questions with
    their reference answers and must_contain strings (``ragtt.EvalDataset``)."""
    given = list(args.queries or [])
    if path.suffix.lower() not in (".jsonl", ".csv", ".parquet", ".json"):
        lines = path.read_text(encoding="utf-8").splitlines()
        args.queries = [*given, *(line.strip() for line in lines if line.strip())]
        return
    from ragtt.evaluation.dataset import EvalDataset

    items = EvalDataset.load(path).items
    args.queries = [*given, *(i.question for i in items)]
    if hasattr(args, "reference"):  # test capture: the answers' references travel with the questions
        args.reference = [*(args.reference or [""] * len(given)), *(i.reference or "" for i in items)]
        musts = args.must_contain or [""] * len(given)
        args.must_contain = [*musts, *("|".join(i.must_contain) for i in items)]


def _write_html(path: Path, verb: Verb, result: Any) -> bool:
    if verb.html is None:
        raise VerbUsageError(f"{verb.cli} has no HTML report")
    from ragtt.marker import write_atomic

    write_atomic(path, verb.html(result))
    print(f"wrote {path}", file=sys.stderr)
    return False


def _write_frame(path: Path, verb: Verb, frame: Any) -> bool:
    if path.suffix == ".parquet":
        frame.write_parquet(path)
    elif path.suffix == ".csv":
        frame.write_csv(path)
    else:
        raise VerbUsageError(f"--out must end in .parquet or .csv; got {path.name!r}")
    print(f"wrote {len(frame)} rows to {path}", file=sys.stderr)
    return True


def _matrix_suffix(path: Path, args: argparse.Namespace) -> None:
    if path.suffix not in (".parquet", ".csv", ".html"):  # said before the evaluation runs, not after
        raise VerbUsageError(f"--out must end in .parquet, .csv or .html; got {path.name!r}")


def _write_matrix(path: Path, verb: Verb, matrix: Any) -> bool:
    if path.suffix == ".html":
        return _write_html(path, verb, matrix)
    _write_frame(path, verb, matrix.frame())
    return False  # the matrix (and a gate's verdict) still print


_QUERIES_FILE = Own(
    ("--queries-file",),
    "also the queries in this file: one per line, or a dataset (.jsonl, .csv, .parquet) with references",
    before=_read_queries,
)

# By sub-command: the options only the CLI has. Everything else comes from the verb table.
OWN_OPTIONS: dict[str, tuple[Own, ...]] = {
    "diff": (Own(("--html",), "also write a self-contained HTML report here", after=_write_html),),
    "events": (Own(("--out",), "write to FILE.parquet or FILE.csv instead of printing", after=_write_frame),),
    "eval": (
        Own(
            ("--out",),
            "also write the cells to FILE.parquet or FILE.csv, or the interactive heatmap to FILE.html (one "
            "self-contained page: it opens from disk, offline, with each changed cell's diff in it)",
            before=_matrix_suffix,
            after=_write_matrix,
        ),
    ),
    "test capture": (_QUERIES_FILE,),
    "compare-configs": (_QUERIES_FILE,),
}


def _embedder(args: argparse.Namespace) -> Any:
    if args.embedder != "hash":
        return None
    from ragtt.index.embedders import HashEmbedder

    return HashEmbedder()


def _open(args: argparse.Namespace, *, create: bool = False) -> Any:
    """Only ``ingest`` creates a project; every other verb needs one to exist."""
    from ragtt.project import Project

    return Project.open(
        args.project,
        embedder=_embedder(args),
        progress=sys.stderr.isatty(),
        create=create,
        events_uri=args.events_uri,
        index_uri=args.index_uri,
    )


def _show(args: argparse.Namespace, verb: Verb, result: Any, proj: Any) -> None:
    if args.json:
        print(dumps(verb.to_json(result), indent=2))
    elif proj is not None and verb.to_text_in is not None:
        print(verb.to_text_in(result, proj))
    else:
        print(verb.to_text(result))


def run_verb(args: argparse.Namespace, verb: Verb, values: dict[str, Any]) -> int:
    """Run the verb the command line picked, print its result; its exit status."""
    from ragtt.errors import ProjectDamagedError

    own = OWN_OPTIONS.get(verb.cli, ())
    if verb.alone is not None:
        result = verb.run_alone(_embedder(args), values)
    else:
        try:
            proj = _open(args, create=verb.creates)
        except ProjectDamagedError as exc:
            if verb.on_damage is None:
                raise
            result = verb.on_damage(exc)
        else:
            with proj:
                result = verb.run(proj, values)
                if not _write(args, own, verb, result):
                    _show(args, verb, result, proj)
                return verb.exit_code(result)
    if not _write(args, own, verb, result):
        _show(args, verb, result, None)
    return verb.exit_code(result)


def _write(namespace: argparse.Namespace, own: Sequence[Own], verb: Verb, result: Any) -> bool:
    done = False
    for option in own:
        if option.after is not None and getattr(namespace, option.dest) is not None:
            done = option.after(Path(getattr(namespace, option.dest)), verb, result) or done
    return done


def _export_store_uris(args: argparse.Namespace) -> None:
    """A server opens its Projects itself: the store URIs reach them as the environment does."""
    from ragtt.opening import EVENTS_URI_ENV, INDEX_URI_ENV

    for name, value in ((EVENTS_URI_ENV, args.events_uri), (INDEX_URI_ENV, args.index_uri)):
        if value is not None:
            os.environ[name] = value


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from ragtt.serve import serve
    except ImportError as exc:
        raise VerbUsageError(f"needs the serve extra (pip install 'ragtt[serve]'): {exc}") from None
    _export_store_uris(args)
    serve(
        args.project, host=args.host, port=args.port, token=args.token, embedder=_embedder(args), threads=args.threads
    )
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    try:
        from ragtt.serve_mcp import run_stdio
    except ImportError as exc:
        raise VerbUsageError(f"needs the mcp extra (pip install 'ragtt[mcp]'): {exc}") from None
    _export_store_uris(args)
    run_stdio(args.project, embedder=_embedder(args))
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    """Mirror a folder into the project until Ctrl-C (or SIGTERM), which ends it between batches."""
    import signal

    from ragtt.feeds.watch import WatchBatch

    def show(batch: WatchBatch) -> None:
        print(dumps(batch.to_dict()) if args.json else batch.line(), flush=True)

    signal.signal(signal.SIGTERM, signal.default_int_handler)  # a service manager's stop is a Ctrl-C
    with _open(args, create=True) as proj:
        handle = proj.watch(
            args.docs,
            debounce=args.debounce,
            snapshot_every=args.snapshot_every,
            follow_symlinks=args.follow_symlinks,
            force_polling=args.force_polling,
            on_batch=show,
        )
        print(f"watching {handle.path} (Ctrl-C ends it between batches)", file=sys.stderr, flush=True)
        try:
            while handle.running:
                handle.join(1.0)
        except KeyboardInterrupt:
            print("stopping after the batch in progress (Ctrl-C again stops at once)", file=sys.stderr, flush=True)
            try:
                while handle.running:  # a batch may take longer than any fixed wait
                    handle.stop(1.0)
            except KeyboardInterrupt:  # as a kill -9 would: the next open settles the half-made batch
                print("stopped mid-batch: the next start converges to the folder", file=sys.stderr, flush=True)
                sys.stdout.flush()
                os._exit(130)
        for error in handle.errors:
            print(f"ragtt watch: {error}", file=sys.stderr)
        return 1 if handle.errors else 0


def cmd_demo(args: argparse.Namespace) -> int:
    from ragtt.demo import run_demo

    return run_demo(Path(args.out), embedder=args.embedder)


class _Parser(argparse.ArgumentParser):
    """User errors in one line (what was wrong and where to look), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """The options every command takes. A sub-command's copy leaves unset what it was not
    given (``suppress``), so ``ragtt --project P query x`` keeps the P given before it."""
    group = parser.add_argument_group("global options (before or after the command)")
    actions = [
        group.add_argument(
            "--project",
            default=os.environ.get("RAGTT_PROJECT", "./ragtt-project"),
            help="project folder (default: $RAGTT_PROJECT or ./ragtt-project)",
        ),
        group.add_argument(
            "--embedder",
            choices=["default", "hash"],
            default=None,
            help="'hash' needs no torch; default: the embedder the project was built with",
        ),
        *add_store_options(group),
        group.add_argument("--json", action="store_true", help="print JSON instead of text"),
    ]
    if suppress:
        for action in actions:
            action.default = argparse.SUPPRESS


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line. Other packages' sub-commands (plugins) are on it unless ``command``,
    the one to be run, is ragtt's own: finding them reads every installed distribution's metadata."""
    common = _Parser(add_help=False)
    _global_options(common, suppress=True)
    parser = _Parser(prog="ragtt", description="Time-travel debugging for RAG.")
    parser.add_argument("--version", action="version", version=f"ragtt {__version__}")
    _global_options(parser, suppress=False)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    nested: dict[str, Any] = {}  # "test" -> its sub-parsers
    by_cli = groups(list(VERBS.values()))

    for cli, verbs in by_cli.items():
        *parent, name = cli.split()
        where = sub
        if parent:
            if parent[0] not in nested:
                actions = " | ".join(c for c in by_cli if c.split()[0] == parent[0])
                holder = sub.add_parser(parent[0], help=actions, description=actions)
                nested[parent[0]] = holder.add_subparsers(dest="action", required=True, metavar="ACTION")
            where = nested[parent[0]]
        text = describe(verbs)
        p: argparse.ArgumentParser = where.add_parser(
            name,
            parents=[common],
            help=text["help"],
            description=text["description"],
            epilog=text["epilog"],
            formatter_class=HelpFormatter,
        )
        add_arguments(p, verbs)
        own = OWN_OPTIONS.get(cli, ())
        if own:
            mine = p.add_argument_group("only in the CLI")
            for option in own:
                mine.add_argument(*option.flags, dest=option.dest, metavar=option.metavar, help=option.help)
        p.set_defaults(verbs=verbs, command_parser=p)

    def add(name: str, handler: Handler, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help_, description=help_)
        p.set_defaults(handler=handler)
        return p

    p = add("serve", cmd_serve, "the REST API over the project (needs ragtt[serve]); OpenAPI at /docs")
    p.add_argument("--host", default="127.0.0.1", help="anything but loopback needs --token")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument(
        "--token", default=os.environ.get("RAGTT_TOKEN"), help="bearer token clients must send (default: $RAGTT_TOKEN)"
    )
    p.add_argument("--threads", type=int, help="requests served at once (default: 4 per CPU, 4 to 32)")
    add("mcp", cmd_mcp, "the verbs as MCP tools over stdio (needs ragtt[mcp])")
    p = add("watch", cmd_watch, "mirror a folder into the project as it changes: one index version per settled batch")
    p.add_argument("docs", metavar="DOCS", help="the folder to watch (caught up first, as ingest mirrors it)")
    p.add_argument("--debounce", default="1.6s", help="the longest changes are grouped into one batch (default 1.6s)")
    p.add_argument("--snapshot-every", help="snapshot every DURATION ('1h') or every N versions")
    p.add_argument("--follow-symlinks", action="store_true", help="also ingest what links lead to outside DOCS")
    p.add_argument("--force-polling", action="store_true", help="poll instead of OS events (network drives)")
    p = add("demo", cmd_demo, "the guided demo on the bundled sample (offline)")
    p.add_argument("--out", default="demo-output", help="folder for the demo project and report")
    if command not in sub.choices:
        _add_plugins(sub, common)
    return parser


class _Unsure(Exception):
    pass


class _Peek(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _Unsure(message)


def _command_word(argv: Sequence[str]) -> str | None:
    """The sub-command ``argv`` names: its first word once the global options are read; None
    when there is none or the global options are wrong (the full parser then says so)."""
    peek = _Peek(add_help=False)
    _global_options(peek, suppress=False)
    try:
        _, rest = peek.parse_known_args(argv)
    except _Unsure:
        return None
    return next((word for word in rest if not word.startswith("-")), None)


def _add_plugins(sub: Any, common: argparse.ArgumentParser) -> None:
    """Verbs from other packages (``ragtt report`` comes from the notebook package) via the ``ragtt.cli``
    entry-point group: each is ``register(subparsers, common_parent)`` and sets ``handler``.
    The core never imports the notebook layer itself."""
    from importlib.metadata import entry_points

    for entry in sorted(entry_points(group="ragtt.cli"), key=lambda e: e.name):
        try:
            register = entry.load()
        except ImportError:
            continue  # the extra that provides it is not installed
        register(sub, common)


def _one_line_warning(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None, line: Any = None
) -> None:
    """A warning as the CLI says things: one line, without the ragtt source line Python adds."""
    text = str(message).splitlines()[0].removeprefix("ragtt: ") if str(message) else category.__name__
    print(f"ragtt: warning: {text}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    from ragtt.tuning import tune_process

    tune_process()  # the CLI's process is ragtt's own: Lance's logs, reads and the arena cap
    warnings.showwarning = _one_line_warning
    argv = list(sys.argv[1:] if argv is None else argv)
    for position, arg in enumerate(argv, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:  # bytes the OS could not decode arrive as lone surrogates
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            print(f"ragtt: argument {position} is not valid UTF-8: {shown!r}", file=sys.stderr)
            return 2
    parser = build_parser(_command_word(argv))
    args, extra = parser.parse_known_args(argv)  # fill() gives the verb's flags to bare words
    command: argparse.ArgumentParser = getattr(args, "command_parser", parser)
    try:
        if hasattr(args, "verbs"):
            for option in OWN_OPTIONS.get(args.verbs[0].cli, ()):
                if option.before is not None and getattr(args, option.dest) is not None:
                    option.before(Path(getattr(args, option.dest)), args)
            return run_verb(args, *fill(command, args, extra, args.verbs))
        parser.parse_args(argv)  # a plugin or server command: argparse checks all of it
        return int(args.handler(args))
    except VerbUsageError as exc:
        command.error(str(exc))
    except (RagttError, OSError) as exc:
        message = first_line(exc)
        print(f"{command.prog}: {message}", file=sys.stderr)
        return 1 if isinstance(exc, ServiceError) else 2  # a model that kept failing is no bad input


if __name__ == "__main__":
    sys.exit(main())
