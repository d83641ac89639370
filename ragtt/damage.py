"""Damage found while reading is a named error: which store, which file or table, what to do.

A store's driver reports damage in its own words (SQLite: "database disk image is
malformed", "no such table"; Lance: an ``ArrowInvalid`` or ``OSError`` naming a file that is
not found or cannot be decoded; Postgres: an undefined table). ``named_damage`` turns such an
exception into a ``ProjectDamagedError`` that names the store and the file or table, and
says to restore the folder from a backup and run ``ragtt verify``; anything else is left
alone (None). ``guarded(context_of)`` applies it to every public method of a class, which
says itself how its instances' context is found (no reading of another module's privates).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ragtt.errors import ProjectDamagedError, RagttError

if TYPE_CHECKING:
    from ragtt.context import Context

__all__ = ["guarded", "index_damage", "named_damage"]

_T = TypeVar("_T")
_WHAT_TO_DO = "restore the project folder from a backup; `ragtt verify` lists what is affected"
_NO_TABLE = re.compile(r"no such table: (\w+)|relation \"?(\w+)\"? does not exist")
_SQLITE_FILES = (("events.db", "the event log"), ("assertions.db", "the assertion store"))
# a file inside the table folder, as the message goes on after ``<table>.lance``
_LANCE_FILE = re.compile(r"^/((?:data|_deletions|_indices|_versions|_transactions)/[\w./-]*[\w])")


def named_damage(exc: BaseException, ctx: Context) -> ProjectDamagedError | None:
    """The named error for ``exc``, when it is damage a store of ``ctx``'s project reported."""
    if isinstance(exc, RagttError) or not isinstance(exc, Exception):
        return None
    return _sqlite(exc, ctx) or _postgres(exc, ctx) or _lance(exc, ctx)


def _sqlite(exc: Exception, ctx: Context) -> ProjectDamagedError | None:
    from ragtt._sqlite import driver

    db = driver()
    if not isinstance(exc, db.DatabaseError) or isinstance(exc, db.IntegrityError):
        return None
    message = str(exc)
    if "locked" in message or "busy" in message:
        return None  # contention, not damage
    missing = _NO_TABLE.search(message)
    if not ("malformed" in message or "not a database" in message or "corrupt" in message or missing):
        return None
    return ProjectDamagedError(f"{_which_sqlite(ctx, message)} ({message}): the file is damaged; {_WHAT_TO_DO}")


def _which_sqlite(ctx: Context, message: str) -> str:
    """Which of the project's SQLite files is damaged: the first whose own check fails."""
    from ragtt.events import probe

    candidates = [(ctx.path / name, what) for name, what in _SQLITE_FILES]
    if ctx.cache.path is not None:
        candidates.append((ctx.cache.path, "the embedding cache"))
    for path, what in candidates:
        if not path.exists():
            continue
        missing = _NO_TABLE.search(message)
        if missing:
            table = missing.group(1) or missing.group(2)
            try:
                if probe.missing_schema(path, [table]) and what != "the embedding cache":
                    return f"{what} {path} has lost its table {table}"
            except Exception:  # the schema itself is unreadable: this is the file
                return f"{what} {path}"
            continue
        if probe.header_problem(path) or probe.integrity_problems(path):
            return f"{what} {path}"
    return f"a SQLite store of the project {ctx.path}"


def _postgres(exc: Exception, ctx: Context) -> ProjectDamagedError | None:
    if type(exc).__module__.split(".")[0] != "psycopg":
        return None
    missing = _NO_TABLE.search(str(exc))
    if missing is None:
        return None
    table = missing.group(1) or missing.group(2)
    return ProjectDamagedError(
        f"the event log {ctx.log.location} has lost its table {table}: the database is damaged; restore it "
        "from a backup; `ragtt verify` lists what is affected"
    )


def _lance(exc: Exception, ctx: Context) -> ProjectDamagedError | None:
    if not isinstance(exc, OSError | ValueError | RuntimeError):
        return None
    return index_damage(ctx.table.where, str(exc))


# what Lance and its object store say of a file that cannot be read: I/O, decoding, corruption
# (not any "invalid" or "error", which a bad argument or a busy store says too)
_UNREADABLE = (
    "corrupt",
    "decode",
    "eof",
    "i/o error",
    "io error",
    "ioerror",
    "checksum",
    "truncated",
    "out of range",
    "invalid data",
    "not a valid",
    "failed to read",
)


# what Lance's decoder says of bytes it cannot decode, naming its source rather than the file
_DECODER = ("encountered corrupt file", "/lance-encoding/src/")


def index_damage(where: str, message: str) -> ProjectDamagedError | None:
    """The named error for a message of Lance's (or its object store's) about a file of the
    table at ``where`` that is missing or cannot be read; None for any other message."""
    table_dir = Path(where).name  # <table>.lance: in the message, after a prefix Lance may shorten
    lowered = message.lower()
    if table_dir not in message:
        # Lance's decoder names no file ("Encountered corrupt file variable_full_zip: ...",
        # "Invalid user input: Invalid RLE values buffer size, .../lance-encoding/..."), but what
        # it decodes are the index's bytes: damage all the same
        if not any(sign in lowered for sign in _DECODER):
            return None
        kind = "cannot be read"
    elif "not found" in lowered or "no such file" in lowered:
        kind = "is missing"
    elif any(w in lowered for w in _UNREADABLE):
        kind = "cannot be read"
    else:
        return None
    found = _LANCE_FILE.match(message.split(table_dir, 1)[-1])
    name = found.group(1) if found else ""
    subject = (
        f"the index file {where}/{name}" if name else f"a file of the index {where} (`ragtt verify --deep` names it)"
    )
    first = message.strip().splitlines()[0]  # not empty: it names the table
    return ProjectDamagedError(f"{subject} {kind} ({first[:300]}); {_WHAT_TO_DO}")


def guarded(context_of: Callable[[Any], Context]) -> Callable[[type[_T]], type[_T]]:
    """A class decorator: every public method of the class raises damage by name, the damage
    judged against the context ``context_of(instance)`` gives."""

    def decorate(cls: type[_T]) -> type[_T]:
        for name, value in list(vars(cls).items()):
            if name.startswith("_") or not callable(value) or isinstance(value, classmethod | staticmethod):
                continue
            setattr(cls, name, _guard(value, context_of))
        return cls

    return decorate


def _guard(method: Callable[..., Any], context_of: Callable[[Any], Context]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except Exception as exc:
            damage = named_damage(exc, context_of(self))
            if damage is None:
                raise
            raise damage from None

    return call
