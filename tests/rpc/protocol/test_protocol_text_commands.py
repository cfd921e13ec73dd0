"""``prompt`` / ``steer`` / ``follow_up`` of just ``type``, ``id`` and a ``message`` are built without
the validator (core/protocol/validate.py): whatever a client sends, ``parse_command`` must give
what the validator gives — the same model (fields, fields set, extras, wire form) or the same error.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from atomic_host.core.protocol.commands import COMMANDS
from atomic_host.core.protocol.validate import CommandError, describe_error, parse_command

SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5))
VALUE = st.one_of(SCALAR, st.lists(SCALAR, max_size=2), st.dictionaries(st.text(max_size=3), SCALAR, max_size=2))


@st.composite
def commands(draw: st.DrawFn) -> dict[str, Any]:
    obj: dict[str, Any] = {"type": draw(st.sampled_from(["prompt", "steer", "follow_up"]))}
    if draw(st.booleans()):
        obj["id"] = draw(VALUE)
    if draw(st.integers(0, 5)):  # mostly there
        obj["message"] = draw(st.one_of(st.text(), st.text(), VALUE))
    for key in draw(st.lists(st.sampled_from(["images", "streamingBehavior", "streaming_behavior", "x"]), max_size=2)):
        obj[key] = draw(st.one_of(VALUE, st.sampled_from(["steer", "followUp"])))
    return dict(draw(st.permutations(list(obj.items()))))


def _validated(obj: dict[str, Any]) -> Any:
    """What the validator makes of ``obj`` (the model, or the error text)."""
    try:
        return COMMANDS[obj["type"]].model_validate(obj)
    except ValidationError as exc:
        return describe_error(exc)


@settings(max_examples=600, deadline=None)
@given(obj=commands())
def test_text_commands_parse_as_the_validator_reads_them(obj: dict[str, Any]) -> None:
    expected = _validated(obj)
    try:
        got = parse_command(obj)
    except CommandError as exc:
        assert exc.message == expected
        return
    assert not isinstance(expected, str), expected
    assert got == expected
    assert type(got) is type(expected)
    assert got.model_fields_set == expected.model_fields_set
    assert got.model_extra == expected.model_extra
    assert got.to_wire() == expected.to_wire()


def test_a_plain_prompt_is_built_without_the_validator(monkeypatch: Any) -> None:
    cls = COMMANDS["prompt"]

    def refuse(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("validated")

    monkeypatch.setattr(cls, "model_validate", refuse)
    cmd = parse_command({"type": "prompt", "id": "p1", "message": "hi"})
    assert (cmd.message, cmd.id, cmd.images, cmd.streaming_behavior) == ("hi", "p1", None, None)
