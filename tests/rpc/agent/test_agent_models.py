"""Model selection and thinking levels (semantics §6.3) through the RPC host."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_frames import models_json
from agent_helpers import of_type

LEVELS = ["off", "minimal", "low", "medium", "high"]


def _second_provider(root: Path, reasoning: bool = True) -> None:
    (root / "agent").mkdir(parents=True, exist_ok=True)
    (root / "agent" / "models.json").write_text(
        models_json("http://127.0.0.1:9", ["openai-completions"], reasoning=reasoning)
    )


async def test_available_models_set_model_and_errors(agent_host: Any) -> None:
    async with agent_host() as host:
        data = await host.client.call("get_available_models")
        assert {"models", "scopedModels", "oauthProviders", "customAuthProviders"} <= set(data)
        (faux,) = data["models"]
        for key in (
            "id",
            "name",
            "api",
            "provider",
            "baseUrl",
            "reasoning",
            "input",
            "cost",
            "contextWindow",
            "maxTokens",
        ):
            assert key in faux
        assert (faux["provider"], faux["id"]) == ("faux", "faux-1")
        resp = await host.client.request({"type": "set_model", "provider": "nope", "modelId": "m"})
        assert resp["success"] is False and resp["error"] == "Model not found: nope/m"
        assert await host.client.call("cycle_model") is None  # fewer than two models
        n0 = len(host.client.events)
        model = await host.client.set_model("faux", "faux-1", persist=True)
        assert model["id"] == "faux-1"
        changed = await host.client.wait_for_event("model_changed", after=n0)
        assert changed["model"]["id"] == "faux-1"
        saved = json.loads((host.agent_dir / "settings.json").read_text())
        assert (saved["defaultProvider"], saved["defaultModel"]) == ("faux", "faux-1")


async def test_cycle_model_with_second_provider(agent_host: Any, tmp_path: Path) -> None:
    _second_provider(tmp_path, reasoning=False)
    async with agent_host(base=tmp_path) as host:
        models = (await host.client.get_available_models()).models
        refs = [f"{m['provider']}/{m['id']}" for m in models]
        assert "faux/faux-1" in refs and "local-openai-completions/m1" in refs
        await host.client.set_thinking_level("high")
        n0 = len(host.client.events)
        data = await host.client.cycle_model()
        assert data["model"]["provider"] != "faux" and data["isScoped"] is False
        # The second model has no reasoning: thinking is clamped to off.
        assert data["thinkingLevel"] == "off"
        assert (await host.client.get_available_thinking_levels()).levels == ["off"]
        assert await host.client.cycle_thinking_level() is None
        changed = await host.client.wait_for_event("model_changed", after=n0)
        assert changed["previousModel"]["provider"] == "faux"
        state = await host.client.get_state()
        assert state["model"]["provider"] == "local-openai-completions" and state["thinkingLevel"] == "off"
        back = await host.client.cycle_model()
        assert back["model"]["provider"] == "faux"
        assert not (host.agent_dir / "settings.json").exists() or "defaultModel" not in json.loads(
            (host.agent_dir / "settings.json").read_text()
        )


async def test_thinking_levels_set_clamp_cycle(agent_host: Any) -> None:
    async with agent_host() as host:
        assert (await host.client.get_available_thinking_levels()).levels == LEVELS
        assert (await host.client.get_state())["thinkingLevel"] == "medium"
        n0 = len(host.client.events)
        ack = await host.client.set_thinking_level("low")
        assert ack == {"level": "low", "provider": "faux", "modelId": "faux-1"}
        assert (await host.client.set_thinking_level("xhigh"))["level"] == "high"  # clamped down
        assert of_type(host.client.events[n0:], "thinking_level_changed") == [
            {"type": "thinking_level_changed", "level": "low"},
            {"type": "thinking_level_changed", "level": "high"},
        ]
        assert await host.client.cycle_thinking_level() == {"level": "off"}  # wraps
        assert await host.client.cycle_thinking_level() == {"level": "minimal"}
        bad = await host.client.request({"type": "set_thinking_level", "level": "extreme"})
        assert bad["success"] is False
        await host.client.set_thinking_level("high", persist=True)
        saved = json.loads((host.agent_dir / "settings.json").read_text())
        assert saved["defaultThinkingLevel"] == "high"
        host.faux.push("ok")
        await host.client.prompt_and_wait("x")
        assert host.faux_calls()[-1]["options"]["reasoning"] == "high"


async def test_cli_model_with_level_and_thinking_flag(agent_host: Any) -> None:
    async with agent_host("--model", "faux/faux-1:low") as host:
        state = await host.client.get_state()
        assert state["model"]["id"] == "faux-1" and state["thinkingLevel"] == "low"
    async with agent_host("--thinking", "minimal") as host:
        assert (await host.client.get_state())["thinkingLevel"] == "minimal"


async def test_cli_api_key_is_used_and_never_echoed(agent_host: Any, tmp_path: Path) -> None:
    secret = "sk-very-secret-cli-key-42"
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "models.json").write_text(
        json.dumps({"providers": {"keyless": {"baseUrl": "http://127.0.0.1:9", "api": "openai-completions",
                                              "models": [{"id": "k1"}]}}})
    )  # fmt: skip
    async with agent_host("--model", "keyless/k1", "--api-key", secret, base=tmp_path) as host:
        state = await host.client.get_state()
        assert state["model"]["provider"] == "keyless"
        models = await host.client.call("get_available_models")
        assert any(m["provider"] == "keyless" for m in models["models"])
        await host.client.get_session_stats()
        assert (await host.client.set_model("keyless", "k1"))["id"] == "k1"
    assert all(secret not in line for line in host.client.lines)
    assert secret not in "".join(p.read_text(errors="replace") for p in (tmp_path / "agent").rglob("*") if p.is_file())
