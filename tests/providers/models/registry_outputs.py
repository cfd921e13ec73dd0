"""The model commands' answers for a rich models.json, as JSONL: a before/after check for changes to
the registry's internals (run it against two checkouts and compare the files byte for byte).

    python tests/providers/models/registry_outputs.py OUT.jsonl

The scenario: built-in providers with keys, a models.json with a reroute, provider and model
``compat``, ``modelOverrides`` (cost, headers, compat, thinkingLevelMap), custom providers with
headers and duplicate ids, then get_available_models, get_state, set_model, cycle_model both ways,
refresh_models and a ``--model`` resolution at startup. Values that differ per run (session ids,
paths, timestamps) are replaced by their key name; each run's lines are sorted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

MODELS_JSON: dict[str, Any] = {
    "providers": {
        "anthropic": {
            "baseUrl": "https://proxy.example/anthropic",
            "headers": {"X-Team": "core"},
            "compat": {"supportsStore": False},
            "modelOverrides": {
                "claude-sonnet-4-5": {
                    "name": "Sonnet (proxied)",
                    "cost": {"input": 9},
                    "headers": {"X-Model": "s45"},
                    "compat": {"extra": {"nested": [1, 2]}},
                    "thinkingLevelMap": {"low": "minimal"},
                    "notOverridable": True,
                },
                "no-such-model": {"name": "ignored"},
            },
        },
        "openai": {"compat": {"supportsDeveloperRole": False}},
        "local": {
            "baseUrl": "http://localhost:9/v1",
            "api": "openai-completions",
            "apiKey": "local-key",
            "headers": {"X-Local": "$LOCAL_HEADER"},
            "compat": {"supportsReasoningEffort": False, "deep": {"a": {"b": [1]}}},
            "models": [
                {"id": "qwen", "reasoning": True, "input": ["text", "image"], "cost": {"input": 1},
                 "compat": {"deep": {"c": 2}}, "headers": {"X-M": "1"}, "samplingParams": {"temperature": 0.2}},
                {"id": "claude-sonnet-4-5", "name": "Shadow", "contextWindow": 1000, "maxTokens": 10},
                {"id": "qwen", "name": "qwen again (replaces the first)"},
                {"id": "extra/with-slash", "thinkingLevelMap": {"high": "max"}},
            ],
            "modelOverrides": {"extra/with-slash": {"maxTokens": 77, "input": ["text"]}},
        },
        "bad": {"models": [{"id": 3}]},
    }
}

COMMANDS: list[dict[str, Any]] = [
    {"type": "get_available_models"},
    {"type": "get_state"},
    {"type": "set_model", "provider": "local", "modelId": "qwen"},
    {"type": "get_state"},
    {"type": "cycle_model"},
    {"type": "cycle_model"},
    {"type": "cycle_model", "direction": "backward"},
    {"type": "set_model", "provider": "anthropic", "modelId": "claude-sonnet-4-5"},
    {"type": "set_model", "provider": "local", "modelId": "extra/with-slash"},
    {"type": "set_model", "provider": "nope", "modelId": "x"},
    {"type": "refresh_models"},
    {"type": "get_available_models"},
    {"type": "get_state"},
]
VOLATILE = {"sessionId", "sessionLocation", "sessionFile", "timestamp", "cwd", "id_", "sessionName"}


def _scrub(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: (k if k in VOLATILE else _scrub(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_scrub(v) for v in node]
    return node


def run(args: list[str], root: Path) -> list[str]:
    """Every stdout line of one host run over :data:`COMMANDS`, volatile values scrubbed."""
    agent, work = root / "agent", root / "work"
    agent.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    (agent / "models.json").write_text(json.dumps(MODELS_JSON))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_") and not k.endswith("_API_KEY")}
    env.update(ATOMIC_CODING_AGENT_DIR=str(agent), ANTHROPIC_API_KEY="sk-ant-test", OPENAI_API_KEY="sk-oai-test",
               LOCAL_HEADER="hdr")
    stdin = "".join(json.dumps({**c, "id": f"c{i}"}) + "\n" for i, c in enumerate(COMMANDS))
    proc = subprocess.run([sys.executable, "-m", "atomic_host", "--mode", "rpc", *args], input=stdin.encode(),
                          capture_output=True, env=env, cwd=work, timeout=120, check=False)
    # sorted: refresh_models runs in the concurrent lane, so its place among the lines may vary
    return sorted(json.dumps(_scrub(json.loads(line))) for line in proc.stdout.decode().splitlines())


SCENARIOS: list[list[str]] = [
    [],
    ["--model", "local/qwen:high"],
    ["--model", "claude-sonnet-4-5"],
    ["--provider", "local", "--model", "extra/with-slash"],
    ["--provider", "local"],
    ["--models", "local/*,anthropic/claude-sonnet*"],
]


def main() -> None:
    out = Path(sys.argv[1])
    lines: list[str] = []
    for args in SCENARIOS:
        with tempfile.TemporaryDirectory(prefix="atomic-regout-") as tmp:
            lines.append(json.dumps({"scenario": args}))
            lines.extend(run(args, Path(tmp)))
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
