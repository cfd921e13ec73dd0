"""The ACP connection's transport: JSON-RPC messages over the host's own stdio framing.

The SDK's ``Connection`` takes a message-level transport, so ACP mode reads stdin with the same
unlimited line reader as ``--mode rpc`` (regular files and ``/dev/null`` included) and writes
through the :class:`Output` that owns the protocol fd (one whole line per message, known
credentials masked).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from atomic_host.frontends.rpc.io import Output

Watcher = tuple[Callable[[dict[str, Any]], bool], Callable[[], None]]


class HostTransport:
    """``acp._transport.Transport`` over the host's line queue and protocol :class:`Output`."""

    def __init__(self, out: Output, lines: asyncio.Queue[bytes | None]) -> None:
        self.out = out
        self.lines = lines
        self.watchers: list[Watcher] = []

    def after_sent(self, matches: Callable[[dict[str, Any]], bool], then: Callable[[], None]) -> None:
        """Run ``then`` once, right after the first sent message that ``matches`` (e.g. the response
        that tells the client a new session id, before updates for that session may follow)."""
        self.watchers.append((matches, then))

    async def send(self, message: dict[str, Any]) -> None:
        self.out.send(message)
        for watcher in list(self.watchers):
            matches, then = watcher
            if matches(message):
                self.watchers.remove(watcher)
                then()

    async def receive(self) -> dict[str, Any] | None:
        while (line := await self.lines.get()) is not None:
            if not line.strip():
                continue
            try:
                message = json.loads(line.decode("utf-8-sig"))  # UTF-8 only, as the RPC server decodes
            except (ValueError, UnicodeDecodeError, RecursionError) as exc:
                self.out.send(
                    {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": f"Parse error: {exc}"}}
                )
                continue
            if not isinstance(message, dict):
                self.out.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid request"}})
                continue
            return message
        return None

    async def close(self) -> None:
        return None
