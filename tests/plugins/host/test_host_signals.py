"""Signals end ``atomic --mode rpc`` with 128 + the signal's number (semantics §1: SIGTERM 143, SIGHUP 129,
SIGINT 130), idle or while a run streams, and also when the kernel hands the signal to a thread
other than the event loop's while the loop sleeps in ``epoll_wait``. Against the real subprocess;
``test_host_framing.py`` has SIGTERM and SIGHUP while idle."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from atomic_host.testing import start_host

EXIT_CODES = {signal.SIGTERM: 143, signal.SIGHUP: 129, signal.SIGINT: 130}


async def test_sigint_while_idle_exits_130() -> None:
    async with start_host() as host:
        c = host.client
        await c.get_state()
        assert c.proc
        c.proc.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(c.proc.wait(), 10) == 130
        host.assert_protocol_lines()


@pytest.mark.parametrize("sig", list(EXIT_CODES), ids=lambda s: s.name)
async def test_a_signal_while_a_run_streams_exits_with_its_code(sig: signal.Signals) -> None:
    async with start_host() as host:
        c = host.client
        host.faux.push({"content": "a reply that takes its time", "delayMs": 30000})
        started = len(c.events)
        assert (await c.prompt("hello"))["disposition"] == "started"
        await c.wait_for_event("agent_start", after=started)
        assert c.proc
        c.proc.send_signal(sig)
        assert await asyncio.wait_for(c.proc.wait(), 10) == EXIT_CODES[sig]
        host.assert_protocol_lines()


SLEEPER = '''
"""Test extension: a thread that, once the trigger file exists, sends SIGTERM to itself (a signal
the kernel delivers to this thread, not to the event loop's)."""
import os, signal, threading, time
from pathlib import Path

TRIGGER = Path(__file__).with_suffix(".go")


def _sleeper() -> None:
    while not TRIGGER.exists():
        time.sleep(0.02)
    time.sleep(0.3)  # the loop is back in epoll_wait, with nothing to wake it
    signal.pthread_kill(threading.get_ident(), signal.SIGTERM)


threading.Thread(target=_sleeper, daemon=True).start()
'''


async def test_sigterm_delivered_to_another_thread_wakes_the_sleeping_loop(tmp_path: Path) -> None:
    ext = tmp_path / "sleeper.py"
    ext.write_text(SLEEPER)
    # loopStallMs 0: no watchdog, so no heartbeat timer either; the idle loop sleeps until woken.
    async with start_host("-e", str(ext), settings={"loopStallMs": 0}) as host:
        c = host.client
        await c.get_state()
        ext.with_suffix(".go").touch()
        assert c.proc
        assert await asyncio.wait_for(c.proc.wait(), 10) == 143
        host.assert_protocol_lines()
