"""Every ```json example of docs/models.md loads cleanly through the real model registry with the
models it promises, and the local-server example answers a prompt through the real subprocess."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from suite_paths import DOCS

from atomic_host.core.models.registry import ModelRegistry
from atomic_host.testing import start_host
from builtin_plugins.catalog.data import builtin_providers

DOC = DOCS / "models.md"
EXAMPLES = re.findall(r"```json\n(.*?)```", DOC.read_text(), re.DOTALL)


def test_the_page_has_its_examples() -> None:
    assert len(EXAMPLES) == 4


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_each_example_loads_without_problems(tmp_path: Path, index: int) -> None:
    data = json.loads(EXAMPLES[index])
    (tmp_path / "token").write_text("sk-from-command\n")
    env = {"VLLM_API_KEY": "sk-vllm", "TEAM": "red", "PROXY_TOKEN": "pt", "ANTHROPIC_API_KEY": "sk-ant-x"}
    data_text = json.dumps(data).replace("~/.config/gateway/token", str(tmp_path / "token"))
    (tmp_path / "models.json").write_text(data_text)
    reg = ModelRegistry(tmp_path, builtin_providers(), {}, env=env)
    assert reg.errors == []
    available = {(m["provider"], m["id"]): m for m in reg.available()}
    for pid, provider in data["providers"].items():
        for model in provider.get("models", []):
            assert (pid, model["id"]) in available, (pid, model["id"])
            got = available[(pid, model["id"])]
            for key in ("contextWindow", "maxTokens", "reasoning", "input"):
                if key in model:
                    assert got[key] == model[key], (pid, model["id"], key)
        for model_id, override in provider.get("modelOverrides", {}).items():
            got = available[(pid, model_id)]
            assert {k: got[k] for k in override} == override
        if "baseUrl" in provider and not provider.get("models"):  # a reroute of a built-in provider
            assert all(m["baseUrl"] == provider["baseUrl"] for (p, _), m in available.items() if p == pid)
    if "gateway" in data["providers"]:
        model = available[("gateway", "claude-sonnet-4-5")]
        assert reg.resolve_api_key("gateway") == "sk-from-command"
        headers = reg.request_headers(model)
        assert headers["X-Team"] == "red" and headers["X-Client"] == "atomic"


async def test_the_local_server_example_answers_through_the_host(tmp_path: Path) -> None:
    from atomic_host import testing_sse as sse

    data = json.loads(EXAMPLES[0])
    chunk = {"id": "c", "object": "chat.completion.chunk", "model": "qwen3:14b",
             "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hello from ollama"},
                          "finish_reason": "stop"}]}  # fmt: skip
    with sse.SSEServer() as server:
        server.enqueue(sse.Reply(chunks=sse.openai_chat_frames([chunk])))
        data["providers"]["ollama"]["baseUrl"] = server.base_url
        (tmp_path / "agent").mkdir()
        (tmp_path / "agent" / "models.json").write_text(json.dumps(data))
        async with start_host("--model", "ollama/qwen3:14b", base=tmp_path) as host:
            result = await host.client.prompt_and_wait("hi")
            assert result.ok and result.text == "hello from ollama"
        body = server.requests[0].body
        assert body["model"] == "qwen3:14b"
        assert body["messages"][0]["role"] == "system"  # supportsDeveloperRole: false
        assert "store" not in body  # supportsStore: false
