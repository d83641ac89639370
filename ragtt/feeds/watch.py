"""``proj.watch``: a folder kept mirrored in the index as it changes, on ``watchfiles``.

The watcher starts first, then catches up (the folder mirrored as ``ingest`` does), so a change
made while the catch-up reads the folder is in the next batch; each settled
batch of changes becomes ONE index version through the crash protocol: the folder's files are
listed again and written as one mirror ingest, so a batch's adds, edits and deletes land
together, a rename is a removal plus an add whose chunk vectors come from the embedding cache,
and a watcher killed mid-batch converges on its next start (catch-up is the same mirror).
Editor leftovers, ``.git`` (hidden files in general) and the gitignore patterns of the
folder's ``.ragttignore`` (read with ``pathspec``) are ignored. A file whose size or mtime
still changes while its batch is read waits for the next batch, and stays as indexed.

A batch that fails (a full disk, a busy store) does not end the watch: its line says why, and
the same batch is tried again after a pause that doubles on each failure in a row (from
``_RETRY_FIRST_S`` to ``_RETRY_MAX_S``), with any changes that came meanwhile.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt._background import Background
from ragtt._html import BOX, STYLE, esc
from ragtt.errors import ConfigError
from ragtt.feeds.stream import seconds
from ragtt.results import Result

if TYPE_CHECKING:
    from ragtt.context import Context
    from ragtt.ingest.pipeline import Collected

__all__ = [
    "IGNORE_FILE",
    "WatchBatch",
    "WatchHandle",
    "WatchSettings",
    "parse_snapshot_every",
    "settings",
    "start_watch",
    "watch_folder",
]

# What the watch thread runs: (report each batch, the stop event) -> returns when stopped.
Runner = Callable[[Callable[["WatchBatch"], None], threading.Event], None]

IGNORE_FILE = ".ragttignore"
_SETTLE_S = 0.15  # how long a changed file's size and mtime must hold still to be read
_NAMES_SHOWN = 4
_KEPT_BATCHES = 1000  # a handle remembers this many batches (a watch may run for weeks)
_TICK_MS = 200  # how often an idle watch wakes (to start its catch-up, to retry a failed batch)
_RETRY_FIRST_S = 0.5
_RETRY_MAX_S = 60.0


@dataclass(frozen=True)
class WatchBatch(Result):
    """One settled batch: what it changed, the version it made (unchanged: no new version),
    the files that were still being written, and the time from its first change (the
    oldest changed file's mtime) to queryable. ``error``: why the batch failed (nothing was
    written; it is tried again after ``retry_in_s``) or, with a version made, why its
    scheduled snapshot failed."""

    at: datetime
    catch_up: bool
    index_version_before: int
    index_version_after: int
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    latency_s: float = 0.0
    snapshot: str | None = None
    error: str | None = None
    retry_in_s: float | None = None

    @property
    def changed(self) -> bool:
        return self.index_version_after != self.index_version_before

    def line(self) -> str:
        """The one line a watch prints for the batch."""
        what = " ".join(
            _names(mark, names)
            for mark, names in (("+", self.added), ("~", self.updated), ("-", self.removed))
            if names
        )
        head = "catch-up" if self.catch_up else "batch"
        if self.error is not None and self.retry_in_s is not None:
            return (
                f"{self.at:%H:%M:%S} {head} failed (v{self.index_version_after} kept): {self.error}; "
                f"trying again in {self.retry_in_s:g} s"
            )
        version = f"v{self.index_version_after}" if self.changed else f"no change (v{self.index_version_after})"
        tail = [f"{self.latency_s:.2f} s to queryable"] if self.changed else []
        tail += [f"{len(self.waiting)} still being written"] if self.waiting else []
        tail += [f"{len(self.failed)} failed: " + "; ".join(f"{s}: {r}" for s, r in self.failed)] if self.failed else []
        tail += [f"snapshot {self.snapshot}"] if self.snapshot else []
        tail += [f"snapshot failed: {self.error}"] if self.error is not None else []
        return (
            f"{self.at:%H:%M:%S} {head} {version}"
            + (f" {what}" if what else "")
            + (f" ({', '.join(tail)})" if tail else "")
        )

    def __repr__(self) -> str:
        return f"WatchBatch({self.line()})"

    def _repr_html_(self) -> str:
        return f"{STYLE}{BOX}<b>WatchBatch</b> {esc(self.line())}</div>"


def _names(mark: str, names: list[str]) -> str:
    shown = [mark + n for n in names[:_NAMES_SHOWN]]
    return " ".join(shown + ([f"{mark}{len(names) - _NAMES_SHOWN} more"] if len(names) > _NAMES_SHOWN else []))


@dataclass
class WatchHandle(Background):
    """A running watch (``proj.watch``): ``stop()`` ends it between batches; ``batches`` holds
    the latest batches (a failed one has ``error`` set, and the watch goes on); ``errors``
    what failed outside a batch: an ``on_batch`` callback that raised (the watch goes on), or
    what ended the watch (the project could not be opened, the folder went away)."""

    path: Path
    batches: deque[WatchBatch] = field(default_factory=lambda: deque(maxlen=_KEPT_BATCHES))

    def start(self, run_watch: Runner, on_batch: Callable[[WatchBatch], None] | None) -> None:
        def emit(batch: WatchBatch) -> None:
            self.batches.append(batch)
            if on_batch is not None:
                try:
                    on_batch(batch)
                except Exception as exc:  # the caller's callback must not end the watch
                    self.errors.append(f"on_batch raised {type(exc).__name__}: {exc}")

        def run() -> None:
            try:
                run_watch(emit, self._stop)
            except Exception as exc:  # the thread's end must be visible on the handle
                self.errors.append(f"{type(exc).__name__}: {exc}")

        self._launch(run, f"ragtt-watch-{self.path.name}")

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        last = f", last: {self.batches[-1].line()}" if self.batches else ""
        return f"WatchHandle({str(self.path)!r}, {state}, {len(self.batches)} batches{last})"


@dataclass(frozen=True)
class WatchSettings:
    debounce_ms: int
    snapshot_every: timedelta | int | None
    follow_symlinks: bool
    force_polling: bool


def parse_snapshot_every(value: str | int | timedelta | None) -> timedelta | int | None:
    """``"1h"`` / a timedelta (a snapshot when that long passed since the last), or N (every
    N versions the watch makes); ``"12"`` is N."""
    if value is None or isinstance(value, timedelta):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise ConfigError(f"snapshot_every as a count must be at least 1; got {value}")
        return value
    if isinstance(value, str):
        return timedelta(seconds=seconds(value, "snapshot_every"))
    raise ConfigError(f"snapshot_every is a duration ('1h', '30m') or a number of versions; got {value!r}")


def settings(
    debounce: str | float | timedelta,
    snapshot_every: str | int | timedelta | None,
    follow_symlinks: bool,
    force_polling: bool,
) -> WatchSettings:
    return WatchSettings(
        max(1, round(seconds(debounce, "debounce") * 1000)),
        parse_snapshot_every(snapshot_every),
        bool(follow_symlinks),
        bool(force_polling),
    )


def start_watch(folder: Path, run_watch: Runner, on_batch: Callable[[WatchBatch], None] | None) -> WatchHandle:
    """Run ``run_watch`` in a daemon thread (it opens the project there: a SQLite connection
    is not shared across threads); each batch goes to the handle, then to ``on_batch``."""
    handle = WatchHandle(folder)
    handle.start(run_watch, on_batch)
    return handle


def watched_folder(path: str | Path) -> Path:
    folder = Path(path).expanduser().resolve()
    if not folder.is_dir():
        raise ConfigError(f"watch takes a folder to mirror; {folder} is not one")
    return folder


def watch_folder(
    ctx: Context, folder: Path, s: WatchSettings, emit: Callable[[WatchBatch], None], stop: threading.Event
) -> None:
    """Catch up, then one version per settled batch until ``stop`` is set (checked between
    batches and while waiting for changes)."""
    import watchfiles

    snapshots = _Snapshots(s.snapshot_every)
    ignore = _IgnoreFilter(folder)
    due: set[str] | None = None  # the changed paths the next batch reads; None: the catch-up
    owed = True
    retry_at, failures = 0.0, 0
    since = time.time()
    # The watcher is up before its first yield (after at most _TICK_MS), so the catch-up runs
    # with it already recording: a change made while the catch-up reads the folder is not lost.
    for changes in watchfiles.watch(
        folder,
        watch_filter=ignore,
        debounce=s.debounce_ms,
        stop_event=stop,
        force_polling=s.force_polling or None,
        raise_interrupt=False,
        rust_timeout=_TICK_MS,
        yield_on_timeout=True,
    ):
        if stop.is_set():
            break
        if changes:
            ignore.reload()
            if due is not None:
                due |= {p for _, p in changes}
            owed = True
        if not owed or time.monotonic() < retry_at:
            continue
        try:
            batch = mirror(ctx, folder, s.follow_symlinks, due, since=since)
        except Exception as exc:  # the batch is kept for a retry; a lasting failure backs off
            delay = min(_RETRY_MAX_S, _RETRY_FIRST_S * 2**failures)
            failures += 1
            retry_at = time.monotonic() + delay
            emit(_failed(ctx, due is None, exc, delay))
            continue
        since = time.time() - batch.latency_s
        due, owed, failures = set(), False, 0
        emit(snapshots.after(ctx, batch))


def _failed(ctx: Context, catch_up: bool, exc: Exception, retry_in_s: float) -> WatchBatch:
    try:
        version = ctx.version
    except Exception:  # the store itself may be what failed
        version = -1
    return WatchBatch(
        at=datetime.now(UTC),
        catch_up=catch_up,
        index_version_before=version,
        index_version_after=version,
        error=f"{type(exc).__name__}: {exc}",
        retry_in_s=retry_in_s,
    )


def mirror(ctx: Context, folder: Path, follow_symlinks: bool, changed: set[str] | None, *, since: float) -> WatchBatch:
    """One mirror ingest of ``folder`` (ignore rules applied); files among ``changed`` that are
    still being written are left as indexed for the next batch. ``changed`` None: the catch-up.
    The batch's first change is its oldest changed file's mtime, but not before ``since``
    (the previous batch's start: a renamed file keeps its old mtime)."""
    from ragtt.ingest.pipeline import collect_paths, run_ingest

    started = time.time()
    found = _ignored_out(collect_paths([folder], follow_symlinks=follow_symlinks), folder)
    waiting = sorted(_still_written(folder, changed)) if changed else []
    items = [i for i in found.items if i.source not in waiting]
    keep = frozenset(waiting) | frozenset(s for s, _ in found.skipped)
    report = run_ingest(ctx, items, found.failed, prune=True, keep=keep)
    first = max(since, min([st.st_mtime for st in _stats(changed)], default=started)) if changed else started
    return WatchBatch(
        at=datetime.now(UTC),
        catch_up=changed is None,
        index_version_before=report.index_version_before,
        index_version_after=report.index_version_after,
        added=report.documents_added,
        updated=report.documents_updated,
        removed=report.documents_removed,
        waiting=waiting,
        failed=report.failed,
        latency_s=round(max(0.0, time.time() - first), 3),
    )


def _ignored_out(found: Collected, folder: Path) -> Collected:
    spec = _ignore_spec(folder)
    if spec is not None:
        found.items = [i for i in found.items if not spec.match_file(i.source)]
    return found


def _ignore_spec(folder: Path) -> Any:
    import pathspec

    try:
        lines = (folder / IGNORE_FILE).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _still_written(folder: Path, changed: set[str]) -> set[str]:
    """The changed files (as sources) whose size or mtime moves within ``_SETTLE_S``."""
    first = {p: _stat(p) for p in changed}
    time.sleep(_SETTLE_S)
    moving = set()
    for p, before in first.items():
        if before is not None and _stat(p) != before:
            with contextlib.suppress(ValueError):
                moving.add(Path(p).relative_to(folder).as_posix())
    return moving


def _stat(path: str) -> tuple[int, int] | None:
    try:
        st = Path(path).stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _stats(paths: set[str]) -> Iterator[Any]:
    for p in paths:
        with contextlib.suppress(OSError):
            yield Path(p).stat()


class _IgnoreFilter:
    """watchfiles' default filter (editor leftovers, ``.git``, caches) plus hidden files and
    the ``.ragttignore`` patterns; a change to ``.ragttignore`` itself starts a batch."""

    def __init__(self, folder: Path) -> None:
        import watchfiles

        self._folder = folder
        self._default = watchfiles.DefaultFilter()
        self._spec = _ignore_spec(folder)

    def reload(self) -> None:
        self._spec = _ignore_spec(self._folder)

    def __call__(self, change: Any, path: str) -> bool:
        try:
            rel = Path(path).relative_to(self._folder)
        except ValueError:
            return False
        if rel.as_posix() == IGNORE_FILE:
            return True
        if any(part.startswith(".") for part in rel.parts) or not self._default(change, path):
            return False
        return self._spec is None or not self._spec.match_file(rel.as_posix())


class _Snapshots:
    """``snapshot_every``: after N versions the watch made, or once that long since the last."""

    def __init__(self, every: timedelta | int | None) -> None:
        self._every = every
        self._made = 0
        self._last = time.monotonic()

    def after(self, ctx: Context, batch: WatchBatch) -> WatchBatch:
        import dataclasses

        from ragtt.index.snapshots import snapshot_if_changed

        if self._every is None or not batch.changed:
            return batch
        self._made += 1
        if isinstance(self._every, int):
            due = self._made % self._every == 0
        else:
            due = time.monotonic() - self._last >= self._every.total_seconds()
        if not due:
            return batch
        try:
            snap = snapshot_if_changed(ctx, "watch-{ts}")
        except Exception as exc:  # the version stands; the snapshot is tried after the next batch
            self._made -= 1
            return dataclasses.replace(batch, error=f"{type(exc).__name__}: {exc}")
        self._last = time.monotonic()
        return dataclasses.replace(batch, snapshot=snap.label) if snap is not None else batch
