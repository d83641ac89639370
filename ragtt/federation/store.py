"""A federation's folder: ``federation.json`` (its marker) and ``events.db`` (its own event log).

The log is the project's ``EventStore`` (hash chain, guards, once-per-run events), so
``verify()`` and every reader work on it unchanged. It begins with one ``federation.created``
event: the members (name, project id, path) and the fusion settings, written with the
federation's id in one transaction. The marker is written last (renamed into place), so a
folder without one holds at most a dead creation's log, which ``create`` clears and makes
again; ``open`` refuses it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragtt.errors import ConfigError, NotAProjectError, ProjectDamagedError
from ragtt.events import types as ev
from ragtt.events.base import Event
from ragtt.events.store import EventStore
from ragtt.marker import MARKER as PROJECT_MARKER
from ragtt.marker import write_atomic

__all__ = ["EVENTS", "MARKER", "Member", "Record", "create_log", "member_path", "open_log"]

MARKER = "federation.json"
EVENTS = "events.db"
_FORMAT = 1
# What a creation that died before its marker may have left (and create clears).
_LEFTOVERS = (EVENTS, f"{EVENTS}-wal", f"{EVENTS}-shm", f"{EVENTS}.lock")


@dataclass(frozen=True)
class Member:
    name: str
    project_id: str
    path: str


@dataclass(frozen=True)
class Record:
    """What ``federation.created`` says: the members in fusion order and the fusion settings."""

    federation_id: str
    members: list[Member]
    fusion: dict[str, Any]  # method, k, weights

    def payload(self) -> ev.FederationCreated:
        return {
            "federation_id": self.federation_id,
            "members": [{"name": m.name, "project_id": m.project_id, "path": m.path} for m in self.members],
            "fusion": self.fusion,
        }

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> Record:
        members = [Member(str(m["name"]), str(m["project_id"]), str(m["path"])) for m in data["members"]]
        return cls(str(data["federation_id"]), members, dict(data["fusion"]))


def create_log(folder: Path, record: Record) -> EventStore:
    """Make the federation in ``folder`` (new, empty, or a dead creation's): log, then marker."""
    if (folder / MARKER).exists():
        raise ConfigError(f"{folder} is a federation already: open it with ragtt.Federation.open({str(folder)!r})")
    if (folder / PROJECT_MARKER).exists():
        raise ConfigError(f"{folder} is a ragtt project; a federation needs a folder of its own")
    if folder.exists():
        stray = sorted(p.name for p in folder.iterdir() if p.name not in _LEFTOVERS and not p.name.startswith("."))
        if stray:
            raise ConfigError(f"{folder} holds other files ({', '.join(stray[:3])}); give a new or empty folder")
        for name in _LEFTOVERS:
            (folder / name).unlink(missing_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    log = EventStore(folder / EVENTS)
    try:
        with log.transaction() as conn:
            log.set_meta("federation_id", record.federation_id, conn)
            log.append_many([Event(ev.FEDERATION_CREATED, dict(record.payload()))], conn=conn)
        body = {"federation_id": record.federation_id, "format": _FORMAT, "events": EVENTS}
        write_atomic(folder / MARKER, json.dumps(body, indent=2) + "\n")
    except BaseException:
        log.close()
        raise
    return log


def open_log(folder: Path) -> tuple[EventStore, Record]:
    """The federation in ``folder``: its log and what its creation recorded."""
    try:
        marker = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotAProjectError(
            f"not a ragtt federation: {folder} (no {MARKER}); make one with ragtt.Federation.create"
        ) from None
    except (OSError, ValueError) as exc:
        raise ProjectDamagedError(f"cannot read {folder / MARKER} ({exc}); restore it from a backup") from None
    if int(marker.get("format", 0)) > _FORMAT:
        raise ProjectDamagedError(f"{folder / MARKER} has format {marker['format']}, newer than this ragtt; upgrade it")
    log = EventStore(folder / EVENTS, create=False)
    try:
        created = log.query(types=ev.FEDERATION_CREATED, limit=1)
        if not created or log.get_meta("federation_id") != marker.get("federation_id"):
            raise ProjectDamagedError(
                f"the federation log {folder / EVENTS} does not record federation {marker.get('federation_id')} "
                "(its first event is missing, or the file is another federation's); restore it from a backup"
            )
        return log, Record.from_payload(created[0].payload)
    except BaseException:
        log.close()
        raise


def member_path(path: str | os.PathLike[str]) -> str:
    """How a member's folder is recorded: absolute, so the federation opens from anywhere."""
    return str(Path(path).expanduser().resolve())
