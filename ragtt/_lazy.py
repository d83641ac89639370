"""Lazy re-exports for package ``__init__`` modules (PEP 562), so imports stay fast;
``import_lancedb``, which defers the part of LanceDB's import that ragtt never uses; and
``import_litellm``, which keeps litellm offline at import without touching ``os.environ``."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

__all__ = ["LANCEDB_SERIES", "import_lancedb", "import_litellm", "lazy_exports", "scoped_environment"]


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
# first attribute anyone reads from it, and its submodules import as usual meanwhile. That
# leans on how this LanceDB series imports the client, so it is done for LANCEDB_SERIES only:
# any other LanceDB fails here, loudly, until someone checks the shortcut still holds (the
# pin in pyproject.toml and the fixture replay in tests/fixtures say the same of its scoring).
LANCEDB_SERIES = "0.40."
_DEFERRED_PACKAGES = ("lance_namespace_urllib3_client",)


def import_lancedb() -> Any:
    """``import lancedb``, minus the namespace client's REST layer until something uses it."""
    if "lancedb" not in sys.modules:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("lancedb")
        except PackageNotFoundError:
            found = "none"
        if not found.startswith(LANCEDB_SERIES):
            from ragtt.errors import ConfigError

            raise ConfigError(
                f"ragtt supports lancedb {LANCEDB_SERIES}x (its BM25 scores and version format are what "
                f"every logged query was ranked with); lancedb {found} is installed. Install "
                f"'lancedb>={LANCEDB_SERIES}0,<{_next_series(LANCEDB_SERIES)}', or upgrade ragtt"
            )
        for name in _DEFERRED_PACKAGES:
            if name not in sys.modules:
                _defer_package_init(name)
    return importlib.import_module("lancedb")


def _next_series(series: str) -> str:
    major, minor, _ = series.split(".")
    return f"{major}.{int(minor) + 1}"


@contextmanager
def scoped_environment(values: Mapping[str, str]) -> Iterator[None]:
    """``values`` in ``os.environ`` for the block only (a variable already set keeps its
    value): for libraries that read a setting once, as they import or load."""
    added = [name for name in values if name not in os.environ]
    for name in added:
        os.environ[name] = values[name]
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


def import_litellm() -> Any:
    """``import litellm`` with its model cost map read from the package, not fetched from the
    network (litellm reads ``LITELLM_LOCAL_MODEL_COST_MAP`` once, as it imports)."""
    if "litellm" in sys.modules:
        return sys.modules["litellm"]
    with scoped_environment({"LITELLM_LOCAL_MODEL_COST_MAP": "True"}):
        return importlib.import_module("litellm")


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
