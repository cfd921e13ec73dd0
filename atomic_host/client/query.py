"""``query()``: one prompt against a fresh host, as an ``async for`` of typed events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from atomic_host.client.options import AtomicOptions
from atomic_host.client.rpc import RpcClient
from atomic_host.client.types import Event


async def query(prompt: str, options: AtomicOptions | None = None, **fields: Any) -> AsyncIterator[Event]:
    """Start a host with ``options``, stream the run of ``prompt`` (see :meth:`RpcClient.stream`)
    and stop the host: claude-agent-sdk's ``query()``. Leaving the loop early aborts the run and
    stops the host."""
    async with RpcClient(options or AtomicOptions()) as client:
        async for event in client.stream(prompt, **fields):
            yield event
