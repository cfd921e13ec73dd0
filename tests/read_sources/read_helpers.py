"""Run tool calls through a host with a scripted model; return what the model got back."""

from __future__ import annotations

from typing import Any

from atomic_host.testing import Host


async def model_sees(host: Host, *calls: tuple[str, dict[str, Any]], timeout: float = 90) -> list[dict[str, Any]]:
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
