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
