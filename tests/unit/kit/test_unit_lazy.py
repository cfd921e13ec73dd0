"""kit._fast.lazy.loaded: a deferred import runs in a thread and the loop keeps running meanwhile, also
while another thread (the RPC warm-up) is midway through importing the same module."""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path

import pytest

from atomic_host.kit._fast.lazy import is_loaded, loaded

SLOW_MODULE = """
import threading, time
IMPORTED_BY = threading.current_thread().name
time.sleep({seconds})
DONE = True
"""


@pytest.fixture
def slow_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    def make(name: str, seconds: float = 0.4) -> str:
        (tmp_path / f"{name}.py").write_text(SLOW_MODULE.format(seconds=seconds))
        return name

    monkeypatch.syspath_prepend(str(tmp_path))
    yield make
    for name in [n for n in sys.modules if n.startswith("lazy_probe_")]:
        del sys.modules[name]


async def _ticks_while(awaitable):
    """``(result, ticks)``: how many times a 10 ms ticker ran on the loop while ``awaitable`` ran."""
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.create_task(tick())
    try:
        result = await awaitable
    finally:
        ticker.cancel()
    return result, ticks


async def test_imports_in_a_thread_while_the_loop_runs(slow_module) -> None:
    name = slow_module("lazy_probe_a")
    module, ticks = await _ticks_while(loaded(name))
    assert module.DONE and threading.current_thread().name != module.IMPORTED_BY
    assert ticks >= 5  # 0.4 s of import: the loop kept running


async def test_waits_off_the_loop_for_an_import_another_thread_has_begun(slow_module) -> None:
    name = slow_module("lazy_probe_b")
    warm_up = threading.Thread(target=__import__, args=(name,))
    warm_up.start()
    while name not in sys.modules:  # the other thread is inside the module's import now
        await asyncio.sleep(0.005)
    assert not is_loaded(name)
    module, ticks = await _ticks_while(loaded(name))
    warm_up.join()
    assert module.DONE and warm_up.name == module.IMPORTED_BY  # imported once, by that thread
    assert ticks >= 3


async def test_a_loaded_module_needs_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_thread(*_args, **_kwargs):
        raise AssertionError("a loaded module went to a thread")

    monkeypatch.setattr(asyncio, "to_thread", no_thread)
    assert await loaded("json", "json.decoder") is sys.modules["json.decoder"]


async def test_an_import_error_reaches_the_caller() -> None:
    with pytest.raises(ModuleNotFoundError):
        await loaded("lazy_probe_no_such_module")
