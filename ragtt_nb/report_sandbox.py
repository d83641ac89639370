"""How ``ragtt report --execute`` runs a notebook without writing to a project: in the kernel
that runs it, every project the notebook opens is a throwaway copy.

``sandbox()`` makes a temporary folder and the kernel options that call ``install()`` at the
kernel's start: from then on ``ragtt.Project.open(path, ...)`` (what ``%ragtt open``, the
magics and user code call) opens a copy of the project at ``path``, made on first use in that
folder, or, where ``path`` holds no project yet, a new one there; the same path always maps
to the same copy. Each copy is recorded (``copied.json``), so the export says which projects
ran as copies. A project whose stores are remote (a Postgres event log, an S3 index) cannot be
copied: opening it raises ``NotCopyableError``, and the cell fails saying so. Shell lines that
run the ``ragtt`` CLI (``!ragtt ingest ...``) run outside the kernel, so a notebook with them
is refused before it runs (``shell_writers``).
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
_SHELL_RAGTT = re.compile(r"^\s*!\s*ragtt\s")


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
    """``cell 3 (!ragtt ingest ...)`` for each cell running the ragtt CLI in a shell."""
    found = []
    for number, cell in enumerate(nb.cells, start=1):
        if cell.get("cell_type") == "code":
            found += [
                f"cell {number} ({line.strip()[:60]})"
                for line in str(cell.source).splitlines()
                if _SHELL_RAGTT.match(line)
            ]
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
    from ragtt.marker import MARKER

    folder = Path(os.environ[ENV])
    opener = ragtt.Project.open.__func__  # type: ignore[attr-defined]
    copies: dict[Path, Path] = {}

    def copy_of(path: str | Path, kwargs: dict[str, Any]) -> Path:
        original = Path(path).expanduser().resolve()
        if original in copies:
            return copies[original]
        remote = [kwargs[k] for k in ("events_uri", "index_uri") if kwargs.get(k)]
        marker = original / MARKER
        if marker.is_file():
            stores = json.loads(marker.read_text(encoding="utf-8")).get("stores", {})
            remote += [v for v in stores.values() if isinstance(v, str) and "://" in v]
        if remote:
            raise NotCopyableError(
                f"ragtt report runs notebooks against throwaway copies of their projects, and {path} has remote "
                f"stores ({', '.join(remote)}) that cannot be copied: run the report with --allow-writes "
                "(allow_writes=True) to use the project itself"
            )
        copy = folder / f"{len(copies) + 1}-{original.name or 'project'}"
        if marker.is_file():
            shutil.copytree(original, copy, symlinks=True, ignore=shutil.ignore_patterns("*.lock"))
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
