"""Where ``ragtt report --execute`` runs a notebook: a mirror of its folder in which every
project the notebook opens is a throwaway copy, so exporting never writes to a project.

The notebook's cells are read for the projects they open: ``%ragtt open PATH``,
``RagttMagics.project = "PATH"``, ``Project.open("PATH", ...)`` and ``--project PATH`` (shell
lines). Each must lie inside the notebook's folder; the mirror holds a copy of it (or
nothing, for a project the notebook creates), real folders on the way to it, and a symlink
for everything else, so the notebook's data files are where it expects them. A project
outside the folder, a path computed at run time or a remote store (``--events-uri``,
``--index-uri``) cannot be copied: the export is refused with the cell, unless the caller
allows writes.
"""

from __future__ import annotations

import ast
import re
import shlex
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragtt.errors import RagttError

__all__ = ["NotCopyableError", "opened_projects", "sandbox"]


class NotCopyableError(RagttError):
    """A notebook opens a project that a report's execution cannot run against a copy of."""


_OPEN = re.compile(r"%ragtt\s+open\s+(?P<rest>.*)$")
_SETTING = re.compile(r"RagttMagics\.project\s*=\s*(?P<value>.+)$")
_CALL = re.compile(r"Project\.open\(\s*(?P<arg>[^,)]*)")
_FLAG = re.compile(r"--project[= ]\s*(?P<value>\S+)")
_REMOTE = re.compile(r"--(events|index)-uri\b|\b(events|index)_uri\s*=")


def opened_projects(nb: Any) -> tuple[list[tuple[int, str]], list[str]]:
    """The project paths the notebook's code cells open, as ``(cell number, path)``, and the
    reasons some cannot be known or copied (``"cell 3 (...): ..."``)."""
    found: list[tuple[int, str]] = []
    problems: list[str] = []
    for number, cell in enumerate(nb.cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        for line in str(cell.source).splitlines():
            where = f"cell {number} ({line.strip()[:60]})"
            if _REMOTE.search(line):
                problems.append(f"{where} opens a project with a remote store, which cannot be copied")
                continue
            path = _path_in(line)
            if path is None:
                continue
            if path == "":
                problems.append(f"{where} opens a project whose path is computed when it runs")
            else:
                found.append((number, path))
    return found, problems


def _path_in(line: str) -> str | None:
    """The project path a line opens; "" when it opens one whose path is not a literal."""
    if (m := _OPEN.search(line)) is not None:
        words = _words(m["rest"])
        options_with_values = {"--embedder", "--events-uri", "--index-uri"}
        paths = [w for i, w in enumerate(words) if not w.startswith("-") and words[i - 1] not in options_with_values]
        return paths[0] if paths else None
    for pattern, group in ((_SETTING, "value"), (_CALL, "arg"), (_FLAG, "value")):
        if (m := pattern.search(line)) is not None:
            text = m[group].strip().split("#")[0].strip()
            if pattern is _FLAG:
                return text.strip("'\"")
            try:
                value = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                return ""
            return value if isinstance(value, str) else ""
    return None


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return text.split()


@contextmanager
def sandbox(nb: Any, notebook: Path) -> Iterator[tuple[Path, list[str]]]:
    """A temporary mirror of ``notebook``'s folder to run it in, and the project paths copied
    there (as the notebook names them); removed afterwards. ``NotCopyableError`` when a project
    it opens cannot be copied (see the module's docstring)."""
    folder = notebook.parent.resolve()
    found, problems = opened_projects(nb)
    inside: dict[Path, str] = {}
    for number, path in found:
        target = (folder / Path(path).expanduser()).resolve()
        if not target.is_relative_to(folder):
            problems.append(f"cell {number} opens {path}, outside the notebook's folder {folder}")
        else:
            inside.setdefault(target.relative_to(folder), path)
    if problems:
        raise NotCopyableError(
            f"{notebook.name} cannot run against throwaway copies of its projects, so running it would write "
            f"to them: {'; '.join(problems)}. Pass --allow-writes (allow_writes=True) to run it against the "
            "projects themselves, or export it without --execute"
        )
    with tempfile.TemporaryDirectory(prefix="ragtt-report-") as tmp:
        mirror = Path(tmp) / folder.name
        if Path() in inside:  # the notebook's own folder is a project: copy all of it
            shutil.copytree(folder, mirror, symlinks=True)
        else:
            _mirror(folder, mirror, set(inside))
        copied = [name for rel, name in inside.items() if (folder / rel).exists()]
        yield mirror, copied


def _mirror(src: Path, dst: Path, projects: set[Path]) -> None:
    """``dst`` as ``src`` with each of ``projects`` (relative paths) copied, the folders on the
    way to them real folders, and everything else a symlink to the original."""
    dst.mkdir(parents=True, exist_ok=True)
    here = {p.parts[0]: p for p in projects if p.parts}
    if not src.is_dir():
        return
    for child in src.iterdir():
        rel = here.get(child.name)
        if rel is None:
            (dst / child.name).symlink_to(child, target_is_directory=child.is_dir())
        elif len(rel.parts) == 1:
            if child.is_dir():
                shutil.copytree(child, dst / child.name, symlinks=True)
        else:
            _mirror(child, dst / child.name, {Path(*p.parts[1:]) for p in projects if p.parts[0] == child.name})
    for name, rel in here.items():  # a project to be created under a folder that does not exist yet
        if len(rel.parts) > 1 and not (src / name).exists():
            (dst / name).mkdir(parents=True, exist_ok=True)
