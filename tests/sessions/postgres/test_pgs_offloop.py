"""A session write on a cut link never blocks the event loop (issue 26, slow): appends, clone, fork.

Host A runs in a network namespace on the ``postgres`` store. Its link to the server is cut while
a bash tool runs; ``abort`` then ends the run, whose tool result cannot reach the server until
the connection gives up (``tcp_user_timeout``, ~10 s). Before write-behind the append ran on the
event loop: the loop stood still for those 10 s and ``abort`` answered after them. Now:

- ``abort`` answers at once, and so does every control command sent meanwhile (a probe measures
  the longest answer: the loop's stall as a client sees it);
- the write's failure still reaches the client: the next prompt's run ends with
  ``Could not save the session: …`` once the write has failed, and the entries it could not
  store are taken back, in memory as in the database;
- once the link is back the session goes on, and what the host shows is what is stored.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from pg_helpers import Postgres
from pgs_helpers import Netns, chat, cut_link_setup, entries, host_in

from atomic_host.client import RpcClient

pytestmark = pytest.mark.slow


class Probe:
    """Sends a control command (``abort_retry``: a no-op, answered on the loop) every 50 ms and
    keeps the longest wait for an answer."""

    def __init__(self, client: RpcClient) -> None:
        self.client = client
        self.longest = 0.0
        self.sent = 0
        self.task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while True:
            start = time.monotonic()
            response = await self.client.request({"type": "abort_retry"}, timeout=60)
            assert response["success"], response
            self.longest = max(self.longest, time.monotonic() - start)
            self.sent += 1
            await asyncio.sleep(0.05)

    async def stop(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


def stored_roles(url: str, session_id: str) -> list[str]:
    return [e["message"]["role"] for e in entries(url, session_id) if e["type"] == "message"]


async def shown_roles(client: RpcClient) -> list[str]:
    return [m["role"] for m in (await client.call("get_messages"))["messages"]]


async def test_abort_answers_at_once_while_a_write_waits_on_a_cut_link(
    netns: Netns, wide_server: Postgres, tmp_path: Path
) -> None:
    url, url_a, work = cut_link_setup(netns, wide_server, tmp_path)
    async with host_in(netns, url_a, tmp_path / "a", work) as a:
        await chat(a, "from A")
        session_id = (await a.client.get_state())["sessionId"]
        a.faux.tool_call("bash", {"command": "sleep 60"})
        start = len(a.client.events)
        await a.client.prompt("run a slow command")
        await a.client.wait_for_event("tool_execution_start", after=start, timeout=30)
        assert stored_roles(url, session_id) == ["user", "assistant", "user", "assistant"]

        netns.cut()
        try:
            probe = Probe(a.client)
            await asyncio.sleep(0.3)
            asked = time.monotonic()
            response = await a.client.request({"type": "abort"}, timeout=60)
            abort_s = time.monotonic() - asked
            assert response["success"], response
            # the tool result's write waits for the dead link; the abort does not
            assert abort_s < 2.0, f"abort answered after {abort_s:.1f} s"
            end = await a.client.wait_for_event("agent_end", after=start, timeout=5)
            assert end["messages"][-1]["role"] == "toolResult"

            # a prompt now: its user message queues behind the stuck write and fails with it
            before = len(a.client.events)
            await a.client.prompt("during the cut")
            failed = await a.client.wait_for_event("agent_end", after=before, timeout=40)
            failed_after = time.monotonic() - asked
            await probe.stop()
        finally:
            netns.restore()
        message = failed["messages"][-1]
        assert message["stopReason"] == "error" and "Could not save the session" in message["errorMessage"], message
        assert probe.sent > 20
        assert probe.longest < 1.0, f"the loop stood still for {probe.longest:.1f} s"

        # what could not be stored was taken back: memory and database agree
        assert stored_roles(url, session_id) == ["user", "assistant", "user", "assistant"]
        assert await shown_roles(a.client) == stored_roles(url, session_id)

        # the link is back: the session goes on (reconnected, the lock taken again)
        a.faux.push("back again")
        result = await a.client.prompt_and_wait("after the cut", timeout=60)
        assert result.ok, result.error
        assert stored_roles(url, session_id)[-2:] == ["user", "assistant"]
        assert await shown_roles(a.client) == stored_roles(url, session_id)
        texts: list[Any] = [e["message"].get("content") for e in entries(url, session_id) if e["type"] == "message"]
        assert "during the cut" not in str(texts)
    print(
        f"\ncut link: abort answered in {abort_s * 1000:.0f} ms; longest control answer {probe.longest * 1000:.0f} ms"
        f" ({probe.sent} probes); the queued prompt failed {failed_after:.1f} s after the abort"
    )


async def test_clone_and_fork_write_off_the_loop_on_a_cut_link(
    netns: Netns, wide_server: Postgres, tmp_path: Path
) -> None:
    """``clone``/``fork`` write a whole session (``Session.flush``: synchronous): made on the loop,
    a cut link stood the loop still until the link came back or the connection gave up."""
    url, url_a, work = cut_link_setup(netns, wide_server, tmp_path)
    async with host_in(netns, url_a, tmp_path / "a", work) as a:
        await chat(a, "first", "second")
        for command in ({"type": "clone"}, {"type": "fork", "entryId": await last_user_entry(a.client)}):
            netns.cut()
            try:
                probe = Probe(a.client)
                pending = asyncio.ensure_future(a.client.request(command, timeout=60))
                await asyncio.sleep(2.5)
                await probe.stop()
            finally:
                netns.restore()
            response = await pending  # the link is back in time: the write goes through
            assert response["success"], response
            # 2.5 s of probes every 50 ms: a loop standing still answers the first one only, after the cut
            assert probe.sent > 10, f"{command['type']}: {probe.sent} control answer(s) in 2.5 s of cut link"
            assert probe.longest < 1.0, f"{command['type']}: the loop stood still for {probe.longest:.1f} s"
            session_id = (await a.client.get_state())["sessionId"]
            assert stored_roles(url, session_id) == await shown_roles(a.client)


async def last_user_entry(client: RpcClient) -> str:
    messages = (await client.call("get_fork_messages"))["messages"]
    return str(messages[-1]["entryId"])
