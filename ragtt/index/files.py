"""The bytes of a chunk table: the files its versions read, where they are, and their digests.

Lance never rewrites a data, deletion or index file: a write adds new ones, and a version is
a manifest listing the files it reads. So the size and SHA-256 of each file, recorded when
the version that added it is logged (``ragtt/commit.py``), prove every later read of it. The
table lives in a folder or on object storage; ``TableFiles`` reads either (object storage
through obstore, which speaks the same ``storage_options`` keys as Lance: both are the Rust
``object_store`` crate).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragtt.errors import ConfigError, StoreError
from ragtt.values import first_line

__all__ = ["TRACKED_TYPES", "FileRecord", "TableFiles", "store_options"]

# What a version reads besides its manifest (a transaction file is only read by writers'
# conflict checks, and a manifest is covered by the log's version records).
TRACKED_TYPES = frozenset({"data file", "deletion file", "index file"})
_BLOCK = 1 << 20
_THREADS = 4  # hashing files at once: enough to overlap reads with hashing on a few cores
# A local write adds a few files: below these, they are hashed on the calling thread, since a
# pool's threads must each be scheduled first, which on a busy machine costs more than the hashing
# (measured: an ingest's recording waited up to 0.3 s on a loaded machine for 6 ms of work).
_INLINE_FILES = 32
_INLINE_BYTES = 64 << 20
# obstore takes these as client options, the rest as the store's config (Lance takes all in one).
_CLIENT_KEYS = frozenset({"allow_http", "allow_invalid_certificates", "timeout", "connect_timeout", "proxy_url"})
_PREFIXES = ("aws_", "google_", "azure_")
_PROVIDERS = {"s3": "aws_", "s3a": "aws_", "gs": "google_", "az": "azure_", "azure": "azure_", "abfs": "azure_"}


@dataclass(frozen=True)
class FileRecord:
    """One file of the table as recorded in the log: its path in the table, size and SHA-256."""

    path: str
    size: int
    sha256: str

    def to_list(self) -> list[Any]:
        return [self.path, self.size, self.sha256]

    @classmethod
    def from_list(cls, row: list[Any]) -> FileRecord:
        return cls(str(row[0]), int(row[1]), str(row[2]))


def store_options(
    where: str, storage_options: dict[str, str], environ: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """(store config, client options) for obstore from a table's ``storage_options`` and the
    environment, taking what Lance takes for the same URI and nothing else.

    obstore reads its provider's own variables (``AWS_*`` for s3://) itself, but not the HTTP
    client's, which Lance does read (as the ``object_store`` crate parses them: a bare
    ``ALLOW_HTTP`` or ``AWS_ALLOW_HTTP``): a CI job's ``ALLOW_HTTP`` must count here too, or
    verify could not reach the index the queries read. Another provider's variables never
    count: ``AZURE_PROXY_URL`` or ``GOOGLE_TIMEOUT`` beside an s3:// index neither routes nor
    shapes these requests. In ``storage_options`` a client key counts bare or with this
    provider's prefix; a key with another provider's prefix is dropped (it is meant for
    another store)."""
    scheme = where.split("://", 1)[0].lower()
    mine = _PROVIDERS.get(scheme)
    client: dict[str, str] = {}
    if mine is not None:
        named = {key.lower(): value for key, value in environ.items()}
        for bare in _CLIENT_KEYS:  # the provider's own name wins over the bare one
            value = named.get(mine + bare, named.get(bare))
            if value is not None:
                client[bare] = value
    config: dict[str, str] = {}
    for key, value in storage_options.items():
        name = key.lower()
        prefix = next((p for p in _PREFIXES if name.startswith(p)), None)
        if prefix is not None and prefix != mine:
            continue
        bare = name[len(prefix) :] if prefix else name
        if bare in _CLIENT_KEYS:
            client[bare] = value
        else:
            config[name] = value
    return config, client


class TableFiles:
    """The files under one table's folder ``where`` (a local path or an object-store URI)."""

    def __init__(self, where: str, storage_options: dict[str, str] | None = None) -> None:
        self.where = where.rstrip("/")
        self.remote = "://" in where
        self._options = storage_options or {}
        self._store: Any = None

    def _obstore(self) -> Any:
        if self._store is None:
            try:
                from obstore.exceptions import UnknownConfigurationKeyError
                from obstore.store import from_url
            except ImportError:  # pragma: no cover - a dependency
                raise ConfigError("checking an index on object storage needs obstore: pip install obstore") from None
            config: Any
            client: Any  # obstore types them per provider; these are the provider's keys
            config, client = store_options(self.where, self._options, os.environ)
            for _ in range(len(config) + 1):  # a key Lance takes that obstore does not is left out
                try:
                    self._store = from_url(self.where, config=config or None, client_options=client or None)
                    break
                except UnknownConfigurationKeyError as exc:
                    unknown = next((k for k in config if f"'{k}'" in str(exc)), None)
                    if unknown is None:
                        raise self._error(exc) from None
                    del config[unknown]
                except Exception as exc:
                    raise self._error(exc) from None
        return self._store

    def _error(self, exc: Exception) -> StoreError:
        """An object store's error as one line naming the index: obstore's messages go on with a
        multi-line debug dump, which a report or an HTTP answer should not carry."""
        first = first_line(exc)
        return StoreError(f"the object store of the index {self.where} answered: {first[:300]}")

    def sizes(self, paths: Iterable[str]) -> dict[str, int | None]:
        """Each path's size, None when it is not there (one listing on object storage)."""
        wanted = list(paths)
        if not self.remote:
            return _local_sizes(self.where, wanted)
        import obstore

        listed: dict[str, int] = {}
        try:
            for batch in obstore.list(self._obstore()):
                for meta in batch:
                    listed[str(meta["path"])] = int(meta["size"])
        except StoreError:
            raise
        except Exception as exc:
            raise self._error(exc) from None
        return {name: listed.get(name) for name in wanted}

    def chunks(self, name: str) -> Iterator[bytes]:
        """The bytes of ``name``, a block at a time (FileNotFoundError when it is gone)."""
        if not self.remote:
            with open(os.path.join(self.where, name), "rb") as fh:
                while block := fh.read(_BLOCK):
                    yield block
            return
        import obstore
        from obstore.exceptions import NotFoundError

        try:
            result = obstore.get(self._obstore(), name)
            for block in result.stream(min_chunk_size=_BLOCK):
                yield bytes(block)
        except NotFoundError:
            raise FileNotFoundError(f"{self.where}/{name}") from None
        except StoreError:
            raise
        except Exception as exc:
            raise self._error(exc) from None

    def put(self, name: str, blocks: Iterable[bytes]) -> None:
        """Write ``blocks`` as the file ``name`` (an object is uploaded whole or not at all; a
        local file is written in place, its folders made)."""
        if not self.remote:
            target = Path(self.where, name)
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("wb") as fh:
                for block in blocks:
                    fh.write(block)
            return
        import obstore

        try:
            obstore.put(self._obstore(), name, iter(blocks))
        except StoreError:
            raise
        except Exception as exc:
            raise self._error(exc) from None

    def remove(self, name: str) -> None:
        """Delete the file ``name`` (gone already is fine)."""
        if not self.remote:
            Path(self.where, name).unlink(missing_ok=True)
            return
        import obstore

        try:
            obstore.delete(self._obstore(), name)
        except FileNotFoundError:
            return
        except Exception as exc:
            raise self._error(exc) from None

    def clear(self) -> None:
        """Delete every file under the table's folder (what a refused restore had written there)."""
        if not self.remote:
            import shutil

            shutil.rmtree(self.where, ignore_errors=True)
            return
        import obstore

        try:
            for batch in obstore.list(self._obstore()):
                obstore.delete(self._obstore(), [str(meta["path"]) for meta in batch])
        except StoreError:
            raise
        except Exception as exc:
            raise self._error(exc) from None

    def digest(self, name: str, local: Path | None = None) -> FileRecord | None:
        """The size and SHA-256 of ``name`` (read from ``local``, a copy known to be whole, when
        given); None when it is gone."""
        if local is not None:
            with local.open("rb") as fh:
                return FileRecord(name, local.stat().st_size, hashlib.file_digest(fh, "sha256").hexdigest())
        if not self.remote:
            return _local_digest(name, os.path.join(self.where, name))
        h, size = hashlib.sha256(), 0
        try:
            for block in self.chunks(name):
                h.update(block)
                size += len(block)
        except FileNotFoundError:
            return None
        return FileRecord(name, size, h.hexdigest())

    def digests(self, names: Iterable[str]) -> list[FileRecord | None]:
        """``digest`` of each name, several at once (hashlib and the object store let go of the
        GIL): a few threads, each given a run of names, so that a table of many small files does
        not pay a task per file."""
        from concurrent.futures import ThreadPoolExecutor

        wanted = list(names)
        threads = min(_THREADS, len(wanted))
        if threads <= 1 or self._few_local(wanted):
            return [self.digest(n) for n in wanted]
        runs = [wanted[i::threads] for i in range(threads)]
        with ThreadPoolExecutor(threads) as pool:
            done = list(pool.map(lambda run: [self.digest(n) for n in run], runs))
        found: list[FileRecord | None] = [None] * len(wanted)
        for i, records in enumerate(done):
            found[i::threads] = records
        return found

    def _few_local(self, names: list[str]) -> bool:
        """Whether ``names`` are local files few and small enough to hash on this thread."""
        if self.remote or len(names) >= _INLINE_FILES:
            return False
        return sum(size or 0 for size in _local_sizes(self.where, names).values()) < _INLINE_BYTES


def _local_sizes(where: str, names: list[str]) -> dict[str, int | None]:
    """Each name's size in the folder ``where``, None when it is not there: stat'ed relative to
    the open folder where the system allows, so the path is not walked from the root each time."""
    found: dict[str, int | None] = {}
    relative = os.stat in os.supports_dir_fd
    folder = os.open(where, os.O_RDONLY) if relative and os.path.isdir(where) else None
    try:
        for name in names:
            try:
                found[name] = (
                    os.stat(name, dir_fd=folder) if folder is not None else os.stat(os.path.join(where, name))
                ).st_size
            except (FileNotFoundError, NotADirectoryError):
                found[name] = None
    finally:
        if folder is not None:
            os.close(folder)
    return found


def _local_digest(name: str, path: str) -> FileRecord | None:
    """Size and SHA-256 of the file at ``path`` (None: gone), read with plain ``os.read`` calls
    into fresh blocks: most of a table's files are a few KiB, and a buffered file object or
    ``hashlib.file_digest``'s 256 KiB buffer per file cost more than the reading (measured:
    twice the time of reading every file once). Both calls let go of the GIL."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except (FileNotFoundError, NotADirectoryError):
        return None
    h, size = hashlib.sha256(), 0
    try:
        while block := os.read(fd, _BLOCK):
            h.update(block)
            size += len(block)
    finally:
        os.close(fd)
    return FileRecord(name, size, h.hexdigest())
