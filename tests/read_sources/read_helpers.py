"""Run tool calls through a host with a scripted model; return what the model got back."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from atomic_host.testing import Host


async def model_sees(host: Host, *calls: tuple[str, dict[str, Any]], timeout: float = 240) -> list[dict[str, Any]]:
    """Script one assistant turn making ``calls`` (name, arguments), then a closing text; return each
    call's tool result as the provider received it on the next request: ``{"text", "images", "isError"}``."""
    blocks = [
        {"type": "toolCall", "id": f"call{i}", "name": name, "arguments": args} for i, (name, args) in enumerate(calls)
    ]
    host.faux.push({"content": blocks}, "done")
    await host.client.prompt_and_wait("go", timeout=timeout)
    messages = host.faux_calls()[-1]["context"]["messages"]
    results = {m["toolCallId"]: m for m in messages if m.get("role") == "toolResult"}
    out = []
    for i in range(len(calls)):
        m = results[f"call{i}"]
        out.append(
            {
                "text": "".join(b.get("text", "") for b in m["content"] if b["type"] == "text"),
                "images": [b for b in m["content"] if b["type"] == "image"],
                "isError": m.get("isError", False),
            }
        )
    return out


async def read(host: Host, *paths: str, **kw: Any) -> list[dict[str, Any]]:
    """``model_sees`` for one ``read`` call per path."""
    return await model_sees(host, *[("read", {"path": p, **kw}) for p in paths])


async def abort_while_reading(
    host: Host, path: str, ready: Callable[[], bool] = lambda: True
) -> tuple[dict[str, Any], float]:
    """Start a ``read`` of ``path``, abort once it runs (and ``ready()``): ``(tool_execution_end, seconds
    from the abort to it)``; waits for the run to settle."""
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": path}}
    host.faux.push({"content": [call]}, "ok")
    first = len(host.client.events)
    await host.client.prompt("go")
    await host.client.wait_for_event("tool_execution_start", after=first, timeout=30)
    await asyncio.sleep(0.3)
    for _ in range(100):
        if ready():
            break
        await asyncio.sleep(0.05)
    started = time.monotonic()
    await host.client.call("abort")
    end = await host.client.wait_for_event("tool_execution_end", after=first, timeout=10)
    answered = time.monotonic() - started
    await host.client.wait_for_idle(after=first, timeout=30)
    return end, answered
