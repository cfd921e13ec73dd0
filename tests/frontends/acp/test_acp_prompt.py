"""Slice 1: initialize, session/new, a text prompt streamed from the faux provider, stop reasons."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from acp_helpers import acp_host

pytestmark = pytest.mark.slow  # ACP hosts through the SDK's client


async def test_initialize_advertises_capabilities_and_agent_info(tmp_path: Path) -> None:
    async with acp_host(tmp_path) as host:
        init = host.init
        assert init is not None
        assert init.protocol_version == PROTOCOL_VERSION
        caps = init.agent_capabilities
        assert caps.load_session is True
        assert caps.prompt_capabilities.image is True
        assert caps.prompt_capabilities.embedded_context is True
        assert caps.session_capabilities.list is not None
        assert init.agent_info.name == "atomic-host"
        assert init.agent_info.version
        meta = caps.field_meta["atomic"]
        assert "_atomic/command" in meta["methods"]


async def test_unknown_protocol_version_gets_ours(tmp_path: Path) -> None:
    async with acp_host(tmp_path, initialize=False) as host:
        init = await host.conn.initialize(protocol_version=999)
        assert init.protocol_version == PROTOCOL_VERSION


async def test_text_prompt_streams_chunks_and_ends_turn(tmp_path: Path) -> None:
    async with acp_host(tmp_path) as host:
        session = await host.new_session()
        assert session.session_id
        host.faux.push(
            {
                "content": [
                    {"type": "thinking", "thinking": "Let me think."},
                    {"type": "text", "text": "Hello from the faux model, streamed in chunks."},
                ]
            }
        )
        response = await asyncio.wait_for(
            host.conn.prompt(session_id=session.session_id, prompt=[text_block("hi")]), 30
        )
        assert response.stop_reason == "end_turn"
        chunks = host.client.of("agent_message_chunk", session.session_id)
        assert len(chunks) > 1  # streamed, not one block at the end
        assert host.client.text() == "Hello from the faux model, streamed in chunks."
        assert host.client.text("agent_thought_chunk") == "Let me think."


async def test_available_commands_follow_the_new_session(tmp_path: Path) -> None:
    template = tmp_path / "review.md"
    template.write_text("---\ndescription: Review the code\n---\nReview $@\n")
    async with acp_host(tmp_path, "--prompt-template", str(template)) as host:
        session = await host.new_session()
        updates = await _wait(lambda: host.client.of("available_commands_update", session.session_id))
        names = {c.name for c in updates[-1].available_commands}
        assert "review" in names


async def test_stop_reasons_max_tokens_and_refusal(tmp_path: Path) -> None:
    async with acp_host(tmp_path) as host:
        sid = (await host.new_session()).session_id
        host.faux.push({"content": "cut off", "stopReason": "length"})
        assert (await host.conn.prompt(session_id=sid, prompt=[text_block("a")])).stop_reason == "max_tokens"
        host.faux.push(
            {"content": "", "stopReason": "error", "errorMessage": "The model refused to complete the request"}
        )
        assert (await host.conn.prompt(session_id=sid, prompt=[text_block("b")])).stop_reason == "refusal"


async def test_provider_error_fails_the_prompt(tmp_path: Path) -> None:
    async with acp_host(tmp_path, settings={"retry": {"enabled": False}}) as host:
        sid = (await host.new_session()).session_id
        host.faux.push({"content": "", "stopReason": "error", "errorMessage": "invalid x-api-key"})
        with pytest.raises(RequestError) as info:
            await host.conn.prompt(session_id=sid, prompt=[text_block("a")])
        assert "invalid x-api-key" in str(info.value)
        host.faux.push("fine again")
        assert (await host.conn.prompt(session_id=sid, prompt=[text_block("b")])).stop_reason == "end_turn"


async def test_unknown_session_is_invalid_params(tmp_path: Path) -> None:
    async with acp_host(tmp_path) as host:
        with pytest.raises(RequestError) as info:
            await host.conn.prompt(session_id="nope", prompt=[text_block("a")])
        assert info.value.code == -32602


async def _wait(check, timeout: float = 10.0):
    from acp_helpers import wait_for

    return await wait_for(check, timeout)
