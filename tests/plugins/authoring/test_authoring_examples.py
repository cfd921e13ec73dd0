"""The examples run for real: the word_count extension inside the host, the client demo as a script."""

from __future__ import annotations

import subprocess
import sys

from authoring_helpers import REPO

from atomic_host.testing import start_host

WORD_COUNT = REPO / "examples" / "extensions" / "word_count.py"


def _tool_end(events: list[dict], name: str) -> dict:
    return next(e for e in events if e["type"] == "tool_execution_end" and e["toolName"] == name)


async def test_word_count_extension_end_to_end() -> None:
    async with start_host("-e", str(WORD_COUNT)) as host:
        client = host.client
        listing = (await client.get_commands()).commands
        assert any(c["name"] == "wc" for c in listing)

        # The command runs via prompt and never reaches the model.
        start = len(client.events)
        assert (await client.prompt("/wc one two three"))["disposition"] == "handled"
        entry = await client.wait_for_event("entry_appended", after=start)
        assert entry["entry"]["customType"] == "word_count"
        assert entry["entry"]["data"] == {"words": 3, "lines": 1, "chars": 13}
        assert host.faux_calls() == []

        # The model calls the tool, with a file and with bad arguments.
        (host.cwd / "notes.txt").write_text("alpha beta\ngamma\n")
        host.faux.tool_call("word_count", {"path": "notes.txt"})
        host.faux.tool_call("word_count", {"text": "x", "path": "notes.txt"})
        host.faux.push("counted")
        events = await client.prompt_and_wait("count the words in notes.txt")
        ends = [e for e in events if e["type"] == "tool_execution_end"]
        assert [e["isError"] for e in ends] == [False, True]
        assert ends[0]["result"]["content"][0]["text"] == "3 words, 2 lines, 17 characters"
        assert ends[0]["result"]["details"] == {"words": 3, "lines": 2, "chars": 17}
        assert "exactly one" in ends[1]["result"]["content"][0]["text"]
        word_count_schema = next(t for t in host.faux_calls()[0]["context"]["tools"] if t["name"] == "word_count")
        assert set(word_count_schema["parameters"]["properties"]) == {"text", "path"}

        # The tool_call hook refuses rm -rf / but lets an ordinary bash call run.
        canary = host.cwd / "canary"
        canary.write_text("still here")
        host.faux.tool_call("bash", {"command": f"rm -rf / ; rm {canary}"})
        host.faux.tool_call("bash", {"command": "echo safe"})
        host.faux.push("done")
        events = await client.prompt_and_wait("clean up")
        blocked, allowed = [e for e in events if e["type"] == "tool_execution_end"]
        assert blocked["isError"] is True
        assert "Blocked by word_count.py" in blocked["result"]["content"][0]["text"]
        assert canary.exists()
        assert allowed["isError"] is False
        assert "safe" in allowed["result"]["content"][0]["text"]

        assert not [e for e in client.events if e["type"] == "extension_error"]
    host.assert_protocol_lines()


def test_client_demo_runs() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples" / "client_demo.py")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "model: faux/faux-1" in out
    assert "Hello from the faux model! This reply arrives in small chunks, like a real stream.\n" in out
    assert "output: 42  exit code: 0" in out
    sessions = [line for line in out.splitlines() if line.startswith("- ")]
    assert len(sessions) == 1 and sessions[0].endswith(".jsonl")
