"""Helpers of the workflow tests: definitions on disk, waiting for runs, reading the faux log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atomic_host.testing import read_jsonl

QUIET: dict[str, Any] = {"sessionSummary": {"enabled": False}, "retry": {"enabled": False}}

TWO_STAGES = """\
description = "Plan, then review the plan"
[[stages]]
name = "plan"
prompt = "Make a short plan for: {input}"
[[stages]]
name = "review"
prompt = "Review this plan and list its risks:\\n{stages.plan.output}"
"""


def write_workflow(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.toml"
    path.write_text(text)
    return path


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e.get("type") == kind]


def notices(events: list[dict[str, Any]]) -> list[str]:
    return [
        e.get("message", "") for e in events if e.get("type") == "extension_ui_request" and e.get("method") == "notify"
    ]


async def wait_run(client: Any, status: str = "completed", timeout: float = 30, after: int = 0) -> dict[str, Any]:
    """The ``workflow_run_update`` that reports the run ended with ``status``."""
    ended = await client.wait_for_event(
        lambda e: e.get("type") == "workflow_run_update" and e.get("status") in ("completed", "failed", "cancelled"),
        timeout=timeout,
        after=after,
    )
    assert ended["status"] == status, ended
    return ended


def user_texts(call: dict[str, Any]) -> list[str]:
    """The user texts of one faux call's context."""
    texts = []
    for m in call["context"]["messages"]:
        if m.get("role") != "user":
            continue
        content = m.get("content")
        if isinstance(content, str):
            texts.append(content)
        else:
            texts += [b.get("text", "") for b in content if b.get("type") == "text"]
    return texts


def calls_for(log: Path, needle: str) -> list[dict[str, Any]]:
    """Faux calls whose first user text contains ``needle``."""
    if not log.exists():
        return []
    return [c for c in read_jsonl(log) if any(needle in t for t in user_texts(c)[:1])]


def header_of(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        return json.loads(fh.readline())


TESTS = Path(__file__).resolve().parent.parent
ANTHROPIC = TESTS / "vendor_conformance" / "fixtures" / "anthropic"


def _load_sse_server() -> Any:
    import importlib.util
    import sys

    name = "sse_server"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, TESTS / "providers" / "sse_server.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


sse = _load_sse_server()


def answer_reply() -> Any:
    data = (ANTHROPIC / "answer.sse").read_bytes()
    return sse.Reply(chunks=[data[i : i + 64] for i in range(0, len(data), 64)])


def error_reply(status: int, name: str) -> Any:
    return sse.Reply(status=status, body=(ANTHROPIC / name).read_text(encoding="utf-8"))


def two_providers(agent_dir: Path, base_url: str) -> None:
    """models.json with providers ``main`` (m-main) and ``backup`` (m-backup) at one SSE server."""

    def provider(model_id: str) -> dict[str, Any]:
        model = {"id": model_id, "contextWindow": 200000, "maxTokens": 32000, "cost": {"input": 1, "output": 2}}
        return {"baseUrl": base_url, "api": "anthropic-messages", "apiKey": "fixture-key-123", "models": [model]}

    agent_dir.mkdir(parents=True, exist_ok=True)
    providers = {"main": provider("m-main"), "backup": provider("m-backup")}
    (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
