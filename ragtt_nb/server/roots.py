"""Which folders under the Jupyter server's root are ragtt projects, and the one safe way
to turn a project path from a URL into a folder: relative, no ``..``, and (symlinks
resolved) inside the root."""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path

from ragtt.errors import NotAProjectError, RagttError

__all__ = ["MARKER", "OutsideRootError", "find_projects", "relative_to_root", "resolve_project"]

MARKER = "ragtt.json"  # what a project folder holds
SKIP = frozenset({"node_modules", "__pycache__", "site-packages"})


class OutsideRootError(RagttError, PermissionError):
    """A project path that leaves the server's root (``..``, absolute, or a symlink out)."""


def find_projects(root: Path, *, depth: int, limit: int) -> list[str]:
    """Root-relative POSIX paths of the folders holding ``ragtt.json``, breadth first, at most
    ``depth`` levels below ``root`` (not the root itself: a URL cannot name it) and at most
    ``limit`` of them. Hidden folders, virtual
    environments' packages and symlinked folders are not entered."""
    found: list[str] = []
    queue: deque[tuple[Path, int]] = deque([(root, 0)])
    while queue and len(found) < limit:
        folder, level = queue.popleft()
        if folder != root and (folder / MARKER).is_file():
            found.append(folder.relative_to(root).as_posix())
        if level >= depth:
            continue
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue  # unreadable: not ours to list
        for entry in entries:
            if entry.name.startswith(".") or entry.name in SKIP:
                continue
            if entry.is_dir(follow_symlinks=False):
                queue.append((Path(entry.path), level + 1))
    return found


def resolve_project(root: Path, path: str, *, may_create: bool = False) -> Path:
    """The folder ``path`` (relative to ``root``) names; refuses ``..``, absolute paths and
    anything that resolves outside ``root``. Without ``may_create`` the folder must hold a project."""
    if "\\" in path or any(part in ("..", ".", "") for part in path.split("/")):
        raise OutsideRootError(f"a project path is relative to the server's root, without '..'; got {path!r}")
    real_root = root.resolve()
    folder = (root / path).resolve()
    if folder == real_root or not folder.is_relative_to(real_root):
        raise OutsideRootError(f"{path!r} leads outside the server's root (a symlink?); open projects under it")
    if not may_create and not (folder / MARKER).is_file():
        raise NotAProjectError(f"{path!r} holds no ragtt project (no {MARKER}); the projects list names those that do")
    return folder


def relative_to_root(root: Path, path: str) -> str | None:
    """``path`` (absolute, as a kernel knows it) relative to ``root``, or None outside it (or
    the root itself)."""
    real = Path(path).expanduser().resolve()
    real_root = root.resolve()
    inside = real != real_root and real.is_relative_to(real_root)
    return real.relative_to(real_root).as_posix() if inside else None
