"""The RPC command table (``frontends/rpc/table.py``): every declared command
(``core/protocol/declarations.py``) has exactly one handler of the right shape, lanes come from the
declarations; and, in process and with hypothesis, every command line with random (mostly
wrong-typed) fields gets exactly one answer: the handler is called once with the validated model, or
a validation error."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atomic_host.core.jsonfast import loads_strict
from atomic_host.core.protocol.commands import COMMANDS
from atomic_host.core.protocol.declarations import DECLARATIONS, command
from atomic_host.core.protocol.validate import CommandError
from atomic_host.frontends.rpc.handlers import Handlers
from atomic_host.frontends.rpc.server import RpcServer
from atomic_host.frontends.rpc.table import CommandSpec, CommandTable, declared

SPECS = declared(Handlers)

MUST_BE_CONCURRENT = {
    "abort", "abort_bash", "abort_retry", "abort_compaction", "extension_ui_response", "login_provider",
    "cancel_login_provider",
}  # fmt: skip
"""Semantics §1: what stops or answers something already running never waits for the ordinary lane;
``login_provider`` waits for a person in a browser and must not hold every other command."""


def _bare(name: str) -> bool:
    return set(COMMANDS[name].model_fields) == {"type", "id"}


def test_every_declared_command_has_exactly_one_handler() -> None:
    handlers = [v for k, v in vars(Handlers).items() if k.startswith("on_")]
    assert len(handlers) == len(COMMANDS) == len(SPECS) == len(DECLARATIONS)
    assert list(SPECS) == list(DECLARATIONS)  # declaration order
    assert all(SPECS[name].name == name for name in SPECS)
    concurrent = {name for name, spec in SPECS.items() if spec.lane == "concurrent"}
    assert concurrent >= MUST_BE_CONCURRENT
    assert "prompt" not in concurrent


def test_handlers_take_what_their_model_carries() -> None:
    for name, spec in SPECS.items():
        assert spec.fields == (not _bare(name)), f"{name}: a handler takes a command exactly when it has fields"
        assert spec.decl.bare == _bare(name)
        if spec.fields and not spec.raw:
            annotation = spec.function.__annotations__[spec.function.__code__.co_varnames[1]]
            assert annotation in (DECLARATIONS[name].cls.__name__, f"_{DECLARATIONS[name].cls.__name__}"), name


def test_the_table_gives_the_lanes_and_the_no_field_set() -> None:
    table = CommandTable(Handlers(rt=None))  # type: ignore[arg-type]  # binding touches no runtime
    assert set(table) == set(COMMANDS) and len(table) == len(COMMANDS)
    assert table.concurrent == {name for name, decl in DECLARATIONS.items() if decl.lane == "concurrent"}
    assert table.no_fields == {name for name in COMMANDS if _bare(name)}


def test_a_handler_for_no_command_or_a_missing_one_is_refused() -> None:
    class Stray(Handlers):
        async def on_get_everything(self) -> Any: ...

    with pytest.raises(TypeError, match="on_get_everything answers no declared command"):
        declared(Stray)

    class Partial:
        async def on_get_state(self) -> Any: ...

    with pytest.raises(TypeError, match="has no handler for: on_prompt"):
        declared(Partial)

    class WrongShape(Handlers):
        async def on_get_state(self, cmd: Any) -> Any: ...

    with pytest.raises(TypeError, match="on_get_state takes a command, but 'get_state' is declared without fields"):
        declared(WrongShape)


def test_a_declaration_is_refused_twice_or_with_an_unknown_lane() -> None:
    with pytest.raises(ValueError, match="declared twice"):
        command("abort")(type("Again", (), {}))
    with pytest.raises(ValueError, match="unknown lane"):
        command("brand_new", lane="fast")  # type: ignore[arg-type]
    assert "brand_new" not in DECLARATIONS


# --- in process: exactly one outcome per command, whatever its fields ---


class Probe:
    """Stands in for the handler object: each declared handler records what it was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        for spec in SPECS.values():
            setattr(self, spec.function.__name__, self._recorder(spec))

    def _recorder(self, spec: CommandSpec) -> Any:
        async def record(*args: Any) -> Any:
            self.calls.append((spec.name, args))
            return {"ok": spec.name}

        return record


def _bound(probe: Probe) -> dict[str, Any]:
    return {name: spec.bind(probe) for name, spec in SPECS.items()}


def _wire_fields(name: str) -> list[str]:
    return [f.alias or k for k, f in COMMANDS[name].model_fields.items() if k not in ("type", "id")]


json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
json_values = st.recursive(
    json_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)  # fmt: skip


@st.composite
def commands(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(st.sampled_from(sorted(COMMANDS)))
    cmd: dict[str, Any] = {"type": name, "id": draw(st.text(max_size=8) | st.integers())}
    for field in _wire_fields(name) + draw(st.lists(st.sampled_from(["extra", "Type", "ID"]), max_size=2)):
        if draw(st.booleans()):
            cmd[field] = draw(json_values)
    return cmd


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cmd=commands())
def test_each_command_is_validated_once_then_handled_once(cmd: dict[str, Any]) -> None:
    probe = Probe()
    handler = _bound(probe)[cmd["type"]]
    spec = SPECS[cmd["type"]]
    sent = json.loads(json.dumps(cmd))
    try:
        result = asyncio.run(handler(sent))
    except CommandError as exc:
        assert spec.fields, "a command without fields is never refused"
        assert exc.command == cmd["type"] and exc.message
        assert probe.calls == []
        return
    assert result == {"ok": cmd["type"]}
    ((name, args),) = probe.calls
    assert name == cmd["type"]
    if not spec.fields:
        assert args == ()
    elif spec.raw:
        assert args == (sent,)
    else:
        model = args[0]
        assert type(model) is COMMANDS[name]
        assert model.id == cmd["id"]
        if spec.sent:
            assert args[1] is sent
        else:
            assert len(args) == 1


class _Out:
    def __init__(self) -> None:
        self.records: list[tuple[str, Any, bool]] = []

    def respond(self, command: str, req_id: Any = None, data: Any = None, *, has_data: bool = True) -> None:
        self.records.append((command, req_id, True))

    def error(self, command: str, req_id: Any, message: str, **_extra: Any) -> None:
        assert isinstance(message, str) and message
        self.records.append((command, req_id, False))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(commands(), min_size=1, max_size=25))
def test_the_server_answers_every_line_once_in_both_lanes(batch: list[dict[str, Any]]) -> None:
    """Through ``RpcServer.accept`` with the table's lanes: one answer per line (none for UI responses)."""
    for i, cmd in enumerate(batch):
        cmd["id"] = f"c{i}"

    async def scenario() -> list[tuple[str, Any, bool]]:
        out = _Out()
        bound = _bound(Probe())
        concurrent = frozenset(n for n, s in SPECS.items() if s.lane == "concurrent")
        # extension_ui_response is never answered (semantics §1): its probe says so as the real one does
        from atomic_host.frontends.rpc.server import NO_RESPONSE

        real_ui = bound["extension_ui_response"]

        async def ui(cmd: dict[str, Any]) -> Any:
            await real_ui(cmd)
            return NO_RESPONSE

        bound["extension_ui_response"] = ui
        server = RpcServer(out, bound, on_eof=lambda: asyncio.sleep(0), concurrent=concurrent)  # type: ignore[arg-type]
        lane = asyncio.create_task(server._ordinary_lane())
        for line in lines:
            server.accept(line.encode())
        server.ordinary.put_nowait(None)
        await asyncio.wait_for(lane, 10)
        if server.tasks:
            await asyncio.wait(server.tasks, timeout=10)
        return out.records

    # json.dumps writes an infinite float as `Infinity`: not JSON, so that line is a parse error (no id)
    lines = [json.dumps(cmd) for cmd in batch]
    records = asyncio.run(scenario())
    answered = sorted("parse" if req_id is None else req_id for _, req_id, _ in records)
    expected = sorted(
        cmd["id"] if _strict(line) else "parse"
        for cmd, line in zip(batch, lines, strict=True)
        if cmd["type"] != "extension_ui_response" or not _valid(cmd) or not _strict(line)
    )
    assert answered == expected
    for command_type, req_id, _ in records:
        assert command_type == ("parse" if req_id is None else batch[int(req_id[1:])]["type"])


def _strict(line: str) -> bool:
    try:
        loads_strict(line)
    except ValueError:
        return False
    return True


def _valid(cmd: dict[str, Any]) -> bool:
    from atomic_host.core.protocol.validate import parse_command

    try:
        parse_command(cmd)
    except CommandError:
        return False
    return True
