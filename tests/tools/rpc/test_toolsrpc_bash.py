"""Direct ``bash`` / ``user_bash`` / ``abort_bash`` through the real ``atomic --mode rpc`` host."""

from __future__ import annotations

import asyncio
import os
import re
import stat
import time
from pathlib import Path
from typing import Any

from atomic_host.testing import Host, bash_deltas, bash_output


async def bash(host: Host, command: str, req_id: str, **extra: Any) -> dict[str, Any]:
    response = await host.client.request({"type": "bash", "command": command, "id": req_id, **extra})
    assert response["success"], response
    assert response["id"] == req_id
    return response["data"]


async def test_deltas_channels_and_result(rpc_host: Any) -> None:
    async with rpc_host() as host:
        cmd = "for i in 1 2 3; do echo out$i; echo err$i >&2; sleep 0.05; done; exit 3"
        data = await bash(host, cmd, "req-1")
        assert data == {
            "output": "out1\nerr1\nout2\nerr2\nout3\nerr3\n",
            "exitCode": 3,
            "cancelled": False,
            "truncated": False,
        }
        assert bash_output(host, "req-1", "stdout") == "out1\nout2\nout3\n"
        assert bash_output(host, "req-1", "stderr") == "err1\nerr2\nerr3\n"
        # Arrival order across channels is kept (the command sleeps between pairs).
        assert bash_output(host, "req-1") == data["output"]
        assert {e["channel"] for e in bash_deltas(host, "req-1")} == {"stdout", "stderr"}
        # ANSI escapes and \r are stripped from deltas and output alike.
        data = await bash(host, r"printf '\033[31mred\033[0m\r\n'", "req-2")
        assert data["output"] == "red\n" and bash_output(host, "req-2") == "red\n"
        # user_bash is the same command under another name.
        response = await host.client.request({"type": "user_bash", "command": "echo via user_bash", "id": "u1"})
        assert response["command"] == "user_bash" and response["success"]
        assert response["data"]["output"] == "via user_bash\n"
        assert bash_output(host, "u1") == "via user_bash\n"


async def test_concurrent_requests_never_mix(rpc_host: Any) -> None:
    async with rpc_host() as host:
        script = "for i in $(seq 1 40); do echo {tag}-$i; sleep 0.005; done"
        a, b = await asyncio.gather(bash(host, script.format(tag="A"), "ra"), bash(host, script.format(tag="B"), "rb"))
        assert a["output"] == "".join(f"A-{i}\n" for i in range(1, 41))
        assert b["output"] == "".join(f"B-{i}\n" for i in range(1, 41))
        assert bash_output(host, "ra") == a["output"] and bash_output(host, "rb") == b["output"]
        # They really ran at the same time: their deltas interleave on the wire.
        order = [e["id"] for e in host.client.events if e.get("type") == "bash_execution_update"]
        first_b = order.index("rb")
        assert "ra" in order[first_b:]


async def wait_running(host: Host, req_id: str) -> None:
    await host.client.wait_for_event(lambda e: e.get("type") == "bash_execution_update" and e.get("id") == req_id)


async def test_abort_bash_by_id_and_all(rpc_host: Any) -> None:
    async with rpc_host() as host:
        c = host.client
        long_a = asyncio.ensure_future(bash(host, "echo started; sleep 30", "la"))
        long_b = asyncio.ensure_future(bash(host, "echo started; sleep 1; echo finished", "lb"))
        await wait_running(host, "la")
        await wait_running(host, "lb")
        ack = await c.request({"type": "abort_bash", "requestId": "la", "id": "cancel-1"})
        assert ack == {"id": "cancel-1", "type": "response", "command": "abort_bash", "success": True}
        a = await asyncio.wait_for(long_a, 5)
        assert a["cancelled"] is True and "exitCode" not in a and a["output"] == "started\n"
        b = await asyncio.wait_for(long_b, 5)  # untouched by the targeted abort
        assert b == {"output": "started\nfinished\n", "exitCode": 0, "cancelled": False, "truncated": False}
        # Unknown request id: acknowledged, cancels nothing.
        await c.abort_bash("no-such-request")
        # Without requestId: everything running is cancelled.
        runs = [asyncio.ensure_future(bash(host, "echo go; sleep 30", f"all-{i}")) for i in range(3)]
        for i in range(3):
            await wait_running(host, f"all-{i}")
        started = time.monotonic()
        await c.abort_bash()
        results = await asyncio.wait_for(asyncio.gather(*runs), 5)
        assert time.monotonic() - started < 3
        assert all(r["cancelled"] and "exitCode" not in r for r in results)
        messages = (await c.get_messages()).messages
        cancelled = [m for m in messages if m["role"] == "bashExecution" and m["cancelled"]]
        assert len(cancelled) == 4 and all("exitCode" not in m or m["exitCode"] is None for m in cancelled)


async def test_full_output_file_in_private_temp_tree(rpc_host: Any, tmp_root: Path) -> None:
    async with rpc_host() as host:
        session_id = (await host.client.get_state())["sessionId"]
        cmd = "for i in $(seq 1 20000); do echo line-$i; done"
        data = await bash(host, cmd, "big")
        full = "".join(f"line-{i}\n" for i in range(1, 20001))
        assert bash_output(host, "big") == full  # every byte streamed
        assert data["truncated"] is True and data["exitCode"] == 0
        # Tail-truncated to the last 3000 lines (whole lines, joined without the final newline).
        assert data["output"] == "\n".join(f"line-{i}" for i in range(17001, 20001))
        path = Path(data["fullOutputPath"])
        session_dir = tmp_root / f"atomic-{os.getuid()}" / session_id
        assert path.parent == session_dir
        assert re.fullmatch(r"atomic-bash-[0-9a-f]{16}\.log", path.name)
        assert path.read_text() == full
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(session_dir.stat().st_mode) == 0o700
        assert stat.S_IMODE(session_dir.parent.stat().st_mode) == 0o700
        # Small outputs get no file and no path.
        small = await bash(host, "echo small", "small")
        assert "fullOutputPath" not in small or small["fullOutputPath"] is None
        message = ((await host.client.get_messages()).messages)[0]
        assert message["role"] == "bashExecution" and message["fullOutputPath"] == str(path)


async def test_symlinked_session_temp_dir_is_refused(rpc_host: Any, tmp_root: Path, tmp_path: Path) -> None:
    async with rpc_host() as host:
        session_id = (await host.client.get_state())["sessionId"]
        root = tmp_root / f"atomic-{os.getuid()}"
        root.mkdir(mode=0o700)
        elsewhere = tmp_path / "attacker"
        elsewhere.mkdir()
        (root / session_id).symlink_to(elsewhere)
        data = await bash(host, "head -c 200000 /dev/zero | tr '\\0' x; echo", "sym")
        assert data["truncated"] is True
        assert data.get("fullOutputPath") is None
        assert list(elsewhere.iterdir()) == []  # nothing written through the link
        message = ((await host.client.get_messages()).messages)[-1]
        assert message["fullOutputPath"] is None


def user_texts(call: dict[str, Any]) -> list[str]:
    texts = []
    for m in call["context"]["messages"]:
        if m["role"] != "user":
            continue
        content = m["content"]
        if isinstance(content, str):
            texts.append(content)
        else:
            texts.extend(b["text"] for b in content if b.get("type") == "text")
    return texts


async def test_bash_message_recorded_and_sent_with_next_prompt(rpc_host: Any) -> None:
    async with rpc_host() as host:
        c = host.client
        await bash(host, "echo hello; exit 2", "b1")
        await bash(host, "echo secret", "b2", excludeFromContext=True)
        await c.request({"type": "user_bash", "command": "printf ''", "id": "b3"})
        messages = (await c.get_messages()).messages
        assert [m["role"] for m in messages] == ["bashExecution"] * 3
        assert messages[0]["command"] == "echo hello; exit 2" and messages[0]["exitCode"] == 2
        assert messages[1]["excludeFromContext"] is True
        entries = (await c.get_entries())["entries"]
        assert [e["message"]["command"] for e in entries if e["type"] == "message"] == [
            "echo hello; exit 2",
            "echo secret",
            "printf ''",
        ]
        # No event is emitted for the BashExecutionMessage itself.
        assert not [e for e in c.events if e.get("type", "").startswith("message_")]
        host.faux.push("ok")
        await c.prompt_and_wait("next")
        texts = user_texts(host.faux_calls()[-1])
        assert texts == [
            "Ran `echo hello; exit 2`\n```\nhello\n\n```\n\nCommand exited with code 2",
            "Ran `printf ''`\n(no output)",
            "next",
        ]


async def test_bash_during_streaming_is_deferred_to_next_prompt(rpc_host: Any) -> None:
    async with rpc_host() as host:
        c = host.client
        host.faux.push({"content": [{"type": "text", "text": "slow reply"}], "delayMs": 800})
        start = len(c.events)
        await c.prompt("first")
        await c.wait_for_event("agent_start", after=start)
        await bash(host, "echo during", "d1")
        roles = [m["role"] for m in (await c.get_messages()).messages]
        assert "bashExecution" not in roles  # deferred while streaming
        await c.wait_for_idle(after=start)
        roles = [m["role"] for m in (await c.get_messages()).messages]
        assert "bashExecution" not in roles  # still deferred: flushed at the next prompt
        host.faux.push("second reply")
        await c.prompt_and_wait("second")
        messages = (await c.get_messages()).messages
        assert [m["role"] for m in messages] == ["user", "assistant", "bashExecution", "user", "assistant"]
        assert user_texts(host.faux_calls()[-1]) == [
            "first",
            "Ran `echo during`\n```\nduring\n\n```",
            "second",
        ]


async def test_request_survives_new_session(rpc_host: Any) -> None:
    async with rpc_host() as host:
        c = host.client
        host.faux.push("hi")
        await c.prompt_and_wait("persist this session")  # a session file exists once it has a reply
        original = (await c.get_state())["sessionId"]
        running = asyncio.ensure_future(bash(host, "echo before; sleep 0.8; echo after", "keep"))
        await wait_running(host, "keep")
        await c.new_session()
        replacement = (await c.get_state())["sessionId"]
        assert replacement != original
        data = await asyncio.wait_for(running, 5)
        assert data["output"] == "before\nafter\n" and bash_output(host, "keep") == "before\nafter\n"
        assert (await c.get_messages()).messages == []  # the replacement session stays clean
        await c.switch_session(original)
        messages = (await c.get_messages()).messages
        assert [m["role"] for m in messages] == ["user", "assistant", "bashExecution"]
        assert messages[-1]["command"] == "echo before; sleep 0.8; echo after"


async def test_closing_stdin_cancels_and_drains(rpc_host: Any) -> None:
    async with rpc_host() as host:
        c = host.client
        running = asyncio.ensure_future(bash(host, "echo pid=$$; sleep 60", "orphan"))
        await wait_running(host, "orphan")
        pid = int(re.search(r"pid=(\d+)", bash_output(host, "orphan")).group(1))  # type: ignore[union-attr]
        os.kill(pid, 0)  # alive
        started = time.monotonic()
        assert c.proc is not None and c.proc.stdin is not None
        c.proc.stdin.close()
        code = await asyncio.wait_for(c.proc.wait(), 5)
        assert code == 0 and time.monotonic() - started < 3
        assert not _alive(pid)
        # The drained request still got its one terminal response.
        data = await asyncio.wait_for(running, 2)
        assert data["cancelled"] is True and "exitCode" not in data


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False
