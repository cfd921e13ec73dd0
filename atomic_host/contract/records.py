"""``@record``: a dataclass that costs nothing to define, for the contract's events and results.

``dataclasses.dataclass`` compiles an ``__init__``, ``__repr__`` and ``__eq__`` per class (about 0.4 ms
each on a slow machine); the contract defines some twenty event and result classes that every host
start imports, so that would be ~8 ms of startup. A record gets the same behaviour from shared,
generic methods instead: fields in annotation order, positional or keyword arguments, defaults and
``field(default_factory=...)`` (and ``repr=False`` / ``compare=False``), a dataclass-style repr and
field-wise equality (a tuple comparison, like a dataclass's ``__eq__``). Type checkers treat it
as a dataclass (``dataclass_transform``). Instances are mutable and unhashable, like a default dataclass.

:func:`field` is this module's own, not ``dataclasses.field``: ``dataclasses`` (with ``copy``) is
~3% of the instructions of a host start, and the contract is imported on every one. A
``dataclasses.field(...)`` in a record still works as it always did.
"""

from __future__ import annotations

import sys
from typing import Any, TypeVar, dataclass_transform

__all__ = ["Field", "field", "record"]

T = TypeVar("T", bound=type)


class _Missing:
    """The type of :data:`MISSING`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""No default (no default factory) given to :func:`field`."""
_NO_DEFAULT: Any = MISSING


class Field:
    """What :func:`field` returns: a record field's default or default factory, and its flags."""

    __slots__ = ("compare", "default", "default_factory", "repr")

    def __init__(self, default: Any, default_factory: Any, repr: bool, compare: bool) -> None:
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.compare = compare

    def __repr__(self) -> str:
        return (
            f"Field(default={self.default!r}, default_factory={self.default_factory!r}, "
            f"repr={self.repr!r}, compare={self.compare!r})"
        )


def field(
    *,
    default: Any = MISSING,
    default_factory: Any = MISSING,
    repr: bool = True,
    compare: bool = True,
) -> Any:
    """A record field with a ``default`` or a ``default_factory`` (called per instance), left out of
    the repr (``repr=False``) or of equality (``compare=False``): ``dataclasses.field``'s meaning."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, repr, compare)


def _as_field(value: Any) -> Field | None:
    """``value`` as a :class:`Field` if it is one, or a ``dataclasses.Field`` (a record may be written
    with ``dataclasses.field``; then ``dataclasses`` has been imported); None for a plain default."""
    if isinstance(value, Field):
        return value
    dataclasses = sys.modules.get("dataclasses")
    # getattr: another thread may be importing dataclasses right now (the warm-up thread's
    # pydantic); a value can only be a dataclasses.Field once that class exists
    field_type = getattr(dataclasses, "Field", None)
    if field_type is None or not isinstance(value, field_type):
        return None
    unset = dataclasses.MISSING
    default = MISSING if value.default is unset else value.default
    factory = MISSING if value.default_factory is unset else value.default_factory
    return Field(default, factory, value.repr, value.compare)


_object_setattr = object.__setattr__


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    cls = type(self)
    names: tuple[str, ...] = cls.__record_fields__
    # object.__setattr__ (like a dataclass's __init__) bypasses a class's own __setattr__; without
    # one, the builtin setattr does the same for less
    put = setattr if cls.__setattr__ is _object_setattr else _object_setattr
    rest = names
    if args:
        if len(args) > len(names):
            raise TypeError(f"{cls.__name__}() takes {len(names)} positional arguments but {len(args)} were given")
        for name, value in zip(names, args, strict=False):
            if name in kwargs:
                raise TypeError(f"{cls.__name__}() got multiple values for argument {name!r}")
            put(self, name, value)
        rest = names[len(args) :]
    defaults: dict[str, Any] = cls.__record_defaults__
    used = 0
    for name in rest:
        if name in kwargs:
            put(self, name, kwargs[name])
            used += 1
            continue
        default = defaults.get(name, _NO_DEFAULT)
        if default is _NO_DEFAULT:
            raise TypeError(f"{cls.__name__}() missing required argument: {name!r}")
        put(self, name, default.default_factory() if isinstance(default, Field) else default)
    if used != len(kwargs):
        unexpected = next(key for key in kwargs if key not in names)
        raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {unexpected!r}")


def _repr(self: Any) -> str:
    fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in type(self).__record_repr__)
    return f"{type(self).__qualname__}({fields})"


def _eq(self: Any, other: Any) -> bool:
    if other.__class__ is not self.__class__:
        return NotImplemented
    names = type(self).__record_compare__
    return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)


_CLASSVAR = ("ClassVar", "typing.ClassVar")


@dataclass_transform(field_specifiers=(field,))
def record(cls: T) -> T:
    """Give ``cls`` dataclass behaviour from its annotations (see the module docstring).

    Every host start defines some sixty records, so this runs in one pass over the annotations,
    reads the class namespace once (each ``cls.__dict__`` is a new mappingproxy) and shares the
    field tuple among the attributes that hold the same names."""
    names: list[str] = []
    defaults: dict[str, Any] = {}
    hidden: set[str] = set()  # field(repr=False)
    uncompared: set[str] = set()  # field(compare=False)
    mro = cls.__mro__
    for base in reversed(mro[1:-1] if mro[-1] is object else mro[1:]):  # inherited fields first, as dataclasses do
        for name in getattr(base, "__record_fields__", ()):
            if name not in names:
                names.append(name)
        defaults.update(getattr(base, "__record_defaults__", {}))
    inherited = bool(names)
    namespace = cls.__dict__
    own = namespace.get("__annotations__", {})  # its own annotations (not inherited ones: a class may have none)
    for name, annotation in own.items():
        if (annotation if type(annotation) is str else str(annotation)).startswith(_CLASSVAR):
            continue  # a class attribute, not a field (as in dataclasses)
        if not inherited or name not in names:
            names.append(name)
        value = namespace.get(name, MISSING)
        if value is MISSING:
            continue
        # a dataclasses.field(...) can only be one once dataclasses is imported
        spec = value if isinstance(value, Field) else _as_field(value) if "dataclasses" in sys.modules else None
        if spec is not None:
            if not spec.repr:
                hidden.add(name)
            if not spec.compare:
                uncompared.add(name)
            if spec.default_factory is not MISSING:
                defaults[name] = spec
                delattr(cls, name)
            elif spec.default is not MISSING:
                defaults[name] = spec.default
                setattr(cls, name, spec.default)
            else:
                delattr(cls, name)
        elif isinstance(value, (list, dict, set)):
            kind = type(value).__name__
            raise ValueError(f"mutable default {kind} for field {name!r}: use field(default_factory=...)")
        else:
            defaults[name] = value  # stays a class attribute too, as with dataclasses
    seen_default = False
    for name in names:
        if name in defaults:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {name!r} follows default argument in {cls.__name__}")
    fields = tuple(names)
    cls.__record_fields__ = fields  # type: ignore[attr-defined]
    cls.__record_defaults__ = defaults  # type: ignore[attr-defined]
    cls.__record_repr__ = tuple(n for n in names if n not in hidden) if hidden else fields  # type: ignore[attr-defined]
    cls.__record_compare__ = tuple(n for n in names if n not in uncompared) if uncompared else fields  # type: ignore[attr-defined]
    cls.__match_args__ = fields  # type: ignore[attr-defined]
    if "__init__" not in namespace:
        cls.__init__ = _init  # type: ignore[misc]
    if "__repr__" not in namespace:
        cls.__repr__ = _repr  # type: ignore[assignment]
    if "__eq__" not in namespace:
        cls.__eq__ = _eq  # type: ignore[assignment]
        cls.__hash__ = None  # type: ignore[assignment]  # mutable, like a default dataclass
    return cls
