"""Helpers shared by the sessions-through-RPC tests."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from atomic_host.client import RpcClient
from atomic_host.testing import Host

ISO_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
ENTRY_ID_RE = re.compile(r"^[0-9a-f]{8}$")

CANCEL_PLUGIN = """
from atomic_host import hookimpl
from atomic_host.contract.results import Cancel


@hookimpl
def session_before_switch(event, api):
    return Cancel()


@hookimpl
def session_before_fork(event, api):
    return Cancel()
"""


async def error_of(client: RpcClient, type_: str, **fields: Any) -> str:
    """Send a command that must fail; return its error text."""
    response = await client.request({"type": type_, **fields})
    assert response["success"] is False, response
    return str(response["error"])


async def unnumbered(client: RpcClient, command: dict[str, Any], timeout: float = 10) -> dict[str, Any]:
    """Send a command without an ``id`` and return the response (which then carries none)."""
    import asyncio

    seen = len(client.responses)
    await client.send_raw(json.dumps(command).encode() + b"\n")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        for response in client.responses[seen:]:
            if response.get("command") == command["type"] and "id" not in response:
                return response
        await asyncio.sleep(0.01)
    raise TimeoutError(f"no response to {command}")


async def chat(host: Host, *texts: str) -> None:
    """One prompt/reply turn per text (faux answers ``re: <text>``)."""
    for text in texts:
        host.faux.push(f"re: {text}")
        await host.client.prompt_and_wait(text)


async def state(client: RpcClient) -> dict[str, Any]:
    return await client.call("get_state")


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Records of a session file, skipping unparseable lines like a loader does."""
    records = []
    for line in Path(path).read_text().split("\n"):
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records


def mode(path: str | Path) -> int:
    return os.stat(path).st_mode & 0o777


def write_plugin(directory: Path, name: str, source: str) -> Path:
    path = directory / f"{name}.py"
    path.write_text(source)
    return path
