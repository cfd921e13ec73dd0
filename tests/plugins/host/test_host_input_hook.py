"""The ``input`` hook through the real host: its typed event (``kind`` is prompt | steer | follow_up,
as documented; it used to read the hook name), transforms reaching the model, and handled input."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from atomic_host.testing import read_jsonl

PLUGIN = textwrap.dedent(
    """
    import json, os
    from atomic_host import InputResult, hookimpl

    @hookimpl
    def input(event, api):
        with open(os.environ["INPUT_LOG"], "a") as f:
            f.write(json.dumps([type(event).__name__, event.text, event.kind, event.source]) + "\\n")
        if event.text.startswith("shout "):
            return InputResult.transform(event.text[6:].upper())
        if event.text == "swallow this":
            return InputResult.handled()
        return None
    """
)


async def test_input_event_kinds_transform_and_handled(rpc_host: Any, tmp_path: Path) -> None:
    plugin, log = tmp_path / "input_plugin.py", tmp_path / "input.log"
    plugin.write_text(PLUGIN)
    async with rpc_host("-e", str(plugin), env={"INPUT_LOG": str(log)}) as host:
        host.faux.push("first answer", "second answer")
        await host.client.prompt_and_wait("shout hello")
        assert (await host.client.prompt("swallow this"))["disposition"] == "handled"
        start = len(host.client.events)
        assert (await host.client.follow_up("shout again"))["disposition"] == "queued"
        await host.client.wait_for_idle(after=start)
        user_texts = [
            m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
            for m in (await host.client.get_messages()).messages
            if m["role"] == "user"
        ]
        assert user_texts == ["HELLO", "AGAIN"]
    seen = read_jsonl(log)
    assert seen == [
        ["InputEvent", "shout hello", "prompt", "rpc"],
        ["InputEvent", "swallow this", "prompt", "rpc"],
        ["InputEvent", "shout again", "follow_up", "rpc"],
    ]
