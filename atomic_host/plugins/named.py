"""Tables of named contributions: session store kinds and exporters.

A name maps to one contribution. A later registration of a name replaces the earlier one (load
order: built-ins, installed packages, local files) — that is how a plugin replaces a built-in
exporter or store kind — and the replacement is reported on stderr, so it is never silent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from atomic_host.kit.log import log

T = TypeVar("T")


class NamedTable(Generic[T]):
    """``name -> contribution`` of one registration hook; each item's owner is in ``item.plugin``."""

    def __init__(self, what: str, cls: type[T], key: str) -> None:
        self.what = what
        """What an item is called in messages: ``"store kind"``, ``"exporter"``."""
        self.cls = cls
        self.key = key
        """The item's attribute that names it: ``kind``, ``name``."""
        self.items: dict[str, T] = {}

    def register_for(self, plugin: str) -> Callable[[Any], None]:
        """The ``register`` argument handed to ``plugin``'s implementation of the hook."""

        def register(item: Any) -> None:
            if not isinstance(item, self.cls):
                raise TypeError(f"expected {self.cls.__name__}, got {type(item).__name__}")
            item.plugin = plugin  # type: ignore[attr-defined]
            name = getattr(item, self.key)
            old = self.items.get(name)
            if old is not None and old.plugin != plugin:  # type: ignore[attr-defined]
                log.warning(f"{self.what} {name!r} of {old.plugin} replaced by {plugin}")  # type: ignore[attr-defined]
            self.items[name] = item

        return register

    def remove_plugin(self, plugin: str) -> None:
        self.items = {k: v for k, v in self.items.items() if v.plugin != plugin}  # type: ignore[attr-defined]

    def get(self, name: str) -> T | None:
        return self.items.get(name)

    def names(self) -> list[str]:
        return sorted(self.items)

    def __contains__(self, name: object) -> bool:
        return name in self.items

    def __iter__(self) -> Iterator[str]:
        return iter(self.items)
