"""Oversized tool results (semantics §5.1): saved to a private file, the model sees a preview block."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from atomic_host.testing import Host

EXT = str(Path(__file__).with_name("ext_toolsrpc.py"))
BIG_SIZE = 120_000
BLOCK = re.compile(
    r"<persisted-output>\nOutput too large \(120,000 characters, [\d,]+ bytes\)\. "
    r"Full output saved to: (?P<path>\S+)\n\n"
    r"Preview \(first 2000 bytes\):\n(?P<preview>.*)\n\.\.\.\n</persisted-output>",
    re.S,
)


def expected_big() -> str:
    return "\n".join(f"{i:06d} é" for i in range(BIG_SIZE // 9 + 1))[:BIG_SIZE]


async def run_big(host: Host, call_id: str) -> dict[str, Any]:
    host.faux.push({"content": [{"type": "toolCall", "id": call_id, "name": "big_result", "arguments": {}}]}, "seen it")
    events = await host.client.prompt_and_wait("make it big")
    return next(e for e in events if e.get("type") == "tool_execution_end")


def check_block(text: str) -> Path:
    m = BLOCK.fullmatch(text)
    assert m, text[:400]
    preview = m["preview"]
    assert len(preview.encode()) <= 2000 and expected_big().startswith(preview) and len(preview) > 1000
    path = Path(m["path"])
    assert path.read_text() == expected_big()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    return path


async def test_oversized_result_saved_next_to_the_session(rpc_host: Any) -> None:
    async with rpc_host("-e", EXT) as host:
        end = await run_big(host, "call/../odd id")
        text = end["result"]["content"][0]["text"]
        path = check_block(text)
        location = (await host.client.get_state())["sessionLocation"]
        assert path == Path(location).parent / "tool-results" / "call_.._odd_id.txt"
        assert end["result"]["details"]["persistedOutput"] == {"path": str(path), "chars": BIG_SIZE}
        # The model's next call carries the block, not the 120 000 characters.
        result = host.faux_calls()[-1]["context"]["messages"][-1]
        assert result["role"] == "toolResult"
        assert result["content"] == [{"type": "text", "text": text}]
        # And so does the stored message.
        stored = [m for m in (await host.client.get_messages()).messages if m["role"] == "toolResult"]
        assert stored[0]["content"][0]["text"] == text


async def test_in_memory_session_uses_the_temp_tree(rpc_host: Any, tmp_root: Path) -> None:
    async with rpc_host("-e", EXT, "--no-session") as host:
        end = await run_big(host, "mem-1")
        path = check_block(end["result"]["content"][0]["text"])
        session_id = (await host.client.get_state())["sessionId"]
        assert path == tmp_root / f"atomic-{os.getuid()}" / session_id / "tool-results" / "mem-1.txt"


async def test_refused_directory_gives_no_path(rpc_host: Any, tmp_root: Path, tmp_path: Path) -> None:
    async with rpc_host("-e", EXT, "--no-session") as host:
        session_id = (await host.client.get_state())["sessionId"]
        session_dir = tmp_root / f"atomic-{os.getuid()}" / session_id
        session_dir.mkdir(parents=True, mode=0o700)
        target = tmp_path / "elsewhere"
        target.mkdir()
        (session_dir / "tool-results").symlink_to(target)
        end = await run_big(host, "refused")
        text = end["result"]["content"][0]["text"]
        assert "The full output could not be saved." in text and "saved to:" not in text
        assert text.startswith("<persisted-output>") and len(text) < 2300
        assert list(target.iterdir()) == []


async def test_small_results_and_self_bounded_tools_untouched(rpc_host: Any) -> None:
    async with rpc_host("-e", EXT) as host:
        host.faux.push(
            {"content": [{"type": "toolCall", "id": "e1", "name": "ext_echo", "arguments": {"text": "hi"}}]},
            {
                "content": [
                    {
                        "type": "toolCall",
                        "id": "b1",
                        "name": "bash",
                        "arguments": {"command": "yes 0123456789012345678901234567890123456789 | head -n 5000"},
                    }
                ]
            },
            "done",
        )
        events = await host.client.prompt_and_wait("go")
        ends = {e["toolCallId"]: e for e in events if e.get("type") == "tool_execution_end"}
        assert ends["e1"]["result"]["content"] == [{"type": "text", "text": "echo: hi"}]
        bash_text = ends["b1"]["result"]["content"][0]["text"]
        assert "<persisted-output>" not in bash_text
        assert len(bash_text) > 50_000  # bash keeps its own 50 KiB tail and full-output note
        assert "Full output: " in bash_text
