"""The one exception tree of ragtt.

    RagttError
    ├── ConfigError      invalid configuration, or a project opened with a mismatching embedder
    ├── IngestError      a source cannot be read or parsed
    ├── NotFoundError    an unknown query id, snapshot label, version, source or chunk
    ├── ReplayError      a past run cannot be reproduced faithfully
    └── StoreError       the event log or index is in a state ragtt cannot work with

Messages say what was expected, what came, and what to do.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "IngestError",
    "NotFoundError",
    "RagttError",
    "ReplayError",
    "StoreError",
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
