"""``%ragtt VERB ...`` and ``%%ragtt VERB``: each verb parses its words and calls one public
ragtt function, returning what it returned (a widget, a frame, a result with a rich repr).

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
from pathlib import Path
from typing import Any, NoReturn

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from traitlets import Bool, Int, Unicode

__all__ = ["VERBS", "RagttMagics", "parser_for", "question_mark_is_text"]


class _Parser(argparse.ArgumentParser):
    """argparse whose errors and ``-h`` raise UsageError instead of printing and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}\n{self.format_usage().strip()}")

    def print_help(self, file: Any = None) -> NoReturn:  # type: ignore[override]
        raise UsageError(self.format_help())

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise UsageError(message or self.format_usage())


Verb = Callable[["RagttMagics", argparse.Namespace], Any]
Arg = tuple[tuple[str, ...], dict[str, Any]]
VERBS: dict[str, tuple[str, list[Arg], Verb]] = {}


def arg(*flags: str, **kwargs: Any) -> Arg:
    """One ``add_argument`` call, written where the verb is declared."""
    return flags, kwargs


def verb(name: str, help_: str, *args: Arg) -> Callable[[Verb], Verb]:
    """Register ``%ragtt name`` with its arguments; the function gets the parsed namespace."""

    def register(fn: Verb) -> Verb:
        VERBS[name] = (help_, list(args), fn)
        return fn

    return register


def parser_for(name: str) -> _Parser:
    help_, args, _ = VERBS[name]
    parser = _Parser(prog=f"%ragtt {name}", description=help_)
    for flags, kwargs in args:
        parser.add_argument(*flags, **kwargs)
    return parser


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
    top_k = Int(0, help="top_k for %ragtt query (0: the project's config)").tag(config=True)
    mode = Unicode("", help="retrieval mode for %ragtt query: vector, bm25 or hybrid ('' = config)").tag(config=True)
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
        name, args = words[0], words[1:]
        if name not in VERBS:
            raise UsageError(f"unknown verb {name!r}; known: {', '.join(sorted(VERBS))}")
        if cell is not None and cell.strip():
            if name == "query":
                args = [*args, "--", cell.strip()]
            elif name == "bisect":
                args = [cell.strip(), *args]
            elif name == "replay":
                args = [*args, "--text", cell.strip()]
            else:
                args += _split(cell)
        ns = parser_for(name).parse_args(args)
        fn = VERBS[name][2]
        from ragtt import RagttError

        try:
            return fn(self, ns)
        except RagttError as exc:
            raise UsageError(f"%ragtt {name}: {exc}") from None

    # -- helpers ------------------------------------------------------------------------------

    def open_project(self, path: str, embedder: str | None = None, *, create: bool = False) -> Any:
        """Open a project; only ``create`` makes one where the folder holds none."""
        import ragtt

        chosen = self.embedder if embedder is None else embedder
        if chosen not in ("", "hash"):
            raise UsageError(f"embedder must be 'hash' or '' (the project's own); got {chosen!r}")
        if self._proj is not None:
            self._proj.close()
            self._proj = None
        try:
            self._proj = ragtt.Project.open(
                path, embedder=ragtt.HashEmbedder() if chosen == "hash" else None, progress=self.progress, create=create
            )
        except ragtt.NotAProjectError as exc:
            raise UsageError(f"{exc} (in a notebook: %ragtt open {path} --create)") from None
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


# -- the verbs ----------------------------------------------------------------------------------


@verb(
    "open",
    "open a project folder and make it the current one (--create: make one if there is none)",
    arg("path"),
    arg("--embedder", choices=["hash", ""], help="'hash': the deterministic test embedder"),
    arg("--create", action="store_true", help="create the project if the folder holds none"),
)
def _open(m: RagttMagics, a: argparse.Namespace) -> Any:
    return m.open_project(a.path, a.embedder, create=a.create)


@verb(
    "ingest",
    "ingest files and folders in one index version",
    arg("paths", nargs="+"),
    arg("--prune", action=argparse.BooleanOptionalAction, default=None),
)
def _ingest(m: RagttMagics, a: argparse.Namespace) -> Any:
    return m.project_for(create=True).ingest(a.paths, prune=a.prune)


@verb(
    "query",
    "retrieve (and answer) at the latest index version",
    arg("text", nargs="+", help="the question (in %%ragtt query: the cell body)"),
    arg("--top-k", type=int),
    arg("--mode", choices=["vector", "bm25", "hybrid"]),
    arg("--no-generate", action="store_true", help="retrieval only"),
)
def _query(m: RagttMagics, a: argparse.Namespace) -> Any:
    result = m.proj.query(
        " ".join(a.text), top_k=a.top_k or m.top_k or None, mode=a.mode or m.mode or None, generate=not a.no_generate
    )
    m.last_query_id = result.query_id
    return result


@verb("snapshot", "tag the latest index version with a label", arg("label"))
def _snapshot(m: RagttMagics, a: argparse.Namespace) -> Any:
    return m.proj.snapshot(a.label)


@verb("snapshots", "list snapshots")
def _snapshots(m: RagttMagics, a: argparse.Namespace) -> Any:
    return m.proj.snapshots()  # a list that renders as a table


@verb(
    "replay",
    "replay a logged query (QUERY_ID or 'last'), or --text TEXT --at VERSION|LABEL|DATETIME",
    arg("query_id", nargs="?"),
    arg("--text"),
    arg("--at"),
    arg("--generate", action="store_true"),
)
def _replay(m: RagttMagics, a: argparse.Namespace) -> Any:
    if bool(a.query_id) == bool(a.text):
        raise UsageError("%ragtt replay needs a QUERY_ID, or --text TEXT with --at VERSION|LABEL|DATETIME")
    if a.query_id:
        return m.proj.replay(m.query_id(a.query_id), generate=a.generate)
    if a.at is None:
        raise UsageError("%ragtt replay --text needs --at VERSION|LABEL|DATETIME")
    return m.proj.replay_text(a.text, at=_at(a.at), generate=a.generate)


@verb(
    "diff",
    "then vs now: a ChunkDiff widget of two queries or replays (--table: the DiffReport)",
    arg("left"),
    arg("right"),
    arg("--table", action="store_true"),
)
def _diff(m: RagttMagics, a: argparse.Namespace) -> Any:
    report = m.proj.diff(m.query_id(a.left), m.query_id(a.right))
    if a.table:
        return report
    from ragtt_nb.chunk_diff import ChunkDiff

    return ChunkDiff(report, proj=m.proj)


@verb(
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
        help="time: wall clock; versions: one equal slot per index version; auto (default): versions "
        "when the gaps between commits vary by more than 20x",
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


@verb(
    "events",
    "the event log as a polars DataFrame",
    arg("--type", action="append", help="only this type (repeatable)"),
    arg("--query-id"),
    arg("--since", help="ISO datetime"),
    arg("--until", help="ISO datetime"),
    arg("--last", type=int, help="only the last N events"),
)
def _events(m: RagttMagics, a: argparse.Namespace) -> Any:
    frame = m.proj.events.frame(
        types=a.type,
        since=_when(a.since),
        until=_when(a.until),
        query_id=m.query_id(a.query_id) if a.query_id else None,
    )
    return frame.tail(a.last) if a.last else frame


@verb("trace", "every event of one query or replay", arg("query_id"))
def _trace(m: RagttMagics, a: argparse.Namespace) -> Any:
    return m.proj.trace(m.query_id(a.query_id))


@verb("lineage", "why each chunk entered or left the top-k between two runs", arg("left"), arg("right"))
def _lineage(m: RagttMagics, a: argparse.Namespace) -> Any:
    return m.proj.lineage(m.query_id(a.left), m.query_id(a.right))


@verb(
    "drift",
    "embedding drift between two versions (numbers, snapshot labels or datetimes) as a scatter plot",
    arg("a"),
    arg("b"),
    arg("--query", help="a query id (or 'last') to place in the plot"),
    arg("--table", action="store_true", help="the per-source DriftReport instead of the plot"),
    arg("--color-by", choices=["version", "source"], default="version"),
)
def _drift(m: RagttMagics, a: argparse.Namespace) -> Any:
    if a.table:
        return m.proj.drift(_at(a.a), _at(a.b))
    from ragtt_nb.drift_scatter import DriftScatter

    query = m.query_id(a.query) if a.query else None
    return DriftScatter(m.proj, _at(a.a), _at(a.b), query=query, color_by=a.color_by)


@verb(
    "bisect",
    "the first version where PREDICATE changes for a query (id, 'last' or text); PREDICATE is "
    "chunk:ID, source:NAME, answer:TEXT or the name of a callable in the notebook",
    arg("query"),
    arg("predicate"),
)
def _bisect(m: RagttMagics, a: argparse.Namespace) -> Any:
    predicate: Any = a.predicate
    if not predicate.startswith(("chunk:", "source:", "answer:")):
        predicate = (m.shell.user_ns if m.shell else {}).get(a.predicate)
        if not callable(predicate):
            raise UsageError(
                f"predicate {a.predicate!r} is neither chunk:/source:/answer:... nor the name of a "
                "callable defined in this notebook"
            )
    return m.proj.bisect(m.query_id(a.query) if a.query == "last" else a.query, predicate)


@verb(
    "assertions",
    "the snapshot frame of a namespace's temporal assertions valid at a time (ISO datetime, "
    "UNIX seconds or 'now'; default: now)",
    arg("namespace"),
    arg("--at", help="ISO datetime, UNIX seconds or 'now' (the default)"),
    arg("--include-superseded", action="store_true", help="also the claims started by then and since closed"),
)
def _assertions(m: RagttMagics, a: argparse.Namespace) -> Any:
    from ragtt_nb.timeline_claims import check_namespace

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


@verb(
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


@verb("help", "list the verbs, or show one verb's arguments", arg("verb", nargs="?"))
def _help(m: RagttMagics, a: argparse.Namespace) -> Any:
    if a.verb:
        if a.verb not in VERBS:
            raise UsageError(f"unknown verb {a.verb!r}; known: {', '.join(sorted(VERBS))}")
        return Help(parser_for(a.verb).format_help())
    width = max(map(len, VERBS))
    lines = [f"  {name:<{width}}  {help_}" for name, (help_, _, _) in VERBS.items()]
    return Help("%ragtt VERB [ARGS]   (%ragtt help VERB for its arguments)\n" + "\n".join(lines))


def _at(text: str) -> Any:
    """A version number, or a snapshot label / ISO datetime left for ragtt to resolve."""
    return int(text) if text.isdigit() else text


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
