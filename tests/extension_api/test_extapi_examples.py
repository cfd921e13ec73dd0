"""The two ported examples run for real: provider_payload.py against a recording SSE server,
fork_and_switch.py with the scripted provider."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from extapi_helpers import QUIET, chat_reply, errors, write_models

from atomic_host import testing_sse as sse
from atomic_host.testing import read_jsonl, start_host

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"


async def test_provider_payload_caps_max_tokens_adds_a_header_and_records_failures(
    sse_server: Any, tmp_path: Path
) -> None:
    write_models(tmp_path / "agent", sse_server.base_url)  # model m1: maxTokens 8000
    settings = {**QUIET, "providerPayload": {"maxTokens": 1000, "header": "X-Team", "value": "atomic"}}
    sse_server.enqueue(sse.Reply(status=429, body='{"error":"slow down"}', headers={"retry-after": "0"}))
    sse_server.enqueue(chat_reply("capped"))
    ext = EXAMPLES / "provider_payload.py"
    async with start_host("--model", "local/m1", "-e", str(ext), base=tmp_path, settings=settings) as host:
        c = host.client
        assert (await c.prompt_and_wait("hi")).text == "capped"
        start = len(c.events)
        await c.prompt("/provider-stats")
        notice = await c.wait_for_event(lambda e: e.get("method") == "notify", after=start)
        entries = (await c.call("get_entries"))["entries"]
        assert errors(c.events) == []
    # OpenAI chat at a plain URL: the limit is max_completion_tokens (the model says 8000)
    assert [r.body["max_completion_tokens"] for r in sse_server.requests] == [1000, 1000]
    assert all(r.headers["x-team"] == "atomic" for r in sse_server.requests)
    assert notice["message"].startswith("2 responses (last: 429, 200)")
    [failure] = [e for e in entries if e.get("customType") == "provider-response"]
    assert failure["data"]["status"] == 429 and failure["data"]["limits"] == {"retry-after": "0"}


async def test_fork_and_switch_retries_in_a_fork_and_goes_back(tmp_path: Path) -> None:
    ext = EXAMPLES / "fork_and_switch.py"
    async with start_host("-e", str(ext), base=tmp_path) as host:
        c = host.client
        host.faux.push("the first answer")
        await c.prompt_and_wait("write a haiku")
        original = await c.get_state()
        host.faux.push("a second attempt")
        start = len(c.events)
        assert (await c.prompt("/try-again write a limerick"))["disposition"] == "handled"
        await c.wait_for_idle(after=start)
        fork = await c.get_state()
        assert fork["sessionId"] != original["sessionId"]
        texts = [m["content"][0]["text"] for m in await c.get_messages() if m["role"] in ("user", "assistant")]
        assert texts == ["write a limerick", "a second attempt"]  # the first attempt is not in the fork
        # the original session is intact on disk
        saved = read_jsonl(original["sessionLocation"])
        assert [e["message"]["content"][0]["text"] for e in saved if e["type"] == "message"] == [
            "write a haiku",
            "the first answer",
        ]
        await c.prompt("/go-back")
        assert (await c.get_state())["sessionId"] == original["sessionId"]
        # the shortcut does the same as /try-again without arguments: the last prompt again
        host.faux.push("a third attempt")
        start = len(c.events)
        await c.call("invoke_shortcut", key="ctrl+shift+f")
        await c.wait_for_idle(after=start)
        texts = [m["content"][0]["text"] for m in await c.get_messages() if m["role"] in ("user", "assistant")]
        assert texts == ["write a haiku", "a third attempt"]
        assert errors(c.events) == []
    assert fork["sessionLocation"] != original["sessionLocation"]
