"""Lazy re-exports for package ``__init__`` modules (PEP 562), so imports stay fast."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: dict[str, str],
                 public: list[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
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
