"""Hostile input for what this part added: the command line's extension flags, shortcut keys, the
event bus, and the new commands (``reload``, ``get_shortcuts``, ``invoke_shortcut``) over RPC."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from extapi_helpers import errors, plugin
from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_host.frontends.cli import build_parser, extension_flags, parse_options
from atomic_host.plugins.bus import EventBus
from atomic_host.plugins.registry import Shortcut, ShortcutRegistry
from atomic_host.testing import start_host

PARSER = build_parser()
KNOWN = ["--mode", "rpc", "--no-session", "--model", "faux/faux-1", "-e", "x.py", "--watch"]
words = st.one_of(
    st.sampled_from([*KNOWN, "--", "-", "--=", "--a=b=c", "--plan", "-x", "value", ""]),
    st.text(min_size=0, max_size=30),
    st.text(min_size=1, max_size=20).map(lambda t: "--" + t),
)


@given(st.lists(words, max_size=40))
@settings(max_examples=300, deadline=None)
def test_extension_flags_never_raise_and_keep_every_host_option(argv: list[str]) -> None:
    rest, flags = extension_flags(argv, PARSER)
    assert all(isinstance(k, str) and k and isinstance(v, (str, bool)) for k, v in flags.items())
    # host options are never taken: the known ones stay, in order, for argparse
    kept = [a for a in argv if a in ("--mode", "--no-session", "--model", "--watch", "-e")]
    assert [a for a in rest if a in ("--mode", "--no-session", "--model", "--watch", "-e")] == kept[: len(kept)]
    assert not any(name in ("mode", "model", "watch", "no-session") for name in flags)


NAMES = st.from_regex(r"[a-z][a-z0-9-]{0,15}", fullmatch=True)
VALUES = st.from_regex(r"[a-z0-9]{1,8}", fullmatch=True)


@given(st.dictionaries(NAMES, VALUES, max_size=8))
@settings(max_examples=100, deadline=None)
def test_extension_flags_round_trip(given_flags: dict[str, str]) -> None:
    options = PARSER._option_string_actions
    given_flags = {k: v for k, v in given_flags.items() if not any(o.startswith("--" + k) for o in options)}
    argv = ["--mode", "rpc"]
    for name, value in given_flags.items():
        argv += [f"--{name}", value]
    parsed, _ = parse_options(argv, PARSER)
    assert parsed.mode == "rpc" and parsed.extension_flags == given_flags


def _cpu(fn: Any) -> float:
    start = time.process_time()
    for _ in range(5):
        fn()
    return time.process_time() - start


def test_extension_flags_cost_grows_linearly() -> None:
    base = ["--mode", "rpc", "--plan", "--level", "3", "--x=y"]
    t1, t10, t100 = (_cpu(lambda n=n: extension_flags(base * n, PARSER)) for n in (10, 100, 1000))
    assert t10 < 30 * max(t1, 1e-3) and t100 < 300 * max(t1, 1e-3), (t1, t10, t100)


@given(st.text(max_size=200))
@settings(max_examples=300, deadline=None)
def test_shortcut_keys_normalise_and_never_raise_but_for_empty(key: str) -> None:
    registry = ShortcutRegistry()
    normal = registry.normal(key)
    if not normal.replace("+", ""):
        return
    registry.add(Shortcut(key, lambda api: None, None, "p", "p"))
    assert registry.get(key) is not None and registry.get(key.casefold()) is not None
    if key.isascii():
        assert registry.get(key.upper()) is not None
    assert registry.listing() == [{"key": normal}]


class _Plugins:
    records: dict[str, Any] = {}

    def __init__(self) -> None:
        self.reports: list[tuple[str, str, str]] = []

    def roots(self, record: Any) -> list[Path]:
        return []

    def on_error(self, path: str, event: str, error: str) -> None:
        self.reports.append((path, event, error))


@given(st.lists(st.tuples(st.text(min_size=1, max_size=10), st.booleans()), max_size=30), st.text(min_size=1))
@settings(max_examples=200, deadline=None)
def test_the_bus_calls_each_listener_of_a_channel_once_and_contains_faults(listeners: list[Any], channel: str) -> None:
    plugins = _Plugins()
    bus = EventBus(plugins)  # type: ignore[arg-type]
    called: list[int] = []

    def make(i: int, raises: bool) -> Any:
        def listener(data: Any) -> None:
            called.append(i)
            if raises:
                raise SystemExit(i)

        return listener

    for i, (name, raises) in enumerate(listeners):
        bus.on(name, make(i, raises), "p")
    bus.emit(channel, None)
    expected = [i for i, (name, _) in enumerate(listeners) if name == channel]
    assert called == expected
    assert len(plugins.reports) == sum(1 for name, raises in listeners if name == channel and raises)
    assert all(event == f"events:{channel}" and "sys.exit" in why for _, event, why in plugins.reports)


def test_the_bus_costs_grow_linearly_with_listeners() -> None:
    def emitting(n: int) -> Any:
        bus = EventBus(_Plugins())  # type: ignore[arg-type]
        for _ in range(n):
            bus.on("c", lambda data: None, "p")
        return lambda: [bus.emit("c", 1) for _ in range(20)]

    t1, t10, t100 = (_cpu(emitting(n)) for n in (10, 100, 1000))
    assert t10 < 30 * max(t1, 1e-3) and t100 < 300 * max(t1, 1e-3), (t1, t10, t100)


async def test_hostile_shortcut_and_reload_commands_get_answers_and_lose_nothing(tmp_path: Path) -> None:
    ext = plugin(
        tmp_path / "keys.py",
        """
        from atomic_host import hookimpl

        @hookimpl
        def register_commands(register, api):  # run again by reload (host_start is not)
            api.register_shortcut("ctrl+k", lambda api: None)
        """,
    )
    async with start_host("-e", str(ext), base=tmp_path) as host:
        c = host.client
        hostile: list[Any] = [123, None, ["ctrl+k"], {"a": 1}, "x" * 1_000_000, "ctrl+k\x00", "\udcff"[:0] + "é" * 10]
        for key in hostile:
            response = await c.request({"type": "invoke_shortcut", "key": key})
            assert response["success"] is False and response["error"]
        missing = await c.request({"type": "invoke_shortcut"})
        assert missing["success"] is False
        extra = await c.request({"type": "reload", "junk": [[[[1]]]]})
        assert extra["success"] is True  # extra fields are ignored, as for every command without fields
        assert (await c.call("get_shortcuts"))["shortcuts"] == [{"key": "ctrl+k"}]
        assert await c.call("invoke_shortcut", key="CTRL+K") is None
        assert errors(c.events) == []
        host.assert_protocol_lines()
