"""Lazy re-exports for a package's ``__init__``: a name is imported from its module on first use.

::

    _LAZY = {"Tool": "atomic_host.contract.tools", ...}
    __all__ = list(_LAZY)
    __getattr__ = lazy_exports(__name__, _LAZY)

(with the same names imported under ``TYPE_CHECKING`` for type checkers), so importing the package
costs almost nothing and each name is listed once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


def lazy_exports(package: str, table: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: each name of ``table`` from the module it names."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib  # on first use: the packages that re-export stay cheap to import

        return getattr(importlib.import_module(module), name)

    return __getattr__
