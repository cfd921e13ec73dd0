"""The RpcClient notices a host that dies: every waiter (``stream``, ``prompt_and_wait``,
``wait_for_idle``, a pending request) wakes at once with :class:`HostExited`, which carries the exit
status and the end of the host's stderr; calls made afterwards fail the same way at once, and a
timeout says what was not answered."""

from __future__ import annotations

import asyncio
import os
import signal
import tempfile
import time
from pathlib import Path

import pytest

from atomic_host.client import ClientError, ClientTimeout, HostExited
from atomic_host.testing import start_host

EXT = str(Path(__file__).with_name("client_die_ext.py"))
SLOW_REPLY = {"content": "word " * 400, "chunkDelayMs": 50}  # ~20 s of streaming


async def test_stream_wakes_at_once_when_the_host_is_killed() -> None:
    async with start_host() as host:
        host.faux.push(SLOW_REPLY)
        seen: list[str] = []
        with pytest.raises(HostExited) as caught:
            async for event in host.client.stream("hello", timeout=20):
                seen.append(event["type"])
                if event["type"] == "message_update" and "killed_at" not in locals():
                    os.kill(host.client.proc.pid, signal.SIGKILL)
                    killed_at = time.monotonic()
        waited = time.monotonic() - killed_at
    assert waited < 2, f"the loop noticed the death after {waited:.1f}s"
    exc = caught.value
    assert isinstance(exc, ClientError) and exc.status == -signal.SIGKILL
    assert "SIGKILL" in str(exc) and "status -9" in str(exc)
    assert "agent_settled" not in seen


async def test_every_waiter_wakes_with_the_status_and_stderr_tail() -> None:
    async with start_host("-e", EXT) as host:
        c = host.client
        host.faux.push(SLOW_REPLY)
        start = len(c.events)
        await c.prompt("a long reply")
        await c.wait_for_event("message_update", after=start)
        bash = asyncio.ensure_future(c.bash("sleep 30", timeout=20))  # a pending request
        idle = asyncio.ensure_future(c.wait_for_idle(after=start, timeout=20))
        event = asyncio.ensure_future(c.wait_for_event("no_such_event", timeout=20))
        await asyncio.sleep(0.3)
        # an extension command runs during the reply: the host writes one stderr line and exits 7
        died = asyncio.ensure_future(c.call("prompt", message="/die 7", timeout=20))
        t0 = time.monotonic()
        results = await asyncio.gather(bash, idle, event, died, return_exceptions=True)
        waited = time.monotonic() - t0
    assert waited < 2, f"waiters woke after {waited:.1f}s"
    for result in results:
        assert isinstance(result, HostExited), result
        assert result.status == 7 and "exited with status 7" in str(result)
        assert "client-die-marker: 7" in result.stderr_tail and "client-die-marker: 7" in str(result)
    assert c.exit_code == 7
    # afterwards every call fails at once, the same way
    t0 = time.monotonic()
    with pytest.raises(HostExited, match="status 7"):
        await c.get_state()
    with pytest.raises(HostExited):
        await c.prompt_and_wait("again", timeout=20)
    assert time.monotonic() - t0 < 1


async def test_the_stderr_tail_is_read_back_from_a_log_file() -> None:
    with tempfile.TemporaryFile() as err:
        async with start_host("-e", EXT, stderr=err.fileno()) as host:
            with pytest.raises(HostExited) as caught:
                await host.client.prompt_and_wait("/die 5", timeout=20)
    assert caught.value.status == 5 and "client-die-marker: 5" in caught.value.stderr_tail


async def test_a_timeout_says_what_was_not_answered() -> None:
    async with start_host() as host:
        c = host.client
        with pytest.raises(ClientTimeout, match=r"no event matching 'no_such_event' within 0\.2s"):
            await c.wait_for_event("no_such_event", timeout=0.2)
        host.faux.push(SLOW_REPLY)
        with pytest.raises(ClientTimeout, match=r"did not settle within 0\.5s"):
            async for _ in c.stream("hello", timeout=0.5):
                pass
        await c.abort()
        with pytest.raises(TimeoutError, match=r"no response to 'bash' \(id 'c\d+'\) within 0\.3s"):
            await c.bash("sleep 5", timeout=0.3)
        assert (await c.get_state())["sessionId"]  # the host is fine, only slow to answer
