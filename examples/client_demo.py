"""Drive ``atomic --mode rpc`` from Python with :mod:`atomic_host.client`.

Runs offline against the scripted ``faux`` provider, in a throwaway agent dir::

    python examples/client_demo.py

It streams a reply's text as typed events arrive, prints what the run cost, runs a direct ``bash``
command, and lists the saved sessions. Pass host arguments to use a real model instead
(``python examples/client_demo.py --provider anthropic --model claude-sonnet-4-5``).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

from atomic_host.client import AtomicOptions, RpcClient
from atomic_host.client.types import MessageUpdateEvent, TextDelta

SCRIPTED_REPLY = "Hello from the faux model! This reply arrives in small chunks, like a real stream."


async def demo(options: AtomicOptions) -> None:
    async with RpcClient(options) as client:
        state = await client.get_state()
        print(f"model: {state.model.provider}/{state.model.id}")

        print("\n> prompt: say hello")
        updates = 0
        async for event in client.stream("say hello"):
            if isinstance(event, MessageUpdateEvent):
                updates += 1
                if isinstance(event.assistant_message_event, TextDelta):
                    print(event.assistant_message_event.delta, end="", flush=True)
        print(f"\n({updates} streamed updates)")

        print("\n> bash: echo $((6 * 7))")
        result = await client.bash("echo $((6 * 7))")
        print(f"output: {result.output.strip()}  exit code: {result.exit_code}")

        print("\n> list_sessions")
        for session in (await client.list_sessions()).sessions:
            print(f"- {session.id}  {session.message_count} messages  {session.path}")


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="atomic-demo-") as tmp:
        root = Path(tmp)
        workdir = root / "work"
        workdir.mkdir()
        # A private agent dir so the demo never touches ~/.atomic.
        options = AtomicOptions(cwd=workdir, agent_dir=root / "agent", args=argv)
        if not argv:
            script = root / "faux.jsonl"
            script.write_text(
                json.dumps({"content": [{"type": "text", "text": SCRIPTED_REPLY}], "chunkDelayMs": 5}) + "\n"
            )
            options.env = {"ATOMIC_FAUX_SCRIPT": str(script)}
            options.provider = "faux"
        asyncio.run(demo(options))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
