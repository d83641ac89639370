"""Checks of the values people pass in, shared by the API and every front end: text that
cannot be stored (a lone surrogate: half of a UTF-16 pair, or a byte the OS could not decode),
a label longer than a tag's file name allows, and the printable form of such a name.

A lone surrogate cannot be encoded as UTF-8, so it cannot be hashed, logged or indexed: it
is refused with the place it is at, before anything is written.
"""

from __future__ import annotations

from ragtt.errors import ConfigError

__all__ = [
    "MAX_LABEL_CHARS",
    "check_label_length",
    "check_text",
    "counted",
    "first_line",
    "printable",
    "quoted",
    "shorten",
    "unicode_problem",
]

# A snapshot label names a file in the index (``_refs/tags/<label>.json``): file systems allow
# 255 bytes a name, so labels stay well under it.
MAX_LABEL_CHARS = 200


def printable(name: str) -> str:
    """``name`` with what cannot be printed escaped: bytes the OS could not decode as ``\\xff``,
    other lone surrogates as ``\\ud800``."""
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return name.encode("utf-8", "backslashreplace").decode("utf-8")


def unicode_problem(value: str, fix: str = "pass text without it") -> str | None:
    """What makes ``value`` impossible to store as UTF-8 (None: nothing), then ``fix``."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(value[exc.start])
        if 0xDC80 <= code <= 0xDCFF:  # how Python reads a byte that is not UTF-8 (a file name, argv)
            what = f"is not valid UTF-8: it holds the byte \\x{code - 0xDC00:02x}"
        else:
            what = f"is not valid Unicode text: it holds a lone surrogate (\\u{code:04x})"
        return f"{what} at character {exc.start} of {quoted(value)}; {fix}"
    return None


def counted(n: int, one: str, many: str | None = None) -> str:
    """A count with its noun, singular for one: "1 query", "2 queries" (``many`` defaults to
    ``one`` + "s"; js/src/labels.js's ``counted`` is the same)."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def shorten(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, a cut one ending in an ellipsis."""
    return text if len(text) <= width else text[: width - 1] + "…"


def quoted(value: str, limit: int = 80) -> str:
    """``value`` quoted on one line for a message, escaped as ``printable`` does, cut after
    ``limit`` characters."""
    text = printable(value[:limit]).replace("\n", "\\n").replace("\r", "\\r")
    return f"'{text}'" + (f"... ({len(value)} characters)" if len(value) > limit else "")


def check_text(what: str, value: object) -> str:
    """``value`` if it is text that can be stored; else a ConfigError that says which and where."""
    if not isinstance(value, str):
        raise ConfigError(f"{what} must be text (a str); got {type(value).__name__}")
    problem = unicode_problem(value)
    if problem is not None:
        raise ConfigError(f"{what} {problem}")
    return value


def check_label_length(what: str, label: str) -> None:
    if len(label) > MAX_LABEL_CHARS:
        raise ConfigError(
            f"{what} is {len(label)} characters long; labels are at most {MAX_LABEL_CHARS} (a label names a "
            f"file in the index): pick a shorter one, e.g. {quoted(label[:40])}"
        )


def first_line(exc: BaseException) -> str:
    """An error in one line: its message's first line, else its type's name."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
