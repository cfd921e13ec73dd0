"""The client's typed records and command methods are generated from the protocol's models and
declarations and committed current; importing the client is cheap and loads no host module and no
pydantic; the records take any JSON without surprises, at a cost linear in its size."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from suite_paths import ROOT

from atomic_host.client import RpcClient, RunResult, parse_event, types
from atomic_host.core.protocol.commands import COMMANDS
from atomic_host.core.protocol.events import EVENTS
from atomic_host.core.protocol.generate import client_sources


def test_the_generated_modules_are_current() -> None:
    for path, text in client_sources().items():
        assert (ROOT / path).read_text(encoding="utf-8") == text, (
            f"{path} is stale: run python -m atomic_host.core.protocol.generate"
        )


def test_every_event_and_command_field_has_its_typed_counterpart() -> None:
    for kind, model in EVENTS.items():
        cls = types.EVENT_TYPES[kind]
        assert type(parse_event({"type": kind})) is cls and cls.__name__ == model.__name__
        assert sorted(cls.wire_keys().values()) == sorted(f.alias or n for n, f in model.model_fields.items())
    for kind, model in COMMANDS.items():
        if kind == "extension_ui_response":
            continue
        params = RpcClient.__dict__.get(kind) or getattr(RpcClient, kind)
        names = set(params.__code__.co_varnames[: params.__code__.co_argcount])
        assert {n for n in model.model_fields if n not in ("type", "id")} <= names, kind


IMPORT_PROBE = """
import sys, time, asyncio, json
t0 = time.process_time()
import atomic_host.client
own = time.process_time() - t0
host = sorted(m for m in sys.modules if m.startswith("atomic_host") and not m.startswith("atomic_host.client")
              and m not in ("atomic_host", "atomic_host.contract", "atomic_host.contract.lazy_exports"))
print(json.dumps({"own_ms": own * 1000, "host": host, "pydantic": "pydantic" in sys.modules}))
"""
TOTAL_PROBE = """
import time, json
t0 = time.process_time()
import atomic_host.client
print(json.dumps({"total_ms": (time.process_time() - t0) * 1000}))
"""


def _probe(code: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as installed: bytecode cached
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_importing_the_client_is_cheap_and_loads_no_host_module() -> None:
    _probe(IMPORT_PROBE)  # compile the bytecode once
    runs = [_probe(IMPORT_PROBE) for _ in range(3)]
    assert runs[0]["host"] == [] and runs[0]["pydantic"] is False
    own = min(r["own_ms"] for r in runs)
    # CPU time of the client's own modules (asyncio and json already imported, as any client has them)
    assert own < 15, f"importing atomic_host.client costs {own:.1f} ms of CPU beyond asyncio"
    total = min(_probe(TOTAL_PROBE)["total_ms"] for _ in range(3))
    print(f"import atomic_host.client: {own:.1f} ms own, {total:.1f} ms with asyncio (CPU)")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
EVENT_KINDS = st.sampled_from([*EVENTS, "no_such_event", ""])


@settings(max_examples=300, deadline=None)
@given(kind=EVENT_KINDS, body=st.dictionaries(st.sampled_from(["message", "usage", "assistantMessageEvent",
       "messages", "toolResults", "result", "partialResult", "model", "content", "args", "x"]), JSON, max_size=6))
def test_hostile_records_parse_as_dicts_and_fail_only_with_key_or_type_errors(kind: str, body: dict[str, Any]) -> None:
    record = {**body, "type": kind}
    event = parse_event(record)
    assert isinstance(event, types.WireObject) and event == record and json.loads(json.dumps(event)) == record
    for prop in type(event).wire_keys():
        try:
            value = getattr(event, prop)
        except (KeyError, TypeError, ValueError, AttributeError):
            continue  # a missing key or a record of the wrong shape: a clear error, never a crash
        if isinstance(value, types.WireObject):
            for sub in type(value).wire_keys():
                try:
                    getattr(value, sub)
                except (KeyError, TypeError, ValueError, AttributeError):
                    pass


def _run(turns: int) -> RunResult:
    usage = {"input": 10, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 12,
             "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.3}}
    message = {"role": "assistant", "content": [{"type": "text", "text": "t"}], "api": "a", "provider": "p",
               "model": "m", "usage": usage, "stopReason": "stop", "timestamp": 1}
    events = [parse_event({"type": "message_end", "message": message}) for _ in range(turns)]
    return RunResult(events, disposition="started")


def test_a_run_result_costs_linear_time_in_its_events() -> None:
    def cost(turns: int) -> float:
        result = _run(turns)

        def once() -> float:
            t0 = time.process_time()
            assert result.usage.input == 10 * turns and result.num_turns == turns and result.text == "t"
            return time.process_time() - t0

        # the least of five: one garbage collection or a preempted slice on a loaded machine is not the code's cost
        return min(once() for _ in range(5))

    base, x10, x100 = cost(200), cost(2000), cost(20000)
    assert x10 < base * 30 and x100 < base * 300, (base, x10, x100)
    assert abs(_run(3).total_cost_usd - 0.9) < 1e-9
