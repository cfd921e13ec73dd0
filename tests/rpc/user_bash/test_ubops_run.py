"""``user_bash`` returning ``BashResult(operations=...)``: the plugin runs the command its own way
and the real host streams, truncates, masks, aborts, answers and records as for its local shell."""

from __future__ import annotations

import asyncio
import os
import stat
import time
from pathlib import Path
from typing import Any

from atomic_host.testing import Host, bash_deltas, bash_output


def errors(host: Host) -> list[dict[str, Any]]:
    return [e for e in host.client.events if e.get("type") == "extension_error"]


async def bash(host: Host, command: str, req_id: str, **extra: Any) -> dict[str, Any]:
    response = await host.client.request({"type": "bash", "command": command, "id": req_id, **extra})
    assert response["success"], response
    return response["data"]


async def test_operations_stream_channels_exit_code_and_record(ops_host: Any, runner_log: Path) -> None:
    async with ops_host() as host:
        cmd = (
            "box: for i in 1 2; do echo out$i; echo err$i >&2; sleep 0.05; done; "
            "printf '\\033[1mbold\\033[0m\\r\\n'; exit 3"
        )
        data = await bash(host, cmd, "r1")
        assert data == {
            "output": "[box] out1\nerr1\n[box] out2\nerr2\n[box] bold\n",
            "exitCode": 3,
            "cancelled": False,
            "truncated": False,
        }
        # Deltas keep their channel and arrival order; ANSI and \r are cleaned as for the local shell.
        assert bash_output(host, "r1", "stdout") == "[box] out1\n[box] out2\n[box] bold\n"
        assert bash_output(host, "r1", "stderr") == "err1\nerr2\n"
        assert bash_output(host, "r1") == data["output"]
        assert len(bash_deltas(host, "r1")) >= 5  # streamed piece by piece, not once at the end
        # The runner got the command as typed (its head word is its own) and the session cwd.
        assert f"in {host.cwd}" in runner_log.read_text()
        # user_bash is the same command under another name.
        response = await host.client.request({"type": "user_bash", "command": "box: echo hi", "id": "u1"})
        assert response["success"] and response["data"]["output"] == "[box] hi\n"
        assert response["data"]["exitCode"] == 0
        messages = (await host.client.get_messages()).messages
        assert [m["role"] for m in messages] == ["bashExecution", "bashExecution"]
        assert messages[0]["command"] == cmd and messages[0]["exitCode"] == 3
        assert messages[0]["output"] == data["output"] and messages[0]["fullOutputPath"] is None
        # Commands the plugin leaves alone still run in the local shell.
        assert (await bash(host, "echo local", "r2"))["output"] == "local\n"
        assert errors(host) == []


async def test_output_from_a_worker_thread_arrives_in_order(ops_host: Any) -> None:
    async with ops_host() as host:
        data = await bash(host, "thread: 400", "t1")
        expected = "".join(f"t-{i}\n" for i in range(400))
        assert data["output"] == expected and data["exitCode"] == 0
        assert bash_output(host, "t1") == expected
        assert {e["channel"] for e in bash_deltas(host, "t1")} == {"stdout"}


async def test_abort_stops_the_runner_and_answers_cancelled(ops_host: Any, runner_log: Path) -> None:
    async with ops_host() as host:
        c = host.client
        run = asyncio.ensure_future(bash(host, "box: echo started; sleep 30; echo never", "a1"))
        await c.wait_for_event(lambda e: e.get("type") == "bash_execution_update" and e.get("id") == "a1")
        started = time.monotonic()
        await c.request({"type": "abort_bash", "requestId": "a1"})
        data = await asyncio.wait_for(run, 10)
        assert time.monotonic() - started < 3
        assert data == {"output": "[box] started\n", "cancelled": True, "truncated": False}
        assert "killed" in runner_log.read_text().split()
        message = ((await c.get_messages()).messages)[-1]
        assert message["cancelled"] is True and message.get("exitCode") is None


async def test_a_runner_that_ignores_abort_is_cancelled_after_the_grace(ops_host: Any, runner_log: Path) -> None:
    async with ops_host() as host:
        c = host.client
        run = asyncio.ensure_future(bash(host, "stubborn:", "s1"))
        await c.wait_for_event(lambda e: e.get("type") == "bash_execution_update" and e.get("id") == "s1")
        started = time.monotonic()
        await c.abort_bash()  # every running request
        data = await asyncio.wait_for(run, 10)
        waited = time.monotonic() - started
        assert 0.9 < waited < 4, waited  # the grace second, not the runner's 60
        assert data == {"output": "stubborn started\n", "cancelled": True, "truncated": False}
        for _ in range(50):  # the cancellation lands in the runner's own except block
            if "cancelled" in runner_log.read_text().split():
                break
            await asyncio.sleep(0.02)
        assert "cancelled" in runner_log.read_text().split()
        # The host is fine afterwards.
        assert (await bash(host, "box: echo after", "s2"))["output"] == "[box] after\n"


async def test_a_raising_runner_fails_the_command_and_is_reported(ops_host: Any) -> None:
    async with ops_host() as host:
        c = host.client
        response = await c.request({"type": "bash", "command": "boom:", "id": "b1"})
        assert response["success"] is False
        assert response["error"] == "Bash command failed: user_bash operations raised RuntimeError: the box is gone"
        (error,) = errors(host)
        assert error["event"] == "user_bash" and error["extensionPath"].endswith("ext_ubops.py")
        assert "the box is gone" in error["error"]
        assert bash_output(host, "b1") == "about to fail\n"  # what it streamed before failing
        assert (await c.get_messages()).messages == []  # a failed command records nothing


async def test_big_output_is_truncated_with_the_full_log(ops_host: Any, tmp_root: Path) -> None:
    async with ops_host() as host:
        session_id = (await host.client.get_state())["sessionId"]
        data = await bash(host, "plain: for i in $(seq 1 20000); do echo line-$i; done", "big")
        full = "".join(f"line-{i}\n" for i in range(1, 20001))
        assert bash_output(host, "big") == full
        assert data["truncated"] is True and data["exitCode"] == 0
        assert data["output"] == "\n".join(f"line-{i}" for i in range(17001, 20001))
        path = Path(data["fullOutputPath"])
        assert path.parent == tmp_root / f"atomic-{os.getuid()}" / session_id
        assert path.read_text() == full and stat.S_IMODE(path.stat().st_mode) == 0o600


async def test_shell_command_prefix_reaches_the_runner(ops_host: Any, runner_log: Path) -> None:
    async with ops_host(settings={"shellCommandPrefix": "GREETING=from-prefix"}) as host:
        data = await bash(host, "plain: echo $GREETING", "p1")
        assert data["output"] == "from-prefix\n"
        message = ((await host.client.get_messages()).messages)[-1]
        assert message["command"] == "plain: echo $GREETING"  # recorded as typed, without the prefix


async def test_a_key_split_across_pieces_is_masked(ops_host: Any) -> None:
    key = "sk-ops-Zq81xW3vT9kLm2Pn7Rs4"
    async with ops_host(env={"ANTHROPIC_API_KEY": key}) as host:
        data = await bash(host, f"split: key={key} end", "k1")
        assert data["output"] == "key=[REDACTED:ANTHROPIC_API_KEY] end\n" and data["exitCode"] == 7
        assert bash_output(host, "k1") == data["output"]
        assert key not in "\n".join(host.client.lines)
        assert key not in str((await host.client.get_messages()).messages)
