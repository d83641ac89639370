"""The one exception tree of ragtt.

    RagttError
    ├── ConfigError      invalid configuration, or a project opened with a mismatching embedder
    ├── IngestError      a source cannot be read or parsed
    ├── NotFoundError    an unknown query id, snapshot label, version, source or chunk
    ├── ReplayError      a past run cannot be reproduced faithfully
    ├── StoreError       the event log or index is in a state ragtt cannot work with
    │   └── NamespaceLockedError   another maintenance run holds the namespace
    └── ValidationError  a record or query breaks a rule of the temporal store
        └── SupersessionError      a successor cannot replace its predecessor

Messages say what was expected, what came, and what to do.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "IngestError",
    "NamespaceLockedError",
    "NotFoundError",
    "RagttError",
    "ReplayError",
    "StoreError",
    "SupersessionError",
    "ValidationError",
]


class RagttError(Exception):
    """Base class of every error ragtt raises on purpose."""


class ConfigError(RagttError, ValueError):
    """A configuration value is invalid or incompatible with the project."""


class IngestError(RagttError):
    """A source could not be read, decoded or parsed."""


class NotFoundError(RagttError, KeyError):
    """An id, label, version or source does not exist."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class ReplayError(RagttError):
    """A recorded run cannot be replayed faithfully (never silently approximated)."""


class StoreError(RagttError):
    """The event log or index is missing, corrupt or of an unknown schema."""


class NamespaceLockedError(StoreError):
    """A namespace is locked by a maintenance run (reindex) of another store or process."""


class ValidationError(RagttError, ValueError):
    """A record or query is invalid; ``errors`` lists every problem found, not just the first."""

    def __init__(self, message: str, errors: list[str] | None = None) -> None:
        self.errors: list[str] = list(errors) if errors else [message]
        super().__init__(message)


class SupersessionError(ValidationError):
    """An assertion cannot supersede the one named by its ``supersedes_id``."""
