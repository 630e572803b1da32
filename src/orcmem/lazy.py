"""Lazy package attributes (PEP 562): a package names what it exports, and each module loads on first use.

Hooks run on every prompt; importing one submodule must not import the whole package with it.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # importing typing costs the hooks milliseconds
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


def lazy_getattr(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` that imports `exports[name]` (a module path) when `name` is first asked for."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        __import__(module)  # importlib itself is a module the hooks would otherwise load
        value = getattr(sys.modules[module], name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
