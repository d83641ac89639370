"""Full-text side: FTS5 match expressions that are safe for any input, and tokenizer checks.

``terms`` (the default) quotes every word of the input and ORs them, so operators, quotes,
NEAR, parentheses or SQL in the text are searched for as words, never interpreted.
"""

from __future__ import annotations

import re

from ragtt.errors import ConfigError, ValidationError

__all__ = ["QUERY_TEXT_MODES", "match_expression", "validate_tokenizer"]

QUERY_TEXT_MODES = ("terms", "phrase", "fts5")
MAX_TERMS = 64
_WORD = re.compile(r"\w+", re.UNICODE)
_TOKENIZERS = ("unicode61", "ascii", "porter", "trigram")
_OPTIONS = {
    "remove_diacritics": ("0", "1", "2"),
    "case_sensitive": ("0", "1"),
    "tokenchars": None,
    "separators": None,
    "categories": None,
}
_OPTION_VALUE = re.compile(r"^[A-Za-z0-9_.\-*]+$")


def _clean(text: str) -> str:
    # NUL ends a C string inside FTS5 and lone surrogates cannot be encoded: drop both
    return text.encode("utf-8", "replace").decode("utf-8").replace("\x00", " ")


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def match_expression(text: str, mode: str = "terms") -> str | None:
    """The FTS5 MATCH argument for ``text``, or None when nothing searchable remains."""
    if mode not in QUERY_TEXT_MODES:
        raise ValidationError(f"query_text_mode must be one of {QUERY_TEXT_MODES}; got {mode!r}")
    if mode == "fts5":
        return text if text.strip() else None
    cleaned = _clean(text)
    if mode == "phrase":
        words = _WORD.findall(cleaned)
        return _quote(" ".join(words)) if words else None
    seen: dict[str, None] = {}
    for word in _WORD.findall(cleaned):
        seen.setdefault(word.casefold(), None)
        if len(seen) >= MAX_TERMS:
            break
    return " OR ".join(_quote(word) for word in seen) or None


def validate_tokenizer(tokenizer: str) -> str:
    """Accept ``[porter] unicode61|ascii|trigram [option value ...]`` with plain option values."""
    if not isinstance(tokenizer, str):
        raise ConfigError(f"tokenizer must be a str like {'unicode61 remove_diacritics 2'!r}; got {tokenizer!r}")
    words = tokenizer.split()
    if not words or words[0] not in _TOKENIZERS:
        raise ConfigError(f"tokenizer must start with one of {_TOKENIZERS}; got {tokenizer!r}")
    rest = words[1:]
    if words[0] == "porter" and rest and rest[0] in _TOKENIZERS[:2] + _TOKENIZERS[3:]:
        rest = rest[1:]
    if len(rest) % 2:
        raise ConfigError(f"tokenizer options come in name/value pairs; got {tokenizer!r}")
    for name, value in zip(rest[::2], rest[1::2], strict=True):
        if name not in _OPTIONS:
            raise ConfigError(f"unknown tokenizer option {name!r}; known: {sorted(_OPTIONS)}")
        allowed = _OPTIONS[name]
        if (allowed is not None and value not in allowed) or not _OPTION_VALUE.match(value):
            raise ConfigError(f"tokenizer option {name} has an invalid value {value!r}")
    return " ".join(words)
