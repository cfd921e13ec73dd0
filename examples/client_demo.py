"""Drive ``atomic --mode rpc`` from Python with :class:`atomic_host.client.RpcClient`.

Runs offline against the scripted ``faux`` provider, in a throwaway agent dir::

    python examples/client_demo.py

It prompts the model and streams the reply's text deltas to the terminal, runs a direct
``bash`` command, and lists the saved sessions. Pass host arguments to use a real model
instead (``python examples/client_demo.py --provider anthropic --model claude-sonnet-4-5``).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from atomic_host.client import RpcClient

SCRIPTED_REPLY = "Hello from the faux model! This reply arrives in small chunks, like a real stream."


def print_text_deltas(event: dict[str, Any]) -> None:
    """An event listener: print assistant text as it streams."""
    if event["type"] == "message_update":
        delta = event["assistantMessageEvent"]
        if delta["type"] == "text_delta":
            print(delta["delta"], end="", flush=True)
    elif event["type"] == "message_end" and event["message"]["role"] == "assistant":
        print()


async def demo(host_args: list[str], workdir: Path, env: dict[str, str]) -> None:
    async with RpcClient(host_args, cwd=str(workdir), env=env) as client:
        state = await client.get_state()
        print(f"model: {state['model']['provider']}/{state['model']['id']}")

        print("\n> prompt: say hello")
        unsubscribe = client.on_event(print_text_deltas)
        events = await client.prompt_and_wait("say hello")
        unsubscribe()
        deltas = sum(1 for e in events if e["type"] == "message_update")
        print(f"({deltas} streamed updates)")

        print("\n> bash: echo $((6 * 7))")
        result = await client.bash("echo $((6 * 7))")
        print(f"output: {result['output'].strip()}  exit code: {result['exitCode']}")

        print("\n> list_sessions")
        for session in (await client.list_sessions()).sessions:
            print(f"- {session['id']}  {session.get('messageCount', '?')} messages  {session['path']}")


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="atomic-demo-") as tmp:
        root = Path(tmp)
        workdir = root / "work"
        workdir.mkdir()
        # A private agent dir so the demo never touches ~/.atomic.
        env = {**os.environ, "ATOMIC_CODING_AGENT_DIR": str(root / "agent")}
        host_args = argv
        if not argv:
            script = root / "faux.jsonl"
            script.write_text(
                json.dumps({"content": [{"type": "text", "text": SCRIPTED_REPLY}], "chunkDelayMs": 5}) + "\n"
            )
            env["ATOMIC_FAUX_SCRIPT"] = str(script)
            host_args = ["--provider", "faux"]
        asyncio.run(demo(host_args, workdir, env))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
