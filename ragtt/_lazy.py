"""Lazy re-exports for package ``__init__`` modules (PEP 562), so imports stay fast; and
``import_lancedb``, which defers the part of LanceDB's import that ragtt never uses."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["import_lancedb", "lance_environment", "lazy_exports"]

# Lance's defaults that ragtt overrides, unless the deployment sets them: quiet native logs,
# scans in batches of 1,024 rows instead of 8,192, and at most 32 MiB of reads buffered ahead
# of a scan instead of 2 GiB. Index builds read the whole table ahead: on a 200 MB ingest
# (343k rows) the full-text update's peak fell from +307 MiB over the process's baseline to
# +197 with the batch size, and the IVF-PQ build's from +591 to +321 with the buffer (+416 at
# 64 MiB); flat vector searches and column scans at that size ran no slower.
_LANCE_DEFAULTS = {
    "RUST_LOG": "error",
    "LANCE_DEFAULT_BATCH_SIZE": "1024",
    "LANCE_DEFAULT_IO_BUFFER_SIZE": str(32 << 20),
}


def lance_environment() -> None:
    """Set ragtt's defaults for Lance's environment variables (before Lance reads them; a
    variable already set is left alone), and cap the malloc arenas its threads will share
    (``ragtt._memory.cap_malloc_arenas``; ``MALLOC_ARENA_MAX`` set by the deployment wins)."""
    from ragtt._memory import cap_malloc_arenas

    for name, value in _LANCE_DEFAULTS.items():
        os.environ.setdefault(name, value)
    cap_malloc_arenas()


def lazy_exports(
    package: str, exports: dict[str, str], public: list[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: each name in ``exports`` is imported
    from its module on first use and then cached in the package's namespace."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *public})

    return __getattr__, __dir__


# ``import lancedb`` imports its namespace client, whose package __init__ imports every REST
# API module and its pydantic models (measured: about half of lancedb's import time). ragtt
# opens local tables only. The package is registered unexecuted; its __init__ runs on the
# first attribute anyone reads from it, and its submodules import as usual meanwhile.
_DEFERRED_PACKAGES = ("lance_namespace_urllib3_client",)


def import_lancedb() -> Any:
    """``import lancedb``, minus the namespace client's REST layer until something uses it."""
    lance_environment()
    if "lancedb" not in sys.modules:
        for name in _DEFERRED_PACKAGES:
            if name not in sys.modules:
                _defer_package_init(name)
    return importlib.import_module("lancedb")


def _defer_package_init(name: str) -> None:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def __getattr__(attr: str) -> Any:
        if attr.startswith("__"):  # import machinery probes (__path__ is already set)
            raise AttributeError(attr)
        vars(module).pop("__getattr__", None)
        loader.exec_module(module)
        return getattr(module, attr)

    vars(module)["__getattr__"] = __getattr__  # PEP 562: consulted for names the module lacks
    sys.modules[name] = module
