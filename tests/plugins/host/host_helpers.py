"""Helpers for the black-box host tests: plugin paths, stdout validation, polling."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from suite_paths import SAMPLE_PLUGINS

from atomic_host.testing import Host

PLUGINS = SAMPLE_PLUGINS


def plugin(name: str) -> str:
    """Absolute path of a test plugin file in ``tests/plugins``."""
    return str(PLUGINS / f"{name}.py")


def errors_of(host: Host) -> list[dict[str, Any]]:
    return [e for e in host.client.events if e.get("type") == "extension_error"]


async def poll(check: Callable[[], Any], timeout: float = 5.0, step: float = 0.05) -> Any:
    """Await until ``check()`` (sync or async) returns something truthy; return it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if loop.time() > deadline:
            raise TimeoutError("condition not met in time")
        await asyncio.sleep(step)
