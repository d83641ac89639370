"""Scheduled snapshots: a daemon thread that snapshots the index when it changed.

The thread opens the project on its own connections (a SQLite connection is not shared
across threads) and takes each snapshot through the crash protocol like any writer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt._background import Background
from ragtt.errors import ConfigError

if TYPE_CHECKING:
    from ragtt.results import Snapshot

__all__ = ["SnapshotSchedule", "start_schedule"]


@dataclass
class SnapshotSchedule(Background):
    """The handle ``proj.schedule_snapshots`` returns: ``stop()`` ends it; ``taken`` and
    ``errors`` say what each tick did (a failed tick is retried at the next one)."""

    every: timedelta
    label: str
    taken: list[Snapshot] = field(default_factory=list)

    def start(self, tick: Callable[[], Snapshot | None], name: str) -> None:
        def loop() -> None:
            while not self._stop.wait(self.every.total_seconds()):
                try:
                    snap = tick()
                except Exception as exc:  # a busy or failing tick must not end the schedule
                    self.errors.append(f"{type(exc).__name__}: {exc}")
                else:
                    if snap is not None:
                        self.taken.append(snap)

        self._launch(loop, name)


def start_schedule(
    path: Path, open_kwargs: dict[str, Any], embedder: Any, every: timedelta, label: str
) -> SnapshotSchedule:
    """``open_kwargs`` reopen the project each tick; ``embedder`` is used only when the one the
    project records cannot be rebuilt by name (a custom embedder object)."""
    if not isinstance(every, timedelta) or every.total_seconds() <= 0:
        raise ConfigError(f"every must be a positive datetime.timedelta; got {every!r}")
    if not isinstance(label, str) or not label:
        raise ConfigError(f"label must be a non-empty template such as 'auto-{{ts}}'; got {label!r}")
    schedule = SnapshotSchedule(every, label)

    def tick() -> Snapshot | None:
        from ragtt.errors import ConfigError
        from ragtt.project import Project

        try:  # the embedder the project records now: a re-embed since the schedule began is fine
            proj = Project.open(path, create=False, progress=False, **open_kwargs)
        except ConfigError:
            proj = Project.open(path, create=False, progress=False, embedder=embedder, **open_kwargs)
        with proj:
            return proj.snapshot_if_changed(label)

    schedule.start(tick, f"ragtt-snapshots-{path.name}")
    return schedule
