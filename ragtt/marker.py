"""``ragtt.json``: the marker that makes a folder a project and names the stores it has.

It is written last when a project is created (atomically: a temporary file renamed over
it), so a folder without it was never a complete project. A store the marker names that is
gone is damage, reported as such, never recreated empty.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragtt.errors import NotAProjectError, ProjectDamagedError

__all__ = [
    "FORMAT",
    "MARKER",
    "RESTORING",
    "RESTORING_META",
    "Marker",
    "not_a_project",
    "unfinished_restore",
    "write_atomic",
]

MARKER = "ragtt.json"
FORMAT = 1
# A restore in progress (ragtt/restore.py): this file in the folder, this key in a Postgres log's
# meta. Either makes opening refuse the half-restored project until the restore is run again.
RESTORING = ".ragtt-restore.json"
RESTORING_META = "restoring"


@dataclass(frozen=True)
class Marker:
    project_id: str
    format: int = FORMAT
    stores: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def new(cls, table_name: str) -> Marker:
        return cls(uuid.uuid4().hex, FORMAT, {"events": "events.db", "index": "lancedb", "table": table_name})

    @classmethod
    def read(cls, folder: Path) -> Marker | None:
        path = folder / MARKER
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ProjectDamagedError(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            data = json.loads(text)
            marker = cls(str(data["project_id"]), int(data["format"]), dict(data["stores"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise ProjectDamagedError(
                f"{path} is not a ragtt project marker ({exc}); restore it from a backup"
            ) from None
        if marker.format > FORMAT:
            raise ProjectDamagedError(
                f"{path} has format {marker.format}, newer than this ragtt knows ({FORMAT}); upgrade ragtt"
            )
        return marker

    def with_store(self, name: str, value: Any) -> Marker:
        return replace(self, stores={**self.stores, name: value})

    def write(self, folder: Path) -> None:
        body = json.dumps({"project_id": self.project_id, "format": self.format, "stores": self.stores}, indent=2)
        write_atomic(folder / MARKER, body + "\n")


def write_atomic(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all: a temporary file renamed over it, then the folder
    fsynced, so the rename survives a power cut (how markers are written last). A write or
    rename that fails removes the temporary file (only a process killed mid-write leaves it)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def not_a_project(path: Path) -> NotAProjectError:
    return NotAProjectError(f"not a ragtt project: {path}; create one with `ragtt ingest DOCS --project {path}`")


def unfinished_restore(where: str | Path, source: str) -> ProjectDamagedError:
    return ProjectDamagedError(
        f"{where} holds a restore from {source} that did not finish (its process died or was stopped): it is "
        "not a project yet. Run the same `ragtt restore` again to finish it; nothing restored is lost"
    )
