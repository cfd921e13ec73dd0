"""``set_thinking_level {persist: true}`` saves the level for the active model too
(``modelThinkingLevels["provider/modelId"]``), and that level comes back whenever the model is
selected again: by ``set_model`` and when a new host starts with it."""

from __future__ import annotations

import json
from pathlib import Path

from atomic_host.testing import start_host


def _models(agent_dir: Path) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    models = [{"id": "m1", "reasoning": True}, {"id": "m2.5", "reasoning": True}]  # a dot in an id
    provider = {"baseUrl": "http://127.0.0.1:9", "api": "openai-completions", "apiKey": "k-123", "models": models}
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"vendor": provider}}))


async def test_a_persisted_level_is_the_models_own_and_comes_back_with_it(tmp_path: Path) -> None:
    _models(tmp_path / "agent")
    settings_file = tmp_path / "agent" / "settings.json"
    async with start_host("--model", "vendor/m1", base=tmp_path, settings={}) as host:
        c = host.client
        data = await c.call("set_thinking_level", level="high", persist=True)
        assert data == {"level": "high", "provider": "vendor", "modelId": "m1"}
        saved = json.loads(settings_file.read_text())
        assert saved["defaultThinkingLevel"] == "high" and saved["modelThinkingLevels"] == {"vendor/m1": "high"}

        await c.call("set_model", provider="vendor", modelId="m2.5")
        assert (await c.get_state())["thinkingLevel"] == "high"  # no override for m2.5: the level stays
        await c.call("set_thinking_level", level="low", persist=True)
        saved = json.loads(settings_file.read_text())
        assert saved["modelThinkingLevels"] == {"vendor/m1": "high", "vendor/m2.5": "low"}

        await c.call("set_model", provider="vendor", modelId="m1")
        assert (await c.get_state())["thinkingLevel"] == "high"  # m1's own level came back
        await c.call("set_model", provider="vendor", modelId="m2.5")
        assert (await c.get_state())["thinkingLevel"] == "low"
        # without persist nothing is saved
        await c.call("set_thinking_level", level="minimal")
        assert json.loads(settings_file.read_text())["modelThinkingLevels"]["vendor/m2.5"] == "low"

    # a new host with m1 starts at m1's level, not at defaultThinkingLevel ("low", the last persisted)
    async with start_host("--model", "vendor/m1", base=tmp_path) as host:
        assert (await host.client.get_state())["thinkingLevel"] == "high"
    async with start_host("--model", "vendor/m1", "--thinking", "minimal", base=tmp_path) as host:
        assert (await host.client.get_state())["thinkingLevel"] == "minimal"  # the command line wins
