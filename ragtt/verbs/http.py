"""What the HTTP front ends share (``ragtt serve``'s FastAPI app and the Jupyter server
extension of the notebook package): the per-thread project pool a verb runs on, the status
code for each ragtt error, and the JSON an error answers with. No web framework here."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt.errors import (
    EmbedderChangedError,
    NotAProjectError,
    NotFoundError,
    ReplayError,
    ServiceError,
    StoreError,
)
from ragtt.server_paths import files_root as files_root_for
from ragtt.values import first_line
from ragtt.verbs.paths import confine_paths

if TYPE_CHECKING:
    from ragtt.index.embedders import Embedder
    from ragtt.project import Project
    from ragtt.verbs.model import Verb

__all__ = ["Projects", "default_threads", "error_body", "status_for"]


def default_threads() -> int:
    """Worker threads for a server on this machine: four per CPU it may run on, 4 to 32."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(32, max(4, 4 * cpus))


def status_for(exc: Exception) -> int:
    """The HTTP status a ragtt error answers with: 404 for what is not there, 409 for a
    store that refuses (damaged, busy, locked) or a replay that cannot run, 503 for a model
    that kept failing on its side, else 400."""
    if isinstance(exc, NotFoundError | NotAProjectError):
        return 404
    if isinstance(exc, ServiceError):
        return 503
    if isinstance(exc, ReplayError | StoreError):
        return 409
    return 400


def error_body(exc: Exception) -> dict[str, str]:
    """The JSON of an error answer: its first line and the error's class name."""
    return {"detail": first_line(exc), "error": type(exc).__name__}


class Projects:
    """One open Project per thread, closed together at shutdown.

    A re-embed by another process makes every open Project stale (EmbedderChangedError):
    ``reopen`` starts a new generation, whose Projects load the project's new embedder (the
    one given to the server, if any, stays: a mismatch is then the caller's error to see)."""

    def __init__(self, path: Path, embedder: Embedder | None, files_root: str | Path | None = None) -> None:
        self.path = path
        self.embedder = embedder
        self.files_root = files_root_for(path, files_root)  # where callers' path arguments must stay
        self.write_lock = threading.Lock()
        self._given = embedder is not None
        self._local = threading.local()
        self._open: list[Project] = []
        self._generation = 0
        self._lock = threading.Lock()

    def get(self, *, create: bool = False) -> Project:
        proj: Project | None = getattr(self._local, "project", None)
        if proj is not None and self._local.generation != self._generation:
            self._retire(proj)
            proj = None
        if proj is None:
            from ragtt.project import Project

            generation = self._generation
            proj = Project.open(self.path, embedder=self.embedder, progress=False, create=create)
            with self._lock:
                self._open.append(proj)
                if self.embedder is None:  # load the model once per server, not once per thread
                    self.embedder = proj.embedder
            self._local.project, self._local.generation = proj, generation
        return proj

    def reopen(self, stale: Project) -> Project:
        """A fresh Project for this thread, after ``stale`` found the index re-embedded."""
        with self._lock:
            if self._local.generation == self._generation:  # the first thread to notice
                self._generation += 1
                if not self._given:
                    self.embedder = None
        self._retire(stale)
        return self.get()

    def _retire(self, proj: Project) -> None:
        with self._lock:
            if proj in self._open:
                self._open.remove(proj)
        self._local.project = None
        proj.close()

    def close(self) -> None:
        with self._lock:
            for proj in self._open:
                proj.close()
            self._open.clear()
        self._local = threading.local()

    def run(self, verb: Verb, values: dict[str, Any]) -> Any:
        """Run ``verb`` on this thread's Project: index writers one at a time; once more on a
        reopened Project when another process re-embedded the index meanwhile. Path arguments
        stay inside ``files_root`` (ragtt/server_paths.py)."""
        values = confine_paths(verb, values, self.files_root)
        proj = self.get(create=verb.creates)
        try:
            return self._run(verb, proj, values)
        except EmbedderChangedError:
            return self._run(verb, self.reopen(proj), values)

    def _run(self, verb: Verb, proj: Project, values: dict[str, Any]) -> Any:
        if verb.writes_index:
            with self.write_lock:
                return verb.run(proj, values)
        return verb.run(proj, values)
