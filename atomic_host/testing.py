"""Test helpers for atomic-host and for plugin authors.

Use them from pytest with ``pytest_plugins = ["atomic_host.testing"]`` in your conftest; you get
the ``host_factory`` fixture (an async context manager factory) and ``faux_script``::

    async def test_my_tool(host_factory):
        async with host_factory("--tools", "+my_tool") as host:
            host.faux.push({"content": [{"type": "toolCall", "name": "my_tool", "arguments": {}}]})
            host.faux.push("done")
            events = await host.client.prompt_and_wait("go")

Every host runs in its own temporary agent dir and working directory, with the scripted
``faux`` provider selected, so nothing touches the real ``~/.atomic``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from atomic_host.client import RpcClient, loads_deep


class FauxScript:
    """The JSONL script the faux provider reads: one reply per line, consumed in order."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.touch()

    def push(self, *steps: str | dict[str, Any]) -> None:
        """Queue replies: a text string, or a step dict (content, stopReason, errorMessage, delays)."""
        with self.path.open("a") as f:
            for step in steps:
                f.write(json.dumps(step) + "\n")

    def text(self, text: str) -> None:
        self.push(text)

    def tool_call(self, name: str, arguments: dict[str, Any], call_id: str | None = None) -> None:
        block: dict[str, Any] = {"type": "toolCall", "name": name, "arguments": arguments}
        if call_id:
            block["id"] = call_id
        self.push({"content": [block]})


@dataclass
class Host:
    client: RpcClient
    agent_dir: Path
    cwd: Path
    faux: FauxScript
    faux_log: Path

    def assert_protocol_lines(self) -> None:
        """Every stdout line the host printed is one valid protocol record (nothing else on stdout)."""
        assert_protocol_lines(self.client.lines)

    def faux_calls(self) -> list[dict[str, Any]]:
        """What the faux provider was called with (context and options), one dict per call."""
        if not self.faux_log.exists():
            return []
        return read_jsonl(self.faux_log)


def read_jsonl(path: Path | str) -> list[Any]:
    """The records of a JSON-lines file, split on LF only as the protocol frames them.

    ``str.splitlines`` would also split on U+0085, U+2028 and friends, which are valid raw
    inside JSON strings; blank lines are skipped.
    """
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").split("\n") if line.strip()]


async def read_json_when_written(path: Path | str, timeout: float = 10.0) -> Any:
    """The JSON value of the file at ``path`` once it exists (a plugin under test writes it while
    the host runs); AssertionError if it is not written within ``timeout`` seconds."""
    path = Path(path)
    for _ in range(int(timeout / 0.05)):
        if path.exists():
            return json.loads(path.read_text())
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path} was never written")


def assert_protocol_lines(lines: list[str]) -> None:
    """Validate each line against the protocol schema, and each event against the client's typed
    record of its type (:func:`check_typed`); raises on the first bad one."""
    # lazy: the protocol models (pydantic) and the client's records only for a test that validates lines
    from atomic_host.client.types import parse_event
    from atomic_host.core.protocol import validate_output_line

    assert lines, "host printed nothing"
    for line in lines:
        if len(line) < 100_000:
            validate_output_line(line)
            record = json.loads(line)
            if record.get("type") != "response":
                check_typed(parse_event(record))
            continue
        # get_tree of a long session nests deeper than pydantic's depth limit: validate it with
        # the tree cut at depth 100 (a test that cares checks the deep part itself).
        record = loads_deep(line)
        if record.get("command") == "get_tree" and record.get("success"):
            for root in record["data"]["tree"]:
                _prune(root, 100)
        validate_output_line(record)


def check_typed(record: Any, where: str = "") -> None:
    """Read every property of a client record (``atomic_host.client.types``), recursively, and check
    each value against the property's annotation: required keys present, scalars of the declared
    type, enums among their values, nested records parsed into their own classes. Raises
    AssertionError naming the path of the first mismatch."""
    # lazy (here and below): the client's records only for a test that checks them
    from atomic_host.client.types import WireObject

    cls = type(record)
    assert cls is not WireObject, f"{where or 'record'}: no typed class for {dict(record)!r:.200}"
    for prop in cls.wire_keys():
        path = f"{where}.{prop}" if where else f"{cls.__name__}.{prop}"
        try:
            value = getattr(record, prop)
        except KeyError as exc:
            raise AssertionError(f"{path}: required key {exc} missing") from None
        _conforms(value, _hints(cls, prop), path)


_HINTS: dict[tuple[type, str], Any] = {}


def _hints(cls: type, prop: str) -> Any:
    """The return annotation of a record's property, evaluated once per class and property."""
    hint = _HINTS.get((cls, prop))
    if hint is None:
        # lazy: the client's records only for a test that checks them
        import typing

        from atomic_host.client import types

        hint = _HINTS[cls, prop] = typing.get_type_hints(getattr(cls, prop).fget, vars(types))["return"]
    return hint


def _conforms(value: Any, hint: Any, path: str) -> None:
    # lazy: the client's records only for a test that checks them
    import types as pytypes
    import typing

    from atomic_host.client.types import WireObject

    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return
    if origin in (typing.Union, pytypes.UnionType):
        problems = []
        for member in args:
            try:
                _conforms(value, member, path)
                return
            except AssertionError as exc:
                problems.append(str(exc))
        raise AssertionError(f"{path}: {value!r:.100} matches none of {hint}: {problems}")
    if hint is type(None):
        assert value is None, f"{path}: expected null, got {value!r:.100}"
    elif origin is typing.Literal:
        assert value in args, f"{path}: {value!r:.100} is not one of {args}"
    elif origin is list:
        assert isinstance(value, list), f"{path}: expected a list, got {value!r:.100}"
        for i, item in enumerate(value):
            _conforms(item, args[0] if args else Any, f"{path}[{i}]")
    elif origin is dict or hint is dict:
        assert isinstance(value, dict), f"{path}: expected an object, got {value!r:.100}"
    elif isinstance(hint, type) and issubclass(hint, WireObject):
        assert isinstance(value, hint), f"{path}: expected {hint.__name__}, got {type(value).__name__}"
        check_typed(value, path)
    elif hint is float:
        assert isinstance(value, int | float) and not isinstance(value, bool), f"{path}: {value!r:.100} not a number"
    elif hint is int:
        assert isinstance(value, int) and not isinstance(value, bool), f"{path}: {value!r:.100} not an integer"
    else:
        assert isinstance(value, hint), f"{path}: expected {hint}, got {value!r:.100}"


def _prune(node: dict[str, Any], depth: int) -> None:
    for _ in range(depth):
        if len(node["children"]) != 1:
            for child in node["children"]:
                _prune(child, depth)
            return
        node = node["children"][0]
    node["children"] = []


def inherited_env() -> dict[str, str]:
    """This process's environment for a host under test: no API keys and no ``ATOMIC_*`` setting,
    but ``ATOMIC_PLAIN`` (which path the suite runs on, see .ci/run)."""
    return {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and (not k.startswith("ATOMIC_") or k == "ATOMIC_PLAIN")
    }


def host_env(agent_dir: Path, faux: Path, faux_log: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = inherited_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # let hosts reuse compiled bytecode: each start is faster
    env.update(ATOMIC_CODING_AGENT_DIR=str(agent_dir), ATOMIC_FAUX_SCRIPT=str(faux), ATOMIC_FAUX_LOG=str(faux_log))
    env.update(extra or {})
    return env



class FlakyWriter:
    """A session writer (``Session(..., writer=...)``) whose next append fails with ``OSError``
    when ``fail_next`` is set: the session must unpublish that entry, as after a full disk."""

    def __init__(self) -> None:
        self.fail_next = False

    def write_all(self, header: dict[str, Any], entries: list[dict[str, Any]]) -> None:
        pass

    def append(self, entry: dict[str, Any]) -> None:
        if self.fail_next:
            self.fail_next = False
            raise OSError("disk full")

    def close(self) -> None:
        pass


def bash_deltas(host: Host, req_id: str, channel: str | None = None) -> list[dict[str, Any]]:
    """The ``bash_execution_update`` events of the ``bash`` command ``req_id`` (of one channel)."""
    return [
        e
        for e in host.client.events
        if e.get("type") == "bash_execution_update"
        and e.get("id") == req_id
        and (channel is None or e["channel"] == channel)
    ]


def bash_output(host: Host, req_id: str, channel: str | None = None) -> str:
    """Those events' deltas joined: what the command printed, as the client saw it stream."""
    return "".join(e["delta"] for e in bash_deltas(host, req_id, channel))


@asynccontextmanager
async def start_host(
    *args: str,
    base: Path | None = None,
    env: dict[str, str] | None = None,
    settings: dict[str, Any] | None = None,
    faux: bool = True,
    stderr: int | None = None,
    cwd: Path | None = None,
) -> AsyncIterator[Host]:
    """Start ``atomic --mode rpc`` in a sandbox; closes stdin and waits for exit at the end."""
    with tempfile.TemporaryDirectory(prefix="atomic-test-") as tmp:
        root = base or Path(tmp)
        agent_dir = root / "agent"
        work = cwd or root / "work"
        agent_dir.mkdir(parents=True, exist_ok=True)
        work.mkdir(parents=True, exist_ok=True)
        if settings is not None:
            (agent_dir / "settings.json").write_text(json.dumps(settings))
        script = FauxScript(root / "faux.jsonl")
        log = root / "faux-log.jsonl"
        argv = [*args]
        if faux and "--provider" not in argv and "--model" not in argv:
            argv = ["--provider", "faux", *argv]
        client = RpcClient(
            argv,
            command=[sys.executable, "-m", "atomic_host", "--mode", "rpc"],
            cwd=str(work),
            env=host_env(agent_dir, script.path, log, env),
            stderr=stderr,
        )
        await client.start()
        try:
            yield Host(client, agent_dir, work, script, log)
        finally:
            await client.close()


try:
    import pytest

    @pytest.fixture
    def host_factory() -> Callable[..., Any]:
        """``async with host_factory(*cli_args, settings=..., env=...) as host:``"""
        return start_host

except ImportError:  # pytest is only needed for the fixture
    pass
