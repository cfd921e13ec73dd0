"""``fallbackModels`` (semantics §6.4, issue 10 §2): a failure the same model cannot get past hands
the turn to the next listed model, with ``model_fallback_start/end`` and
``model_changed{source:"fallback"}``; ``get_state`` shows it; the user's model is back for the next
prompt. Two providers of models.json point at the same real SSE server, which tells them apart by
the model id in the request body."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vendor_helpers import NO_RETRY, QUIET, assistants, error_reply, of_type, sse, stream_reply, text_of

from atomic_host.testing import read_jsonl, start_host


def _models(agent_dir: Path, base_url: str) -> None:
    def provider(model_id: str) -> dict[str, Any]:
        model = {"id": model_id, "reasoning": True, "contextWindow": 200000, "maxTokens": 32000,
                 "cost": {"input": 1, "output": 2}}  # fmt: skip
        return {"baseUrl": base_url, "api": "anthropic-messages", "apiKey": "fixture-key-123", "models": [model]}

    agent_dir.mkdir(parents=True, exist_ok=True)
    providers = {"main": provider("m-main"), "backup": provider("m-backup"), "spare": provider("m-spare:14b")}
    (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))


def _requested_models(sse_server: Any) -> list[str]:
    return [r.body["model"] for r in sse_server.requests]


async def test_an_auth_failure_falls_back_and_the_user_model_returns(sse_server: Any, tmp_path: Path) -> None:
    _models(tmp_path / "agent", sse_server.base_url)
    sse_server.enqueue(error_reply(401, "anthropic/http_401_authentication.json"))
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    settings = {**NO_RETRY, "fallbackModels": ["nowhere/none", "backup/m-backup:low", "spare/m-spare:14b"]}
    async with start_host("--model", "main/m-main", base=tmp_path, settings=settings) as host:
        c = host.client
        events = await c.prompt_and_wait("hi")
        (start,) = of_type(events, "model_fallback_start")
        assert start["fromModel"] == {"provider": "main", "id": "m-main"}
        assert start["toModel"] == {"provider": "backup", "id": "m-backup"}
        assert (start["attempt"], start["maxAttempts"]) == (2, 3)  # the unknown entry was skipped
        assert "401" in start["errorMessage"] or "authentication" in start["errorMessage"].lower()
        changed = [e for e in of_type(events, "model_changed") if e["source"] == "fallback"]
        assert [e["model"]["id"] for e in changed] == ["m-backup"]
        (end,) = of_type(events, "model_fallback_end")
        assert end["success"] is True and end["model"] == {"provider": "backup", "id": "m-backup"}
        order = [e["type"] for e in events if e["type"] in ("model_fallback_start", "model_changed", "agent_start",
                                                              "model_fallback_end")]  # fmt: skip
        assert order == ["agent_start", "model_fallback_start", "model_changed", "agent_start", "model_fallback_end"]
        failed, answered = assistants(events)
        assert failed["stopReason"] == "error" and answered["model"] == "m-backup" and text_of(answered)
        state = await c.get_state()
        assert state["model"]["id"] == "m-backup" and state["thinkingLevel"] == "low"
        assert state["fallbackActive"] is True and state["userModel"] == {"provider": "main", "id": "m-main"}
        # the failed reply left the context (as a retried one does) but stays in the file
        assert [m["role"] for m in (await c.get_messages()).messages] == ["user", "assistant"]
        stored = [r["message"] for r in read_jsonl(state["sessionLocation"]) if r.get("type") == "message"]
        assert [(m["role"], m.get("stopReason")) for m in stored] == [
            ("user", None), ("assistant", "error"), ("assistant", "stop")
        ]  # fmt: skip

        events = await c.prompt_and_wait("again")
        restored = [e for e in of_type(events, "model_changed") if e["source"] == "restore"]
        assert [e["model"]["id"] for e in restored] == ["m-main"]
        assert "fallbackActive" not in await c.get_state()
        assert _requested_models(sse_server) == ["m-main", "m-backup", "m-main"]
        host.assert_protocol_lines()


async def test_exhausted_rate_limits_fall_back_after_the_retries(sse_server: Any, tmp_path: Path) -> None:
    _models(tmp_path / "agent", sse_server.base_url)
    for _ in range(3):  # the first try and two retries
        sse_server.enqueue(error_reply(429, "anthropic/http_429_rate_limit.json", {"retry-after-ms": "10"}))
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    settings = {**QUIET, "retry": {"enabled": True, "maxRetries": 2, "baseDelayMs": 10},
                "fallbackModels": ["backup/m-backup"]}  # fmt: skip
    async with start_host("--model", "main/m-main", base=tmp_path, settings=settings) as host:
        events = await host.client.prompt_and_wait("hi")
        assert [e["attempt"] for e in of_type(events, "auto_retry_start")] == [1, 2]
        (retry_end,) = of_type(events, "auto_retry_end")
        assert retry_end["success"] is False
        (start,) = of_type(events, "model_fallback_start")
        assert start["toModel"]["id"] == "m-backup"
        assert of_type(events, "model_fallback_end")[0]["success"] is True
        assert _requested_models(sse_server) == ["m-main"] * 3 + ["m-backup"]


async def test_when_every_fallback_fails_the_run_ends_once_with_the_last_error(sse_server: Any, tmp_path: Path) -> None:
    _models(tmp_path / "agent", sse_server.base_url)
    for _ in range(3):
        sse_server.enqueue(error_reply(401, "anthropic/http_401_authentication.json"))
    settings = {**NO_RETRY, "fallbackModels": ["backup/m-backup", "spare/m-spare:14b"]}  # a colon in an id
    async with start_host("--model", "main/m-main", base=tmp_path, settings=settings) as host:
        events = await host.client.prompt_and_wait("hi")
        assert [e["toModel"]["id"] for e in of_type(events, "model_fallback_start")] == ["m-backup", "m-spare:14b"]
        (end,) = of_type(events, "model_fallback_end")
        assert end["success"] is False and end["finalError"]
        assert len(of_type(events, "agent_end")) == 3 and len(assistants(events)) == 3
        assert _requested_models(sse_server) == ["m-main", "m-backup", "m-spare:14b"]
        assert (await host.client.get_state())["isStreaming"] is False


async def test_failures_another_model_cannot_fix_do_not_fall_back(sse_server: Any, tmp_path: Path) -> None:
    _models(tmp_path / "agent", sse_server.base_url)
    sse_server.enqueue(stream_reply("anthropic/refusal.sse"))  # a policy stop: another model is no answer
    settings = {**NO_RETRY, "fallbackModels": ["backup/m-backup"]}
    async with start_host("--model", "main/m-main", base=tmp_path, settings=settings) as host:
        events = await host.client.prompt_and_wait("hi")
        assert of_type(events, "model_fallback_start") == []
        assert _requested_models(sse_server) == ["m-main"]


async def test_a_saved_default_model_that_is_gone_blocks_prompts_until_a_model_is_chosen(
    sse_server: Any, tmp_path: Path
) -> None:
    _models(tmp_path / "agent", sse_server.base_url)
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    settings = {**NO_RETRY, "defaultProvider": "main", "defaultModel": "m-retired"}
    async with start_host(base=tmp_path, settings=settings, faux=False) as host:
        c = host.client
        state = await c.get_state()
        assert state["model"] is None  # not silently another model
        assert "main/m-retired" in state["modelFallbackMessage"]
        assert state["modelFallbackReason"] == "default_model_unavailable"
        response = await c.request({"type": "prompt", "message": "hi"})
        assert response["success"] is False and response["error"] == state["modelFallbackMessage"]
        assert sse_server.requests == []
        await c.call("set_model", provider="backup", modelId="m-backup")
        assert "modelFallbackMessage" not in await c.get_state()
        events = await c.prompt_and_wait("hi")
        assert text_of(assistants(events)[-1])
        assert _requested_models(sse_server) == ["m-backup"]


def _anthropic_text(text: str) -> Any:
    """An Anthropic Messages stream answering ``text``."""
    usage = {"input_tokens": 50, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}
    return sse.Reply(chunks=sse.anthropic_frames([
        {"type": "message_start", "message": {"id": "msg_t", "type": "message", "role": "assistant", "model": "x",
                                              "content": [], "stop_reason": None, "usage": usage}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]))  # fmt: skip


async def test_the_compaction_planner_falls_back_without_changing_the_session_model(
    sse_server: Any, tmp_path: Path
) -> None:
    _models(tmp_path / "agent", sse_server.base_url)
    long_prompt = "\n".join(f"line {i} of the first prompt with some words in it" for i in range(30))
    sse_server.enqueue(_anthropic_text("first answer"))
    sse_server.enqueue(_anthropic_text("second answer"))
    sse_server.enqueue(error_reply(401, "anthropic/http_401_authentication.json"))  # the session model plans
    sse_server.enqueue(_anthropic_text("1,5"))  # the fallback plans: delete lines 1 to 5
    settings = {**NO_RETRY, "fallbackModels": ["backup/m-backup:low"]}
    async with start_host("--model", "main/m-main", base=tmp_path, settings=settings) as host:
        c = host.client
        await c.prompt_and_wait(long_prompt)
        await c.prompt_and_wait("now the second thing")
        result = await c.call("compact")
        assert result["plannerModel"] == {"provider": "backup", "id": "m-backup", "thinkingLevel": "low"}
        assert result["rung"] == "planned"
        assert (await c.get_state())["model"]["id"] == "m-main"  # never changed
        assert of_type(c.events, "model_fallback_start") == []  # a borrowed planner is not a turn fallback
        assert _requested_models(sse_server) == ["m-main", "m-main", "m-main", "m-backup"]
        entry = [r for r in read_jsonl((await c.get_state())["sessionLocation"]) if r.get("type") == "compaction"]
        assert entry[0]["details"]["plannerModel"]["id"] == "m-backup"
