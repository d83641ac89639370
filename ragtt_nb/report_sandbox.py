"""How ``ragtt report --execute`` runs a notebook without writing to a project: in the kernel
that runs it, every project the notebook opens is a throwaway copy.

``sandbox()`` makes a temporary folder and the kernel options that call ``install()`` at the
kernel's start: from then on ``ragtt.Project.open(path, ...)`` (what ``%ragtt open``, the
magics and user code call) opens a copy of the project at ``path``, made on first use in that
folder, or, where ``path`` holds no project yet, a new one there; the same path always maps
to the same copy. Each copy is recorded (``copied.json``), so the export says which projects
ran as copies. The SQLite stores are copied with SQLite's online backup API (each as of one
commit, the event log first), the index folder file by file. A project whose stores are not in
its folder (a Postgres event log, an index on object storage) cannot be copied: opening it
raises ``NotCopyableError``, and the cell fails saying so. The kernel drops
``$RAGTT_EVENTS_URI`` and ``$RAGTT_INDEX_URI`` at its start, so a project the notebook creates
is created in the copies' folder, never in a shared database or bucket.

The ``ragtt`` CLI run in a shell runs outside the kernel, so a notebook that does so is refused
before it runs (``shell_writers``). What is caught: a ``ragtt`` command, ``python -m ragtt``
or ``-m ragtt.cli`` on a line that starts with ``!`` or ``!!`` (also as ``x = !...``) or with
the ``%system``/``%sx`` magics, and on any line of a cell that starts with ``%%bash``,
``%%sh``, ``%%system`` or ``%%script``. What is not: the CLI started from Python code
(``subprocess``, ``os.system``) or from a script file the notebook runs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragtt.errors import RagttError

__all__ = ["ENV", "NotCopyableError", "Sandbox", "install", "sandbox", "shell_writers"]

ENV = "RAGTT_REPORT_COPIES"
"""The kernel's environment variable naming the folder its project copies go in."""
_RECORD = "copied.json"
_READY = "installed"
_SHELL_LINE = re.compile(r"^\s*(?:[\w.]+\s*=\s*)?(?:!|%%?(?:system|sx)\b)(?P<command>.*)$")
_SHELL_CELL = re.compile(r"^\s*%%(?:bash|sh|system|script)\b")
_RAGTT_COMMAND = re.compile(r"(?:^|[\s;&|/(!{}])ragtt(?=$|[\s;&|)])|-m\s+ragtt(?:\.cli)?(?=$|[\s;&|)])")


class NotCopyableError(RagttError):
    """A notebook opens a project that a report's execution cannot run against a copy of."""


@dataclass(frozen=True)
class Sandbox:
    """The folder of one execution's copies, the kernel options that install the redirect,
    and what was copied."""

    folder: Path

    @property
    def kernel_arguments(self) -> list[str]:
        return [f"--IPKernelApp.exec_lines=import {__name__} as _r; _r.install(); del _r"]

    @property
    def installed(self) -> bool:
        return (self.folder / _READY).is_file()

    def copied(self) -> list[str]:
        """The projects the notebook opened, as it named them, that existed (so were copied)."""
        record = self.folder / _RECORD
        if not record.is_file():
            return []
        return [entry["path"] for entry in json.loads(record.read_text(encoding="utf-8")) if entry["copied"]]


def shell_writers(nb: Any) -> list[str]:
    """``cell 3 (!ragtt ingest ...)`` for each line running the ragtt CLI in a shell (what
    counts as such: the module's docstring)."""
    found = []
    for number, cell in enumerate(nb.cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        lines = str(cell.source).splitlines()
        whole = bool(lines) and _SHELL_CELL.match(lines[0]) is not None
        for line in lines[1:] if whole else lines:
            shell = _SHELL_LINE.match(line)
            command = line if whole else shell.group("command") if shell else None
            if command is not None and _RAGTT_COMMAND.search(command):
                found.append(f"cell {number} ({line.strip()[:60]})")
    return found


@contextmanager
def sandbox(nb: Any, notebook: Path) -> Iterator[Sandbox]:
    """A temporary folder for the copies (removed afterwards), with ``$RAGTT_REPORT_COPIES`` set
    for the kernel to inherit. ``NotCopyableError`` for a notebook whose shell lines run ragtt."""
    shell = shell_writers(nb)
    if shell:
        raise NotCopyableError(
            f"{notebook.name} runs the ragtt CLI in a shell ({'; '.join(shell)}), which would write to the "
            "projects themselves, not to throwaway copies: pass --allow-writes (allow_writes=True) to run it "
            "anyway, or export it without --execute"
        )
    previous = os.environ.get(ENV)
    with tempfile.TemporaryDirectory(prefix="ragtt-report-") as tmp:
        os.environ[ENV] = tmp
        try:
            yield Sandbox(Path(tmp))
        finally:
            if previous is None:
                os.environ.pop(ENV, None)
            else:
                os.environ[ENV] = previous


def install() -> None:
    """In the report's kernel: ``ragtt.Project.open`` opens throwaway copies (see the module)."""
    import ragtt
    from ragtt._sqlite import copy_database
    from ragtt.marker import MARKER
    from ragtt.opening.location import EVENTS, EVENTS_URI_ENV, INDEX, INDEX_URI_ENV

    folder = Path(os.environ[ENV])
    for name in (EVENTS_URI_ENV, INDEX_URI_ENV):  # else a new project would be created in them
        os.environ.pop(name, None)
    opener = ragtt.Project.open.__func__  # type: ignore[attr-defined]
    copies: dict[Path, Path] = {}

    def copy_of(path: str | Path, kwargs: dict[str, Any]) -> Path:
        original = Path(path).expanduser().resolve()
        if original in copies:
            return copies[original]
        remote = [f"{k}: {kwargs[k].split('@')[-1]}" for k in ("events_uri", "index_uri") if kwargs.get(k)]
        marker = original / MARKER
        if marker.is_file():
            stores = json.loads(marker.read_text(encoding="utf-8")).get("stores", {})
            local = {"events": EVENTS, "index": INDEX}
            remote += [f"{k}: {stores[k]}" for k in local if stores.get(k, local[k]) != local[k]]
        if remote:
            raise NotCopyableError(
                f"ragtt report runs notebooks against throwaway copies of their projects, and {path} keeps "
                f"stores outside its folder ({', '.join(remote)}) that cannot be copied: run the report "
                "with --allow-writes (allow_writes=True) to use the project itself"
            )
        copy = folder / f"{len(copies) + 1}-{original.name or 'project'}"
        if marker.is_file():
            copy.mkdir()
            databases = sorted(original.glob("*.db"), key=lambda db: db.name != EVENTS)  # the log first
            for database in databases:
                copy_database(database, copy / database.name)
            ignore = shutil.ignore_patterns("*.lock", "*.db", "*.db-wal", "*.db-shm", "*.db-journal")
            shutil.copytree(original, copy, symlinks=True, ignore=ignore, dirs_exist_ok=True)
        copies[original] = copy
        record = folder / _RECORD
        entries = json.loads(record.read_text(encoding="utf-8")) if record.is_file() else []
        entries.append({"path": str(path), "copy": str(copy), "copied": marker.is_file()})
        record.write_text(json.dumps(entries), encoding="utf-8")
        return copy

    def open_copy(cls: Any, path: str | Path, *args: Any, **kwargs: Any) -> Any:
        return opener(cls, copy_of(path, kwargs), *args, **kwargs)

    ragtt.Project.open = classmethod(open_copy)  # type: ignore[method-assign,assignment]
    (folder / _READY).touch()
