"""A big ``write`` tool call from a model, through the real ``atomic --mode rpc`` subprocess and a
real HTTP server speaking the vendors' SSE formats: the file is written byte for byte, every
fragment reaches the client as a delta, and a megabyte streams in seconds, not minutes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from scost_helpers import (
    anthropic_text_reply,
    anthropic_write_reply,
    fragments,
    openai_chat_write_reply,
    sse,
    write_arguments,
    write_models,
)

from atomic_host.testing import start_host

pytestmark = pytest.mark.slow  # megabyte streams through the real host, x10 and x100

QUIET = {"sessionSummary": {"enabled": False}, "retry": {"enabled": False}}


def _openai_text_reply(text: str) -> Any:
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "model": "m1",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
    }
    return sse.Reply(chunks=sse.openai_chat_frames([chunk]))


async def _write_through_host(tmp_path: Path, api: str, size: int) -> tuple[float, list[dict[str, Any]], str, str]:
    _body, arguments = write_arguments(size)
    with sse.SSEServer() as server:
        if api == "anthropic-messages":
            server.enqueue(anthropic_write_reply(arguments))
            server.enqueue(anthropic_text_reply("Done."))
        else:
            server.enqueue(openai_chat_write_reply(arguments))
            server.enqueue(_openai_text_reply("Done."))
        write_models(tmp_path / "agent", server.base_url, api)
        async with start_host("--model", "vendor/m1", base=tmp_path, settings=QUIET) as host:
            t0 = time.perf_counter()
            events = await host.client.prompt_and_wait("write big.txt", timeout=120)
            seconds = time.perf_counter() - t0
            written = (host.cwd / "big.txt").read_text()
            state = await host.client.get_state()
            assert state["isStreaming"] is False
        host.assert_protocol_lines()
    return seconds, events, written, arguments


@pytest.mark.parametrize("api", ["anthropic-messages", "openai-completions"])
async def test_a_100_kb_write_call_is_written_exactly_and_streamed_as_deltas(tmp_path: Path, api: str) -> None:
    _, events, written, arguments = await _write_through_host(tmp_path, api, 100_000)
    body, _ = write_arguments(100_000)
    assert written == body
    deltas = [
        e["assistantMessageEvent"]["delta"]
        for e in events
        if e["type"] == "message_update" and e["assistantMessageEvent"]["type"] == "toolcall_delta"
    ]
    assert "".join(deltas) == arguments and len(deltas) == len(fragments(arguments))
    (end,) = [e for e in events if e["type"] == "tool_execution_end"]
    assert end["isError"] is False


async def test_a_megabyte_write_call_streams_in_seconds(tmp_path: Path) -> None:
    """25,000 fragments of 40 characters: once 31 s for 70 KB (the partial parse re-ran over the
    whole buffer on every delta); now linear, so the megabyte costs about what its deltas cost."""
    seconds, _events, written, _ = await _write_through_host(tmp_path, "anthropic-messages", 1_000_000)
    assert written == write_arguments(1_000_000)[0]
    assert seconds < 20, f"1 MB write call took {seconds:.1f} s through the host"
