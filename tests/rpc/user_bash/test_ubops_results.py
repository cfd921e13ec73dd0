"""``user_bash`` results other than operations, through the real host: a ``BashResult`` answers the
command (recorded, nothing streamed); a dict — the old shape — is reported and ignored."""

from __future__ import annotations

from typing import Any


async def test_an_answered_command_is_recorded_and_streams_nothing(ops_host: Any) -> None:
    async with ops_host() as host:
        c = host.client
        response = await c.request({"type": "bash", "command": "answer: anything", "id": "a1"})
        assert response["success"]
        assert response["data"] == {
            "output": "answered by the plugin\n",
            "exitCode": 5,
            "cancelled": False,
            "truncated": False,
        }
        assert not [e for e in c.events if e.get("type") == "bash_execution_update"]
        (message,) = (await c.get_messages()).messages
        assert message["role"] == "bashExecution" and message["command"] == "answer: anything"
        assert message["output"] == "answered by the plugin\n" and message["exitCode"] == 5


async def test_a_dict_result_is_reported_and_the_command_runs_locally(ops_host: Any) -> None:
    async with ops_host() as host:
        c = host.client
        response = await c.request({"type": "bash", "command": "echo ran locally # dict", "id": "d1"})
        assert response["success"]
        assert response["data"] == {"output": "ran locally\n", "exitCode": 0, "cancelled": False, "truncated": False}
        (error,) = [e for e in c.events if e.get("type") == "extension_error"]
        assert error["event"] == "user_bash" and error["extensionPath"].endswith("ext_ubops.py")
        assert error["error"] == "returned dict; expected BashResult or None"
        assert "".join(e["delta"] for e in c.events if e.get("type") == "bash_execution_update") == "ran locally\n"
