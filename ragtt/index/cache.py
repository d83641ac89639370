"""A local read-through disk cache of the immutable files of a remote index's versions.

A Lance version is its manifest (``_versions/*.manifest``) and the files it references: data
files, deletion files, index files. None of them is ever rewritten (new versions write new
files), so a local copy of them never goes stale; only "which version is latest" changes, and
the cache never answers that. ``IndexCache.open_version`` mirrors one exact version of a table
on object storage into ``<root>/<key>/<table>.lance`` (``key`` hashes the index URI and its
endpoint) and opens it there, so a read of that version makes no request to the store.

- What a version references comes from Lance itself (``LanceDataset.tracked_files``), once per
  version: the list is kept in ``.ragtt/versions/<table>/<version>.json`` beside the mirror.
- Each file is downloaded with Lance's own object store (``LanceFileSession``, the table's
  storage_options) to a temporary name in ``.ragtt/tmp``, flushed to disk, and renamed into
  place after its checksum (size and SHA-256, ``.ragtt/sums/<table>/<path>``) is written: a
  partial file never appears under its final name, and processes or threads filling the same
  cache at once each rename a complete copy of the same bytes. A file without its checksum,
  or whose size or (first checked in a process) SHA-256 differs, is downloaded again.
- The mirror is compared with the store's manifest (the fragments' data and deletion files and
  the index uuids) before it is used, so a table recreated at the same URI, whose version
  numbers start again, is refilled rather than answered from the old table's files.
- The cache is bounded (``max_bytes``): after a fill, whole files are evicted least recently
  used first (a version's checksums are touched whenever it is opened), never one of a version
  a live process has open (a dataset on it is alive), so the bound is exceeded only by the
  versions in use. Each process publishes the versions it holds in ``<root>/.holds/``: a list
  (``<pid>-<token>.json``, replaced whenever it changes) beside a lock file the process keeps
  locked (``flock``) while it lives. An eviction honours every list whose lock it cannot take,
  and deletes the others (their process died). Without ``fcntl`` (not POSIX) only this
  process's versions are known.

``Writes never go through it``: ChunkTable writes, and reads the latest version, on the store.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
import weakref
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ragtt.errors import ConfigError

try:
    import fcntl
except ImportError:  # not POSIX: other processes' holds are not published
    fcntl = None  # type: ignore[assignment]

__all__ = ["CACHE_BYTES_ENV", "CACHE_ENV", "DEFAULT_MAX_BYTES", "IndexCache"]

CACHE_ENV = "RAGTT_INDEX_CACHE"  # a folder, or "off"
CACHE_BYTES_ENV = "RAGTT_INDEX_CACHE_BYTES"
DEFAULT_MAX_BYTES = 4 * 2**30
_OFF = frozenset({"off", "0", "false", "no", "none"})
# What reading a version needs (its transaction file is only read by writers' conflict checks).
_READ_TYPES = frozenset({"manifest", "data file", "deletion file", "index file"})
_DOWNLOADS = 8  # files fetched at once
_STALE_TMP_S = 3600.0  # a temporary file this old was left by a process that died


def _default_root() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("ragtt")) / "index"


def _fingerprint(dataset: Any) -> list[Any]:
    """What identifies one table's version among tables that reused its URI: every fragment's
    data and deletion files, and every index segment's uuid (all random names)."""
    fragments = [[f.fragment_id, [d.path for d in f.data_files()], f.deletion_file()] for f in dataset.get_fragments()]
    segments = sorted(str(s.uuid) for d in dataset.describe_indices() for s in d.segments)
    return [fragments, segments]


@dataclass(frozen=True)
class _Sum:
    size: int
    sha256: str

    def dump(self) -> str:
        return f"{self.size} {self.sha256}\n"

    @classmethod
    def load(cls, text: str) -> _Sum | None:
        parts = text.split()
        if len(parts) != 2 or not parts[0].isdigit():
            return None
        return cls(int(parts[0]), parts[1])


class IndexCache:
    """The cache under ``root``, at most ``max_bytes`` of files (one per process and root:
    ``IndexCache.at``). See the module docstring."""

    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self._lock = threading.Lock()  # guards the in-process state below
        self._filling: dict[tuple[Path, int], threading.Lock] = {}
        self._listed: dict[Path, dict[int, list[str]]] = {}  # mirror -> version -> files
        self._held: Counter[tuple[Path, int]] = Counter()  # (mirror, version) -> datasets open on it
        self._verified: set[tuple[str, int, int, int]] = set()  # (path, size, mtime_ns, inode)
        self._holds = _Holds(root / ".holds")

    @classmethod
    def at(cls, root: Path, max_bytes: int) -> IndexCache:
        with _SHARED_LOCK:
            return _SHARED.setdefault((root, max_bytes), cls(root, max_bytes))

    @classmethod
    def choose(cls, setting: str | Path | bool | None, max_bytes: int | None) -> IndexCache | None:
        """The cache ``Project.open(index_cache=...)`` asks for: a folder, False (none), or None
        (``$RAGTT_INDEX_CACHE``: a folder or ``off``; else the user cache folder). ``max_bytes``
        None is ``$RAGTT_INDEX_CACHE_BYTES``, else 4 GiB."""
        if setting is None:
            env = os.environ.get(CACHE_ENV, "").strip()
            if env.lower() in _OFF:
                return None
            setting = env or True
        if setting is False:
            return None
        if not isinstance(setting, (str, Path, bool)):
            raise ConfigError(f"index_cache must be a folder, False or None; got {type(setting).__name__}")
        root = _default_root() if setting is True else Path(setting).expanduser()
        if max_bytes is None:
            raw = os.environ.get(CACHE_BYTES_ENV, "").strip()
            if raw and not raw.isdigit():
                raise ConfigError(f"${CACHE_BYTES_ENV} must be a number of bytes; got {raw!r}")
            max_bytes = int(raw) if raw else DEFAULT_MAX_BYTES
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:
            raise ConfigError(f"index_cache_bytes must be a positive number of bytes; got {max_bytes!r}")
        return cls.at(root.resolve(), max_bytes)

    def folder_for(self, folder_uri: str, storage_options: dict[str, str] | None) -> Path:
        """The local folder mirroring the index folder ``folder_uri`` (a LanceDB database:
        ``<table>.lance`` in it is one table's mirror)."""
        endpoint = sorted((k, v) for k, v in (storage_options or {}).items() if "endpoint" in k.lower())
        key = hashlib.sha256(json.dumps([folder_uri.rstrip("/"), endpoint]).encode()).hexdigest()[:24]
        return self.root / key

    # -- opening a version -------------------------------------------------------------------

    def open_version(
        self, folder: Path, table_name: str, table_uri: str, storage_options: dict[str, str] | None, remote: Any
    ) -> Any | None:
        """The Lance dataset of ``remote``'s version read from the mirror in ``folder``
        (filled first), or None when that version cannot be mirrored (a file outside the
        table's own folder)."""
        import lance

        version = int(remote.version)
        mirror = folder / f"{table_name}.lance"
        wanted = _fingerprint(remote)
        self._hold(mirror, version, 1)  # no eviction of its files while it is filled
        try:
            for attempt in range(2):
                files = self._fill(mirror, table_uri, storage_options, remote, version)
                if files is None:
                    return None
                local = lance.dataset(str(mirror), version=version)
                if _fingerprint(local) == wanted:
                    self._hold(mirror, version, 1)  # ... nor while this dataset lives
                    weakref.finalize(local, self._hold, mirror, version, -1)
                    return local
                if attempt == 0:  # another table at this URI once had this version number
                    self._forget_version(mirror, version, files)
            return None
        finally:
            self._hold(mirror, version, -1)

    def _hold(self, mirror: Path, version: int, change: int) -> None:
        with self._lock:
            before = len(self._held)
            self._held[mirror, version] += change
            if self._held[mirror, version] <= 0:
                del self._held[mirror, version]
            if len(self._held) != before:  # a version newly held or let go: tell other processes
                self._holds.publish([[m.relative_to(self.root).as_posix(), v] for m, v in self._held])

    def _fill(
        self, mirror: Path, table_uri: str, storage_options: dict[str, str] | None, remote: Any, version: int
    ) -> list[str] | None:
        with self._lock:
            gate = self._filling.setdefault((mirror, version), threading.Lock())
        with gate:
            files = self._files(mirror, table_uri, remote, version)
            if files is None:
                return None
            record = self._record_path(mirror, version)
            if not record.exists():  # first: another process's eviction reads it to spare these files
                _write_atomically(self._meta(mirror) / "tmp", record, json.dumps(files).encode())
            missing = [f for f in files if not self._usable(mirror, f)]
            if missing:
                self._download(mirror, table_uri, storage_options, missing)
            self._touch(mirror, files)
        if missing:
            self._evict()
        return files

    def _files(self, mirror: Path, table_uri: str, remote: Any, version: int) -> list[str] | None:
        """The files ``version`` reads: remembered, recorded beside the mirror, or listed by Lance
        (one listing covers every later version too, which are remembered)."""
        with self._lock:
            known = self._listed.get(mirror, {}).get(version)
        if known is not None:
            return known
        record = self._record_path(mirror, version)
        try:
            files = [str(f) for f in json.loads(record.read_text(encoding="utf-8"))]
            if all(_safe(f) for f in files):
                return self._remember(mirror, {version: files})[version]
        except (OSError, ValueError, TypeError):
            pass
        base = table_uri.rstrip("/")
        by_version: dict[int, list[str]] = {}
        foreign: set[int] = set()
        for row in remote.tracked_files(min_version=version).read_all().to_pylist():
            if row["type"] not in _READ_TYPES:
                continue
            v = int(row["version"])
            if str(row["base_uri"]).rstrip("/") != base or not _safe(str(row["path"])):
                foreign.add(v)
            by_version.setdefault(v, []).append(str(row["path"]))
        listed = {v: sorted(set(paths)) for v, paths in by_version.items() if v not in foreign}
        return self._remember(mirror, listed).get(version)

    def _remember(self, mirror: Path, listed: dict[int, list[str]]) -> dict[int, list[str]]:
        with self._lock:
            self._listed.setdefault(mirror, {}).update(listed)
        return listed

    def _forget_version(self, mirror: Path, version: int, files: list[str]) -> None:
        """Drop what the mirror holds of ``version`` that is not the store's: its record, its
        manifest (the one file name a recreated table reuses) and what it listed."""
        with self._lock:
            self._listed.pop(mirror, None)
        self._record_path(mirror, version).unlink(missing_ok=True)
        for name in files:
            if name.startswith("_versions/"):
                (mirror / name).unlink(missing_ok=True)
                self._sum_path(mirror, name).unlink(missing_ok=True)

    # -- files -------------------------------------------------------------------------------

    def _meta(self, mirror: Path) -> Path:
        return mirror.parent / ".ragtt"

    def _record_path(self, mirror: Path, version: int) -> Path:
        return self._meta(mirror) / "versions" / mirror.stem / f"{version}.json"

    def _sum_path(self, mirror: Path, name: str) -> Path:
        return self._meta(mirror) / "sums" / mirror.stem / name

    def _usable(self, mirror: Path, name: str) -> bool:
        """Whether the mirror's copy of ``name`` is whole: its checksum is there, its size
        matches, and (once per process and file) so does its SHA-256."""
        path = mirror / name
        try:
            expected = _Sum.load(self._sum_path(mirror, name).read_text(encoding="utf-8"))
            stat = path.stat()
        except OSError:
            return False
        if expected is None or stat.st_size != expected.size:
            return False
        seen = (str(path), stat.st_size, stat.st_mtime_ns, stat.st_ino)
        with self._lock:
            if seen in self._verified:
                return True
        if _sha256(path) != expected.sha256:
            return False
        with self._lock:
            self._verified.add(seen)
        return True

    def _download(self, mirror: Path, table_uri: str, storage_options: dict[str, str] | None, names: list[str]) -> None:
        from lance.file import LanceFileSession

        session = LanceFileSession(table_uri, storage_options=storage_options or None)
        tmp = self._meta(mirror) / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)

        def fetch(name: str) -> None:
            part = tmp / f"{os.getpid()}-{threading.get_ident()}-{os.urandom(6).hex()}.part"
            try:
                session.download_file(name, part)
                with part.open("rb+") as f:
                    os.fsync(f.fileno())
                checksum = _Sum(part.stat().st_size, _sha256(part))
                _write_atomically(tmp, self._sum_path(mirror, name), checksum.dump().encode())
                (mirror / name).parent.mkdir(parents=True, exist_ok=True)
                os.replace(part, mirror / name)
            finally:
                part.unlink(missing_ok=True)

        with ThreadPoolExecutor(min(_DOWNLOADS, len(names))) as pool:
            list(pool.map(fetch, names))

    def _touch(self, mirror: Path, names: Iterable[str]) -> None:
        """Mark ``names`` used now (their checksums' mtime is the eviction order)."""
        for name in names:
            with contextlib.suppress(OSError):
                os.utime(self._sum_path(mirror, name))

    def _evict(self) -> None:
        """Remove whole files, least recently used first, until the cache is within its bound;
        never a file of a version a live process has open, and never another process's
        temporary file younger than an hour."""
        with self._lock:
            pinned = {(mirror, name) for mirror, v in self._held for name in self._listed.get(mirror, {}).get(v, [])}
        for rel, version in self._holds.others():  # versions other live processes have open
            mirror = self.root / rel
            with contextlib.suppress(OSError, ValueError, TypeError):
                names = json.loads(self._record_path(mirror, version).read_text(encoding="utf-8"))
                pinned.update((mirror, str(name)) for name in names)
        entries: list[tuple[float, int, Path, Path]] = []  # (last use, size, file, checksum)
        total = 0
        now = time.time()
        for folder in (p for p in self.root.iterdir() if p.is_dir()) if self.root.is_dir() else ():
            for stale in (folder / ".ragtt" / "tmp").glob("*.part"):
                with contextlib.suppress(OSError):
                    if now - stale.stat().st_mtime > _STALE_TMP_S:
                        stale.unlink(missing_ok=True)
            for mirror in folder.glob("*.lance"):
                sums = folder / ".ragtt" / "sums" / mirror.stem
                for path in (p for p in mirror.rglob("*") if p.is_file()):
                    name = path.relative_to(mirror).as_posix()
                    try:
                        size = path.stat().st_size
                    except OSError:  # another process evicted it just now
                        continue
                    try:
                        used = (sums / name).stat().st_mtime
                    except OSError:  # no checksum: never usable, evicted first
                        used = 0.0
                    total += size
                    if (mirror, name) not in pinned:
                        entries.append((used, size, path, sums / name))
        entries.sort(key=lambda e: e[0])
        for _, size, path, checksum in entries:
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            checksum.unlink(missing_ok=True)
            total -= size


class _Holds:
    """The versions this process holds, as ``<folder>/<pid>-<token>.json``, and the lock file
    ``<pid>-<token>.lock`` it keeps locked while it lives (see the module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._name = ""
        self._lock_file: Any = None

    def publish(self, held: list[list[Any]]) -> None:
        """Replace this process's list with ``held`` (caller holds the cache's lock)."""
        if fcntl is None:
            return
        try:
            self._locked()
            listed = self.folder / f"{self._name}.json"
            if not held:  # nothing open: nothing for other processes to spare
                listed.unlink(missing_ok=True)
                return
            part = self.folder / f"{self._name}.json.part"
            part.write_text(json.dumps(held), encoding="utf-8")
            os.replace(part, listed)
        except OSError:  # a cache that cannot be written is reported where it is filled
            pass

    def _locked(self) -> None:
        """This process's lock file, made (again: after a fork, or the folder was deleted) and
        locked before it gets its name, so a lock file another process can take is a dead one's."""
        path = self.folder / f"{self._name}.lock"
        if self._lock_file is not None and self._name.startswith(f"{os.getpid()}-") and path.exists():
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"{os.getpid()}-{os.urandom(6).hex()}"
        part = self.folder / f"{name}.lock.part"
        handle = part.open("a")
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        os.replace(part, self.folder / f"{name}.lock")
        self._name, self._lock_file = name, handle  # closed (and unlocked) when the process exits

    def others(self) -> list[tuple[str, int]]:
        """(mirror relative to the root, version) of every live other process's list; the lists
        of dead processes are deleted."""
        if fcntl is None or not self.folder.is_dir():
            return []
        out: list[tuple[str, int]] = []
        names = {p.name.split(".", 1)[0] for p in self.folder.iterdir()} - {self._name}
        for name in names:
            listed, lock = self.folder / f"{name}.json", self.folder / f"{name}.lock"
            if not _alive(lock):  # its process died (or never got as far as its lock): tidy up
                for leftover in (listed, lock, self.folder / f"{name}.json.part"):
                    leftover.unlink(missing_ok=True)
                with contextlib.suppress(OSError):
                    part = self.folder / f"{name}.lock.part"
                    if time.time() - part.stat().st_mtime > _STALE_TMP_S:  # never being named now
                        part.unlink(missing_ok=True)
                continue
            with contextlib.suppress(OSError, ValueError, TypeError):
                out += [(str(rel), int(version)) for rel, version in json.loads(listed.read_text(encoding="utf-8"))]
        return out


def _alive(lock: Path) -> bool:
    """Whether the process that made ``lock`` still holds it (a lock that cannot be opened is
    taken to be live: never evict on doubt)."""
    try:
        handle = lock.open("r")
    except FileNotFoundError:
        return False
    except OSError:
        return True
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:  # BlockingIOError: its process holds it
            return True
        return False


_SHARED: dict[tuple[Path, int], IndexCache] = {}  # one per root and bound in a process
_SHARED_LOCK = threading.Lock()


def _safe(name: str) -> bool:
    """A path Lance listed that stays inside the mirror."""
    parts = PurePosixPath(name).parts
    return bool(parts) and not name.startswith("/") and ".." not in parts and "\\" not in name


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _write_atomically(tmp: Path, target: Path, data: bytes) -> None:
    tmp.mkdir(parents=True, exist_ok=True)
    part = tmp / f"{os.getpid()}-{threading.get_ident()}-{os.urandom(6).hex()}.part"
    try:
        with part.open("wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(part, target)
    finally:
        part.unlink(missing_ok=True)
