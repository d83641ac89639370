"""The one exception tree of ragtt.

    RagttError
    ├── ConfigError      invalid configuration, or a project opened with a mismatching embedder
    │   └── EmbedderChangedError   another process re-embedded the index since this one opened it
    ├── IngestError      a source cannot be read or parsed
    ├── NotFoundError    an unknown query id, snapshot label, version, source or chunk
    ├── ReplayError      a past run cannot be reproduced faithfully
    ├── TraceExportError a trace collector refused the spans or could not be reached
    ├── ServiceError     a model ragtt calls (an LLM judge) kept failing, though the input is fine
    ├── StoreError       the event log or index is in a state ragtt cannot work with
    │   ├── NamespaceLockedError   another maintenance run holds the namespace
    │   ├── NotAProjectError       the folder is not a ragtt project (and was not to be created)
    │   ├── ProjectDamagedError    a store the project has is missing or corrupt
    │   ├── ProjectBusyError       another process holds the write lock for too long
    │   └── HistoryError           an append that would rewrite history is refused
    └── ValidationError  a record or query breaks a rule of the temporal store
        └── SupersessionError      a successor cannot replace its predecessor

Messages say what was expected, what came, and what to do.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "EmbedderChangedError",
    "HistoryError",
    "IngestError",
    "MissingArgumentError",
    "NamespaceLockedError",
    "NotAProjectError",
    "NotFoundError",
    "ProjectBusyError",
    "ProjectDamagedError",
    "RagttError",
    "ReplayError",
    "ServiceError",
    "StoreError",
    "SupersessionError",
    "TraceExportError",
    "ValidationError",
]


class RagttError(Exception):
    """Base class of every error ragtt raises on purpose."""


class ConfigError(RagttError, ValueError):
    """A configuration value is invalid or incompatible with the project."""


class EmbedderChangedError(ConfigError):
    """The index was re-embedded (by another process or Project) since this one was opened:
    reopening the project picks up the new embedder."""


class IngestError(RagttError):
    """A source could not be read, decoded or parsed."""


class NotFoundError(RagttError, KeyError):
    """An id, label, version or source does not exist."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class ReplayError(RagttError):
    """A recorded run cannot be replayed faithfully (never silently approximated)."""


class TraceExportError(RagttError):
    """A trace collector (OTLP/HTTP) refused the spans or could not be reached."""


class ServiceError(RagttError):
    """A model or service ragtt calls kept failing for a reason of its own (a rate limit, a
    timeout, a server error, a lost connection) after bounded retries: the input is fine, and
    trying again later may succeed (the CLI exits 1, not 2; HTTP front ends answer 503)."""


class StoreError(RagttError):
    """The event log or index is missing, corrupt or of an unknown schema."""


class NamespaceLockedError(StoreError):
    """A namespace is locked by a maintenance run (reindex) of another store or process."""


class NotAProjectError(StoreError):
    """The folder holds no ragtt project, and the call does not create one."""


class ProjectDamagedError(StoreError):
    """A store the project's marker names is missing, or a store is not what it should be."""


class ProjectBusyError(StoreError):
    """Another process is writing to the project and did not finish in time."""


class HistoryError(StoreError):
    """The log refused an append that would rewrite or duplicate history."""


class ValidationError(RagttError, ValueError):
    """A record or query is invalid; ``errors`` lists every problem found, not just the first."""

    def __init__(self, message: str, errors: list[str] | None = None) -> None:
        self.errors: list[str] = list(errors) if errors else [message]
        super().__init__(message)


class MissingArgumentError(ValidationError):
    """A request lacks an argument it needs (HTTP front ends answer 422, as for a bad body)."""


class SupersessionError(ValidationError):
    """An assertion cannot supersede the one named by its ``supersedes_id``."""
