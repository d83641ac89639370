"""``%ragtt VERB ...`` and ``%%ragtt VERB``: the verbs of ragtt's verb table (``ragtt.verbs``),
with the same parser as ``ragtt VERB`` (``ragtt.verbs.cli``), plus display around them.

A table verb parses its words exactly as the CLI does (``%ragtt help VERB`` prints the same
help as ``ragtt VERB --help``), runs ``verb.run`` on the current project and returns what it
returned (a result with a rich repr), or a widget around it (``DISPLAY``: ``diff`` is a
ChunkDiff, ``drift`` a DriftScatter, ``eval`` a HistoryMatrix, with ``--table`` for the
report). ``last`` stands for the latest query this magic ran wherever a query id goes.
Commands that are the notebook's own: ``open``, ``timeline``, ``assertions``, ``pdf``, ``help``.

Settings are traits: ``%config RagttMagics.project = "./proj"``, ``RagttMagics.embedder``
(``"hash"`` for the deterministic test embedder; default ``$RAGTT_EMBEDDER`` or the
project's own), ``RagttMagics.top_k``, ``RagttMagics.mode``. Bad arguments and ragtt's own
errors become ``UsageError`` (one line, no traceback). In ``%%ragtt VERB`` the cell body is
the text for ``query``, ``replay --text`` and ``bisect``, and extra arguments otherwise.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import re
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from traitlets import Bool, Int, Unicode

from ragtt.errors import RagttError
from ragtt.verbs import VERBS, Verb
from ragtt.verbs.cli import HelpFormatter, add_arguments, add_store_options, describe, groups, parse

__all__ = ["COMMANDS", "DISPLAY", "RagttMagics", "parser_for", "question_mark_is_text", "similar_project"]


class _Parser(argparse.ArgumentParser):
    """argparse whose errors and ``-h`` raise UsageError instead of printing and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}\n{self.format_usage().strip()}")

    def print_help(self, file: Any = None) -> NoReturn:  # type: ignore[override]
        raise UsageError(self.format_help())

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise UsageError(message or self.format_usage())


MagicArg = tuple[tuple[str, ...], dict[str, Any]]
Show = Callable[["RagttMagics", Verb, dict[str, Any], argparse.Namespace], Any]
Run = Callable[["RagttMagics", argparse.Namespace], Any]


def arg(*flags: str, **kwargs: Any) -> MagicArg:
    """One ``add_argument`` call, written where the command is declared."""
    return flags, kwargs


@dataclass(frozen=True)
class Command:
    """One ``%ragtt`` command: a group of table verbs (``verbs``), or the notebook's own (``run``)."""

    name: str
    help: str
    args: tuple[MagicArg, ...] = ()  # the notebook's own options (display, for table verbs)
    verbs: tuple[Verb, ...] = ()
    run: Run | None = None
    stores: bool = False  # also --events-uri / --index-uri (open)

    def parser(self) -> _Parser:
        if self.verbs:
            text = describe(self.verbs)
            parser = _Parser(
                prog=f"%ragtt {self.name}",
                description=text["description"],
                epilog=text["epilog"],
                formatter_class=HelpFormatter,
            )
            add_arguments(parser, self.verbs)
            target: Any = parser.add_argument_group("only in notebooks") if self.args else parser
        else:
            parser = target = _Parser(prog=f"%ragtt {self.name}", description=self.help)
        for flags, kwargs in self.args:
            target.add_argument(*flags, **kwargs)
        if self.stores:
            add_store_options(parser)
        return parser


COMMANDS: dict[str, Command] = {}
# Display around a table verb, by its CLI name: the notebook's own options and what to return.
DISPLAY: dict[str, tuple[tuple[MagicArg, ...], Show]] = {}


def command(name: str, help_: str, *args: MagicArg, stores: bool = False) -> Callable[[Run], Run]:
    """Register ``%ragtt name``, a command of the notebook's own; the function gets the namespace."""

    def register(fn: Run) -> Run:
        COMMANDS[name] = Command(name, help_, args, run=fn, stores=stores)
        return fn

    return register


def display(cli: str, *args: MagicArg) -> Callable[[Show], Show]:
    """Display around the table verb ``cli``: its options and a function of the parsed values."""

    def register(fn: Show) -> Show:
        DISPLAY[cli] = (args, fn)
        return fn

    return register


def parser_for(name: str) -> _Parser:
    return _command(name).parser()


def _command(name: str) -> Command:
    """The command ``name``: the notebook's own, or the table verbs of that CLI name."""
    if name in COMMANDS:
        return COMMANDS[name]
    found = groups(list(VERBS.values())).get(name)
    if found is None:
        import difflib

        close = difflib.get_close_matches(name, _names(), n=1, cutoff=0.6)
        hint = f"did you mean %ragtt {close[0]}? " if close else ""
        raise UsageError(f"unknown verb {name!r}; {hint}known: {', '.join(_names())} (%ragtt help VERB)")
    own, _ = DISPLAY.get(name, ((), _run))
    return Command(name, describe(found)["help"], own, verbs=tuple(found))


def similar_project(path: str) -> str | None:
    """The project folder beside ``path`` whose name is closest to its name (a typo's target),
    spelled as ``path`` is ("./flaskprj" -> "./flaskproj"); None when there is none."""
    import difflib

    from ragtt.marker import MARKER

    given = Path(path).expanduser()
    parent = given.parent
    try:
        projects = [c.name for c in parent.iterdir() if c.is_dir() and (c / MARKER).is_file()]
    except OSError:
        return None
    close = difflib.get_close_matches(given.name, projects, n=1, cutoff=0.6)
    if not close:
        return None
    typed = path.rstrip("/")
    head = typed[: len(typed) - len(given.name)] if typed.endswith(given.name) else f"{parent}/"
    return f"{head}{close[0]}"


def _names() -> list[str]:
    return sorted({*groups(list(VERBS.values())), *COMMANDS})


def _run(m: RagttMagics, verb: Verb, values: dict[str, Any], ns: argparse.Namespace) -> Any:
    return m.run(verb, values)


# Args that hold a query id, where ``last`` means the latest query this magic ran.
QUERY_IDS = ("query_id", "left", "right", "query")
# The arg a cell body is, in %%ragtt VERB (the first of these the verb has).
CELL_TEXT = ("text", "query")


class Help(str):
    """Plain text that notebooks show as preformatted text."""

    def __repr__(self) -> str:
        return str(self)


@magics_class
class RagttMagics(Magics):
    project = Unicode("", help="Project folder opened on first use when no %ragtt open ran").tag(config=True)
    embedder = Unicode(
        "", help="'hash' for the deterministic test embedder; '' for the project's own (default: $RAGTT_EMBEDDER)"
    ).tag(config=True)
    top_k = Int(0, help="top_k for the verbs that take --top-k, when not given (0: the project's config)").tag(
        config=True
    )
    mode = Unicode("", help="retrieval mode for the verbs that take --mode: vector, bm25 or hybrid ('' = config)").tag(
        config=True
    )
    progress = Bool(
        True,
        help="show ingest progress bars (for ingests that embed more than 20 chunks or "
        "run longer than 2 s) and a line when the embedding model loads",
    ).tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        if not self.embedder:
            self.embedder = os.environ.get("RAGTT_EMBEDDER", "")
        self._proj: Any = None
        self.last_query_id: str | None = None
        _show_status_lines(self)

    @line_cell_magic
    def ragtt(self, line: str, cell: str | None = None) -> Any:
        """Time-travel debugging for RAG: ``%ragtt help`` lists the verbs."""
        words = _split(line)
        if not words:
            raise UsageError("usage: %ragtt VERB [ARGS]; %ragtt help lists the verbs")
        two = " ".join(words[:2])
        name = two if two in _names() else words[0]
        cmd = _command(name)
        args = words[len(name.split()) :]
        if cell is not None and cell.strip():
            args = _with_cell(cmd, args, cell)
        try:
            if cmd.run is not None:
                return cmd.run(self, cmd.parser().parse_args(args))
            ns, verb, values = parse(cmd.parser(), args, cmd.verbs)
            # With one run named (diff ID last), the core reads 'last' as that question's last run;
            # a verb of no project (a federation's) reads 'last' in its own log.
            implied = [values.get("left"), values.get("right")].count("last") == 1 or verb.alone is not None
            values = {
                k: self.query_id(v) if k in QUERY_IDS and v == "last" and not implied else v for k, v in values.items()
            }
            return DISPLAY.get(cmd.name, ((), _run))[1](self, verb, values, ns)
        except RagttError as exc:
            raise UsageError(f"%ragtt {name}: {exc}") from None

    def run(self, verb: Verb, values: dict[str, Any]) -> Any:
        """``verb.run`` on the current project (``top_k`` and ``mode`` default to the traits)."""
        names = {a.name for a in verb.args}
        if "top_k" in names and values.get("top_k") is None and self.top_k:
            values = {**values, "top_k": self.top_k}
        if "mode" in names and values.get("mode") is None and self.mode:
            values = {**values, "mode": self.mode}
        if verb.alone is not None:  # needs no project: the current one's embedder, or the setting
            return verb.run_alone(self._proj.embedder if self._proj is not None else self._embedder(), values)
        proj = self.project_for(create=verb.creates)
        try:
            return verb.run(proj, values)
        finally:  # even a failed write may have logged something (a query before its error)
            if verb.writes:
                _tell_changed(self, Path(proj.path).resolve(), verb.name)

    def _embedder(self) -> Any:
        import ragtt

        return ragtt.HashEmbedder() if self.embedder == "hash" else None

    # -- helpers ------------------------------------------------------------------------------

    def open_project(
        self,
        path: str,
        embedder: str | None = None,
        *,
        create: bool = False,
        events_uri: str | None = None,
        index_uri: str | None = None,
    ) -> Any:
        """Open a project; only ``create`` makes one where the folder holds none."""
        import ragtt

        chosen = self.embedder if embedder is None else embedder
        if chosen not in ("", "hash"):
            raise UsageError(f"embedder must be 'hash' or '' (the project's own); got {chosen!r}")
        try:  # the current project stays open until the new one is
            opened = ragtt.Project.open(
                path,
                embedder=ragtt.HashEmbedder() if chosen == "hash" else None,
                progress=self.progress,
                create=create,
                events_uri=events_uri,
                index_uri=index_uri,
            )
        except ragtt.NotAProjectError:
            kept = f"; {self._proj.path} is still the current project" if self._proj is not None else ""
            similar = similar_project(path)
            if similar is not None:
                raise UsageError(
                    f"no ragtt project at {path}: did you mean {similar}? (%ragtt open {similar}){kept}"
                ) from None
            raise UsageError(f"no ragtt project at {path}: %ragtt open {path} --create makes one there{kept}") from None
        if self._proj is not None:
            self._proj.close()
        self._proj = opened
        return self._proj

    @property
    def proj(self) -> Any:
        return self.project_for(create=False)

    def project_for(self, *, create: bool) -> Any:
        """The current project, opened on first use from ``RagttMagics.project``; only an
        ingest (``create=True``) makes one there."""
        if self._proj is None:
            if not self.project:
                raise UsageError("no project open: run %ragtt open PATH (or %config RagttMagics.project = PATH)")
            self.open_project(self.project, create=create)
        return self._proj

    def query_id(self, value: str) -> str:
        """``last`` means the latest query this magic ran."""
        if value == "last":
            if self.last_query_id is None:
                raise UsageError("no query has run in this session yet, so 'last' means nothing")
            return self.last_query_id
        return value


# "%ragtt query How do I set the secret key?" (also after "res = "): a verb and at least one
# more word, ending in "?". "%ragtt?" and "%ragtt query?" stay IPython's help.
_QUESTION_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?:(?P<target>[A-Za-z_][\w.]*)[ \t]*=[ \t]*)?%ragtt[ \t]+"
    r"(?P<args>\w+[ \t]+\S.*\?)[ \t]*$"
)


def question_mark_is_text(lines: list[str]) -> list[str]:
    """Input transformer (registered by ``%load_ext ragtt_nb``): a ``%ragtt`` line that ends in
    ``?`` is a question for ragtt, not IPython's ``obj?`` help request, which would swallow it."""
    out = []
    for line in lines:
        m = _QUESTION_LINE.match(line.rstrip("\n"))
        if m is None:
            out.append(line)
            continue
        target = f"{m['target']} = " if m["target"] else ""
        out.append(f"{m['indent']}{target}get_ipython().run_line_magic('ragtt', {m['args']!r})\n")
    return out


class _StatusLines(logging.Handler):
    """ragtt's status lines ("loading model …") under the cell, while ``progress`` is on."""

    def __init__(self, magics: RagttMagics) -> None:
        super().__init__(logging.INFO)
        self.magics = magics

    def emit(self, record: logging.LogRecord) -> None:
        if self.magics.progress:
            print(f"ragtt: {record.getMessage()}", file=sys.stderr, flush=True)


def _show_status_lines(magics: RagttMagics) -> None:
    logger = logging.getLogger("ragtt")
    for old in [h for h in logger.handlers if isinstance(h, _StatusLines)]:
        logger.removeHandler(old)  # the newest magics instance (one per shell in practice) speaks
    logger.addHandler(_StatusLines(magics))
    if logger.level == logging.NOTSET or logger.level > logging.INFO:
        logger.setLevel(logging.INFO)


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:  # an apostrophe in a query ("what's ...") is a word, not a quote
        return text.split()


def _with_cell(cmd: Command, args: list[str], cell: str) -> list[str]:
    """``%%ragtt VERB``: the body is the verb's text (a positional first, a flag last), else more words."""
    for name in CELL_TEXT:
        for verb in cmd.verbs:
            found = next((a for a in verb.args if a.name == name and "magic" in a.fronts), None)
            if found is not None:
                return [*args, found.flags[0], cell.strip()] if found.flags else [cell.strip(), *args]
    return args + _split(cell)


# -- display around the table's verbs -----------------------------------------------------------


@display("query")
def _query(m: RagttMagics, verb: Verb, values: dict[str, Any], ns: argparse.Namespace) -> Any:
    result = m.run(verb, values)
    m.last_query_id = result.query_id
    return result


@display("diff", arg("--table", action="store_true", help="the DiffReport instead of the ChunkDiff widget"))
def _diff(m: RagttMagics, verb: Verb, values: dict[str, Any], ns: argparse.Namespace) -> Any:
    report = m.run(verb, values)
    if ns.table:
        return report
    from ragtt_nb.chunk_diff import ChunkDiff

    return ChunkDiff(report, proj=m.proj)


@display(
    "drift",
    arg("--query", dest="show_query", metavar="QUERY_ID", help="a query id (or 'last') to place in the plot"),
    arg("--table", action="store_true", help="the per-source DriftReport instead of the scatter plot"),
    arg("--color-by", choices=["version", "source"], default="version", help="what colours the points"),
)
def _drift(m: RagttMagics, verb: Verb, values: dict[str, Any], ns: argparse.Namespace) -> Any:
    report = m.run(verb, values)
    if ns.table:
        return report
    from ragtt_nb.drift_scatter import DriftScatter

    query = m.query_id(ns.show_query) if ns.show_query else None
    return DriftScatter(report, proj=m.proj, query=query, color_by=ns.color_by)


@display(
    "eval",
    arg("--table", action="store_true", help="the ragtt.HistoryMatrix (its table) instead of the heatmap widget"),
)
def _eval(m: RagttMagics, verb: Verb, values: dict[str, Any], ns: argparse.Namespace) -> Any:
    """The HistoryMatrix widget, coloured by the first --metric asked for (else context_recall);
    with --baseline, the gate's verdict printed above it."""
    matrix = m.run(verb, values)
    if matrix.gate is not None:
        print(matrix.gate.to_text())
    if ns.table:
        return matrix
    from ragtt_nb.history_matrix import HistoryMatrix

    asked = (values.get("metric") or [None])[0]
    gated = matrix.gate.metric if matrix.gate is not None else None
    metric = gated or next((x for x in matrix.metrics if asked in (x, x.split("@")[0])), None)
    return HistoryMatrix(matrix, proj=m.proj, metric=metric)


@display("bisect")
def _bisect(m: RagttMagics, verb: Verb, values: dict[str, Any], ns: argparse.Namespace) -> Any:
    """In a notebook the predicate may also name a callable defined there."""
    predicate = values["predicate"]
    if not predicate.startswith(("chunk:", "source:", "answer:")):
        found = (m.shell.user_ns if m.shell else {}).get(predicate)
        if not callable(found):
            raise UsageError(
                f"predicate {predicate!r} is neither chunk:/source:/answer:... nor the name of a "
                "callable defined in this notebook"
            )
        values = {**values, "predicate": found}
    return m.run(verb, values)


@display("events", arg("--last", type=int, metavar="N", help="only the last N events"))
def _events(m: RagttMagics, verb: Verb, values: dict[str, Any], ns: argparse.Namespace) -> Any:
    frame = m.run(verb, values)
    return frame.tail(ns.last) if ns.last else frame


# -- the notebook's own commands ----------------------------------------------------------------


@command(
    "open",
    "open a project folder and make it the current one (--create: make one if there is none)",
    arg("path"),
    arg("--embedder", choices=["hash", ""], help="'hash': the deterministic test embedder"),
    arg("--create", action="store_true", help="create the project if the folder holds none"),
    stores=True,
)
def _open(m: RagttMagics, a: argparse.Namespace) -> Any:
    proj = m.open_project(a.path, a.embedder, create=a.create, events_uri=a.events_uri, index_uri=a.index_uri)
    _tell_front_end(m, Path(a.path).expanduser().resolve())
    return proj


# What a notebook's kernel says when it opens a project: JupyterLab's "RAG history" sidebar
# listens for it on IOPub (no polling); any other front end shows the text.
PROJECT_MIME = "application/vnd.ragtt.project+json"


def _tell_front_end(m: RagttMagics, path: Path) -> None:
    if getattr(m.shell, "kernel", None) is None:
        return  # a terminal IPython: no front end to tell
    from IPython.display import publish_display_data

    publish_display_data({"text/plain": f"ragtt project: {path}", PROJECT_MIME: {"path": str(path)}})


# What a kernel says after a magic wrote to a project (a query, a replay, an ingest, an
# evaluation...): the sidebar showing that project lists it again. It is an update of a display
# no output area shows (CHANGED_DISPLAY), so no front end draws it and no notebook keeps it; the
# sidebar reads it on IOPub, as it reads PROJECT_MIME.
CHANGED_MIME = "application/vnd.ragtt.changed+json"
CHANGED_DISPLAY = "ragtt-project-changed"


def _tell_changed(m: RagttMagics, path: Path, verb: str) -> None:
    if getattr(m.shell, "kernel", None) is None:
        return
    from IPython.display import publish_display_data

    data = {"text/plain": f"ragtt: {verb} wrote to {path}", CHANGED_MIME: {"path": str(path), "verb": verb}}
    publish_display_data(data, transient={"display_id": CHANGED_DISPLAY}, update=True)


@command(
    "timeline",
    "scrub the index history; with a QUERY_ID (or 'last'), watch its chunks change; with "
    "--assertions NAMESPACE, the claims' validity windows as lanes",
    arg("query_id", nargs="?"),
    arg("--at", type=int, help="the version to start at"),
    arg("--assertions", metavar="NAMESPACE", help="draw this assertion namespace's claims as lanes"),
    arg(
        "--axis",
        choices=["auto", "time", "versions"],
        default="auto",
        help="time: wall clock (or the ingests' --as-of-date); versions: one equal slot per index version; "
        "auto (default): versions unless the versions are spread evenly over the axis",
    ),
)
def _timeline(m: RagttMagics, a: argparse.Namespace) -> Any:
    from traitlets import TraitError

    from ragtt_nb.timeline import Timeline

    try:
        return Timeline(
            m.proj, m.query_id(a.query_id) if a.query_id else None, version=a.at, assertions=a.assertions, axis=a.axis
        )
    except (ValueError, TraitError) as exc:
        raise UsageError(f"%ragtt timeline: {exc}") from None


@command(
    "assertions",
    "the snapshot frame of a namespace's temporal assertions valid at a time (ISO datetime, "
    "UNIX seconds or 'now'; default: now)",
    arg("namespace"),
    arg("--at", help="ISO datetime, UNIX seconds or 'now' (the default)"),
    arg("--include-superseded", action="store_true", help="also the claims started by then and since closed"),
)
def _assertions(m: RagttMagics, a: argparse.Namespace) -> Any:
    from ragtt.views.timeline_claims import check_namespace

    store = m.proj.assertions

    try:
        check_namespace(store, a.namespace)
    except ValueError as exc:
        raise UsageError(f"%ragtt assertions: {exc}") from None
    number = None if a.at is None else _number(a.at)
    frame = store.snapshot(a.namespace, _assertion_time(a.at, number), include_superseded=a.include_superseded)
    return _with_datetimes(frame)


def _assertion_time(text: str | None, number: float | None) -> Any:
    from datetime import UTC, datetime

    if text is None or text.strip().lower() == "now":
        return datetime.now(UTC)
    if number is not None and math.isfinite(number):
        return number
    try:
        return _when(text)
    except UsageError:
        raise UsageError(
            f"%ragtt assertions: --at takes an ISO datetime (2024-05-01T12:00:00Z), UNIX seconds or 'now'; got {text!r}"
        ) from None


def _with_datetimes(frame: Any) -> Any:
    """Validity bounds (UNIX seconds in the store) as UTC datetimes, not 1.7961e9."""
    import polars as pl

    bounds = [c for c in ("valid_from", "valid_until") if c in frame.columns and frame[c].dtype == pl.Float64]
    return frame.with_columns(
        (pl.col(c) * 1_000_000).round().cast(pl.Int64).cast(pl.Datetime("us", "UTC")).alias(c) for c in bounds
    )


@command(
    "pdf",
    "a PDF source's pages with its chunks' regions (and a query's, ranked) drawn on them",
    arg("source"),
    arg("--query", help="a query id (or 'last') whose chunks to highlight"),
    arg("--page", type=int),
    arg("--path", help="the PDF file, when the project has no path for the source"),
)
def _pdf(m: RagttMagics, a: argparse.Namespace) -> Any:
    from ragtt_nb.pdf_overlay import PdfOverlay

    _check_pdf(m.proj, a.source, a.path)
    try:
        return PdfOverlay(m.proj, a.source, page=a.page, query_id=m.query_id(a.query) if a.query else None, path=a.path)
    except (ValueError, FileNotFoundError) as exc:
        raise UsageError(f"%ragtt pdf: {exc}") from None


def _check_pdf(proj: Any, source: str, path: str | None) -> None:
    """UsageErrors that say which: a source that is not a PDF, a file that moved or is not a PDF."""
    routes = proj.document(source).routes  # NotFoundError (a UsageError) for an unknown source
    where = path or proj.source_path(source)
    if not routes:
        was = f" (ingested from {where})" if where else ""
        raise UsageError(
            f"%ragtt pdf: {source!r} is not a PDF source{was}: it has no pages; %ragtt pdf draws "
            "the pages of PDF sources"
        )
    if where is None:
        raise UsageError(
            f"%ragtt pdf: the project records no file for {source!r} (it was ingested from memory); pass --path FILE"
        )
    file = Path(where)
    if not file.is_file() and path is not None:
        raise UsageError(f"%ragtt pdf: no file at --path {file}")
    if not file.is_file():
        raise UsageError(
            f"%ragtt pdf: {source!r} was ingested from {file}, which is not there any more "
            "(moved or deleted?); pass --path to where it is now"
        )
    with file.open("rb") as fh:
        if not fh.read(1024).lstrip().startswith(b"%PDF"):
            raise UsageError(f"%ragtt pdf: {file} is not a PDF file (no %PDF header), so it cannot be {source!r}")


@command("help", "list the verbs, or show one verb's arguments", arg("verb", nargs="*", help="a verb, e.g. query"))
def _help(m: RagttMagics, a: argparse.Namespace) -> Any:
    if a.verb:
        return Help(parser_for(" ".join(a.verb)).format_help())
    names = _names()
    width = max(map(len, names))
    lines = [f"  {name:<{width}}  {_command(name).help}" for name in names]
    return Help("%ragtt VERB [ARGS]   (%ragtt help VERB for its arguments)\n" + "\n".join(lines))


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _when(text: str | None) -> Any:
    if text is None:
        return None
    from datetime import UTC, datetime

    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"expected an ISO datetime such as 2024-05-01T12:00:00Z; got {text!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
