"""The base of the client's typed records (``types.py`` is generated on it)."""

from __future__ import annotations

from typing import Any


class WireObject(dict):  # type: ignore[type-arg]
    """A protocol record: the wire ``dict`` itself (camelCase keys, ``json.dumps``-able, unknown keys
    kept), with a typed, snake_case property per field that wraps nested records in their classes.

    ``TextDelta({"type": "text_delta", ...})`` wraps a record as it came; ``TextDelta(content_index=0,
    delta="hi")`` builds one from fields (the discriminator filled in)."""

    __slots__ = ()
    _KEYS: dict[str, str] = {}
    _DEFAULTS: dict[str, Any] = {}

    def __init__(self, record: Any = (), /, **fields: Any) -> None:
        if not fields:
            super().__init__(record)
            return
        super().__init__(self._DEFAULTS, **dict(record))
        for name, value in fields.items():
            key = self._KEYS.get(name)
            if key is None:
                raise TypeError(f"{type(self).__name__} has no field {name!r}")
            if value is not None:
                self[key] = value

    @classmethod
    def wire_keys(cls) -> dict[str, str]:
        """Property name -> wire key, for every declared field."""
        return dict(cls._KEYS)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"


def pick(table: dict[str, type[WireObject]], key: str, record: dict[str, Any]) -> WireObject:
    """``record`` as the class ``table`` gives for its ``key`` (a bare :class:`WireObject` when none)."""
    cls = table.get(record.get(key)) if isinstance(record, dict) else None  # type: ignore[arg-type]
    return (cls or WireObject)(record)
