"""contract/records.py: ``@record`` behaves like ``@dataclass`` for everything the contract uses —
construction (positional, keyword, defaults, factories, every error), repr, equality — checked
against the real dataclass on generated class shapes and calls."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_host.contract.records import field, record

NAMES = st.lists(st.sampled_from(["a", "b", "c", "d", "e", "text", "kind"]), min_size=0, max_size=5, unique=True)
VALUES = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.floats(allow_nan=True), st.lists(st.integers()))


def _pair(names: list[str], n_required: int, factory_at: int | None) -> tuple[type, type]:
    """The same class shape built with @record and with @dataclass."""
    ns_r: dict[str, Any] = {"__annotations__": {}}
    ns_d: dict[str, Any] = {"__annotations__": {}}
    for i, name in enumerate(names):
        ns_r["__annotations__"][name] = "Any"
        ns_d["__annotations__"][name] = "Any"
        if i >= n_required:
            if i == factory_at:
                ns_r[name] = field(default_factory=list)
                ns_d[name] = dataclasses.field(default_factory=list)
            else:
                ns_r[name] = ns_d[name] = i
    return record(type("Shape", (), ns_r)), dataclasses.dataclass(type("Shape", (), ns_d))


def _outcome(cls: type, args: list[Any], kwargs: dict[str, Any]) -> Any:
    try:
        obj = cls(*args, **kwargs)
    except TypeError:
        return TypeError
    return obj


@settings(max_examples=300, deadline=None)
@given(
    names=NAMES,
    data=st.data(),
)
def test_record_matches_dataclass(names: list[str], data: st.DataObject) -> None:
    n_required = data.draw(st.integers(0, len(names)))
    factory_at = data.draw(st.one_of(st.none(), st.integers(0, max(0, len(names) - 1))))
    rec, dc = _pair(names, n_required, factory_at)
    args = data.draw(st.lists(VALUES, max_size=len(names) + 1))
    keys = st.sampled_from([*names, "zzz"]) if names else st.just("zzz")
    kwargs = data.draw(st.dictionaries(keys, VALUES, max_size=3))
    got, want = _outcome(rec, args, kwargs), _outcome(dc, args, kwargs)
    if want is TypeError:
        assert got is TypeError
        return
    assert got is not TypeError
    assert [getattr(got, n) for n in names] == [getattr(want, n) for n in names] or any(
        isinstance(getattr(want, n), float) and math.isnan(getattr(want, n)) for n in names
    )
    assert repr(got) == repr(want)
    again_r, again_d = _outcome(rec, args, kwargs), _outcome(dc, args, kwargs)
    assert (got == again_r) == (want == again_d)  # NaN fields: identity inside tuples, as dataclasses do
    assert got.__match_args__ == want.__match_args__ == tuple(names)
    assert type(got).__hash__ is None and type(want).__hash__ is None


def test_factories_are_called_per_instance_and_flags_are_honoured() -> None:
    @record
    class Thing:
        name: str
        items: list[int] = field(default_factory=list)
        cache: Any = field(default=None, repr=False, compare=False)
        level: int = 3

    a, b = Thing("x"), Thing("x")
    a.items.append(1)
    assert b.items == [] and a.items == [1]
    a.items.clear()
    a.cache = object()
    assert a == b and repr(a).endswith(".<locals>.Thing(name='x', items=[], level=3)")  # qualname, as dataclasses
    assert Thing.level == 3  # a plain default stays a class attribute, as with dataclasses
    assert Thing("y", level=4) != Thing("y") and Thing("y") != "y"


def test_definition_errors_match_dataclasses() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

        @record
        class Bad:
            a: int = 1
            b: int

    with pytest.raises(ValueError, match="mutable default list"):

        @record
        class Shared:
            a: list[int] = []


def test_a_dataclasses_field_still_works_in_a_record() -> None:
    # records have their own field(); one written with dataclasses.field behaves as before
    @record
    class Mixed:
        name: str
        tags: list[str] = dataclasses.field(default_factory=list)
        note: Any = dataclasses.field(default=None, repr=False)
        level: int = field(default=2, compare=False)

    a, b = Mixed("x"), Mixed("x", level=5)
    a.tags.append("t")
    assert Mixed("y").tags == [] and a.tags == ["t"]
    assert repr(b).endswith("Mixed(name='x', tags=[], level=5)")
    assert Mixed("x") == b  # level is not compared
    assert Mixed.note is None and Mixed.level == 2  # plain defaults stay class attributes


def test_field_refuses_a_default_and_a_factory_like_dataclasses() -> None:
    with pytest.raises(ValueError, match="cannot specify both default and default_factory"):
        field(default=1, default_factory=list)
    with pytest.raises(ValueError, match="cannot specify both default and default_factory"):
        dataclasses.field(default=1, default_factory=list)


def test_inherited_fields_come_first_and_an_override_keeps_its_place_like_dataclasses() -> None:
    def shapes(decorate: Any, make_field: Any) -> tuple[type, type]:
        @decorate
        class Base:
            a: int
            b: str = "b"
            tags: list[str] = make_field(default_factory=list)

        @decorate
        class Child(Base):
            b: str = "child"  # overridden: keeps its place, takes the new default
            c: int = 3
            shared: ClassVar[int] = 7  # a class attribute, not a field

        return Base, Child

    (rec_base, rec), (dc_base, dc) = shapes(record, field), shapes(dataclasses.dataclass, dataclasses.field)
    assert rec.__match_args__ == dc.__match_args__ == ("a", "b", "tags", "c")
    assert repr(rec(1)).rpartition(".")[2] == repr(dc(1)).rpartition(".")[2] == "Child(a=1, b='child', tags=[], c=3)"
    assert rec(1, "x", ["t"], 4) == rec(1, "x", ["t"], 4) != rec(1)
    assert rec(1).tags is not rec(1).tags and rec.shared == 7
    assert rec_base.__match_args__ == dc_base.__match_args__ == ("a", "b", "tags")


def test_init_errors_name_the_argument_in_the_order_dataclasses_would() -> None:
    @record
    class Thing:
        a: int
        b: int
        c: list[int] = field(default_factory=list)

    with pytest.raises(TypeError, match=r"takes 3 positional arguments but 4 were given"):
        Thing(1, 2, [], 4)
    with pytest.raises(TypeError, match=r"multiple values for argument 'a'"):
        Thing(1, a=2, zz=3)
    with pytest.raises(TypeError, match=r"missing required argument: 'b'"):
        Thing(1, zz=3)  # a missing field is named before an unknown keyword
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'zz'"):
        Thing(1, b=2, zz=3, yy=4)
    assert (Thing(1, 2).c, Thing(a=1, b=2, c=[5]).c) == ([], [5])


def test_init_sets_fields_past_a_class_own_setattr() -> None:
    seen: list[str] = []

    @record
    class Guarded:
        a: int
        b: str = "x"

        def __setattr__(self, name: str, value: Any) -> None:
            seen.append(name)
            object.__setattr__(self, name, value)

    g = Guarded(1)
    assert (g.a, g.b, seen) == (1, "x", [])  # __init__ stores the fields directly, as it always did
    g.a = 2
    assert seen == ["a"]
