"""Flask's docs at several releases split into two member projects, ingested release by release:
``docs`` holds the docs/ files but the security page, ``readme`` the README and the security page."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import ragtt
from tests.conftest import corpus

MEMBERS = ("docs", "readme")
QUESTIONS = ("how do I configure the secret key", "install flask in a virtualenv", "cross-site scripting")


def belongs(relative: str) -> str:
    """Which member a release file goes to."""
    return "readme" if "security" in relative or not relative.startswith("docs/") else "docs"


@dataclass
class Release:
    name: str
    date: datetime
    versions: dict[str, int] = field(default_factory=dict)  # member -> its version after this release


def releases(picks: tuple[int, ...]) -> list[tuple[Path, Release]]:
    root = corpus("evolving", "flask")
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))["versions"]
    return [
        (root / manifest[i]["dir"], Release(manifest[i]["dir"], datetime.fromisoformat(manifest[i]["date"])))
        for i in picks
    ]


def ingest_release(members: dict[str, ragtt.Project], work: Path, folder: Path, release: Release) -> None:
    """Each member's working folder made to hold its share of ``folder``, then ingested (mirrored)."""
    for name, proj in members.items():
        mine = work / name
        shutil.rmtree(mine, ignore_errors=True)
        mine.mkdir(parents=True)
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            relative = path.relative_to(folder).as_posix()
            if belongs(relative) == name:
                target = mine / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
        report = proj.ingest(mine, as_of=release.date)
        assert not report.failed, report.failed
        release.versions[name] = proj.version
