"""Meta-tests of issue 9: every hook is exercised by a real plugin file in a host test, and every
built-in plugin is listed, loaded like any plugin and blockable unless it is essential."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from suite_paths import TESTS

from atomic_host.contract.hookspecs import DISPATCH_RULES
from atomic_host.plugins.discovery import BUILTIN_PLUGINS, ESSENTIAL
from atomic_host.testing import start_host


def _sources_outside_unit_tests() -> dict[Path, str]:
    """Test sources that drive the real host (``tests/unit`` runs pieces in process: not counted).
    Plugin bodies often live in string literals, so escaped newlines are unescaped first."""
    return {
        p: p.read_text(encoding="utf-8").replace("\\n", "\n")
        for p in TESTS.rglob("*.py")
        if "unit" not in p.relative_to(TESTS).parts[:1]
    }


def test_every_hookspec_is_implemented_by_a_plugin_in_a_test_of_the_real_host() -> None:
    sources = _sources_outside_unit_tests()
    missing = []
    for hook in DISPATCH_RULES:
        implemented = re.compile(rf"@hookimpl[^\n]*\n\s*(async\s+)?def {hook}\(")
        if not any(implemented.search(text) for text in sources.values()):
            missing.append(hook)
    assert missing == [], f"hooks no host test implements in a plugin file: {missing}"


def _plugins_json(agent_dir: Path) -> tuple[dict[str, str], list[dict]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_") or k == "ATOMIC_PLAIN"}
    env["ATOMIC_CODING_AGENT_DIR"] = str(agent_dir)
    done = subprocess.run(
        [sys.executable, "-m", "atomic_host", "plugins", "--json"],
        capture_output=True, text=True, env=env, timeout=120, check=True,
    )  # fmt: skip
    statuses = {p["name"]: p["status"] for p in json.loads(done.stdout)["plugins"]}
    errors = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    return statuses, errors


def test_every_builtin_is_listed_and_blockable_unless_essential(tmp_path: Path) -> None:
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    statuses, _ = _plugins_json(agent_dir)
    assert all(statuses.get(name) == "loaded" for name in BUILTIN_PLUGINS), statuses
    assert set(BUILTIN_PLUGINS) <= set(statuses)
    (agent_dir / "settings.json").write_text(json.dumps({"disabledPlugins": list(BUILTIN_PLUGINS)}))
    statuses, errors = _plugins_json(agent_dir)
    for name in BUILTIN_PLUGINS:
        assert statuses[name] == ("loaded" if name in ESSENTIAL else "disabled"), (name, statuses[name])
    refused = {e["extensionPath"]: e["error"] for e in errors if e.get("event") == "disabledPlugins"}
    assert refused == {name: f"{name} is essential and cannot be disabled; it stays loaded" for name in ESSENTIAL}


async def test_a_host_with_every_optional_builtin_blocked_still_serves(tmp_path: Path) -> None:
    settings = {"disabledPlugins": [n for n in BUILTIN_PLUGINS if n not in ESSENTIAL]}
    # with the stores plugin blocked there is no session store: only --no-session can serve
    async with start_host("--no-session", base=tmp_path, settings=settings) as host:
        state = await host.client.get_state()
        assert state["sessionId"]
        host.faux.push("still answering")
        await host.client.prompt_and_wait("hi")
        assert (await host.client.get_last_assistant_text()).text == "still answering"
        assert [t["name"] for t in host.faux_calls()[0]["context"]["tools"]] == []
