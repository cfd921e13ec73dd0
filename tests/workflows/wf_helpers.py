"""Helpers of the workflow tests: definitions on disk, waiting for runs, reading the faux log."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pg_helpers import Postgres, postgres_bin  # noqa: F401  (the PostgreSQL server moved to tests/pg_helpers.py)

from atomic_host import testing_sse as sse
from atomic_host.testing import FauxScript, read_jsonl, start_host

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


# --- SIGKILL mid stage 2, then recovery (SQLite and PostgreSQL) ---


async def _until(predicate: Any, timeout: float = 20) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError("condition not met")
        await asyncio.sleep(0.05)


async def crash_mid_stage_two(tmp_path: Path, settings: dict[str, Any], env: dict[str, str] | None = None) -> str:
    """Run plan-review until stage 2 is at the model, then SIGKILL the host; returns the run id."""
    async with start_host(base=tmp_path, settings=settings, env=env) as host:
        c = host.client
        host.faux.push("hello there")
        await c.prompt_and_wait("hi")
        host.faux.push("1. read 2. write", {"content": "never sent", "delayMs": 60000})
        await c.call("prompt", message="/workflow plan-review add a cache")
        await _until(lambda: calls_for(host.faux_log, "Review this plan"))
        (started,) = [e for e in c.events if e.get("type") == "workflow_run_update" and e["status"] == "pending"]
        runs = (await c.call("list_workflow_runs"))["runs"]
        assert [(r["runId"], r["status"]) for r in runs] == [(started["runId"], "running")]
        assert c.proc is not None
        c.proc.kill()  # SIGKILL: no shutdown hook runs
        await c.proc.wait()
        assert len(calls_for(host.faux_log, "Make a short plan")) == 1
        return started["runId"]


@contextmanager
def recovery_lock(agent_dir: Path, env: dict[str, str]) -> Iterator[None]:
    """Hold the lock a process takes to recover dead executors' runs (the plugin's sweep lock)."""
    url = env.get("DBOS_SYSTEM_DATABASE_URL")
    if url:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SELECT pg_advisory_lock(%s, 0)", (0x61746F6D,))
            yield
        return
    import fcntl
    import os

    directory = agent_dir / "workflows.leases"
    directory.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(directory / "recovery.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


async def recover_and_complete(tmp_path: Path, run_id: str, settings: dict[str, Any], env: dict[str, str]) -> None:
    script = FauxScript(tmp_path / "faux-2.jsonl")
    log = tmp_path / "faux-log-2.jsonl"
    env = {**env, "ATOMIC_FAUX_SCRIPT": str(script.path), "ATOMIC_FAUX_LOG": str(log)}
    script.push("risk: none")  # before the host: the run may be recovered as soon as it looks
    async with start_host("--continue", base=tmp_path, settings=settings, env=env) as host:
        c = host.client
        mark = len(c.events)
        with recovery_lock(tmp_path / "agent", env):  # while it is held, no process recovers anything
            runs = (await c.call("list_workflow_runs"))["runs"]
            assert [(r["runId"], r["status"]) for r in runs] == [(run_id, "crashed")]
            assert [r["runId"] for r in (await c.call("list_workflow_runs", status="crashed"))["runs"]] == [run_id]
            assert (await c.call("list_workflow_runs", status="running"))["runs"] == []
            detail = await c.call("get_workflow_run_summary", runId=run_id)
            stages = [(s["name"], s["status"]) for s in detail["stages"]]
            assert stages == [("plan", "completed"), ("review", "crashed")]
            assert detail["summary"].startswith("1/2 stages done; plan: 1. read 2. write")
            await asyncio.sleep(1.5)  # sweeps pass: the run stays where it is
            assert not calls_for(log, "Review")

        report = await c.call("start_pending_recovery", reason="workflow_stage_resume")
        assert report["resumed"] == 1
        assert any(run_id in n and 'stage 2/2 "review"' in n for n in report["notices"])
        await wait_run(c, "completed", after=mark)
        assert calls_for(log, "Make a short plan") == []  # stage 1 was not run again
        (review,) = calls_for(log, "Review this plan")
        assert user_texts(review)[0].endswith("1. read 2. write")  # its input came from the record
        again = await c.call("start_pending_recovery")
        assert again == report
        detail = await c.call("get_workflow_run_summary", runId=run_id)
        assert detail["status"] == "completed"
        assert [(s["name"], s["status"]) for s in detail["stages"]] == [("plan", "completed"), ("review", "completed")]
        ends = [e["message"] for e in c.events[mark:] if e.get("type") == "message_end"]
        final = [m for m in ends if m.get("role") == "custom"]
        assert len(final) == 1 and "risk: none" in final[0]["content"]  # once
        host.assert_protocol_lines()
    async with start_host("--continue", base=tmp_path, settings=settings, env=env) as host:
        runs = (await host.client.call("list_workflow_runs"))["runs"]
        assert [(r["runId"], r["status"]) for r in runs] == [(run_id, "completed")]  # durable, not just live
        assert (await host.client.call("start_pending_recovery"))["notices"] == []


class Boom:
    """Unpickling this runs ``os.system`` (touches a marker file): a crafted workflow record."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        import os

        return (os.system, (f"touch {self.marker}",))


def pickled(marker: Path) -> str:
    """DBOS's pickle format (base64) of a :class:`Boom`."""
    import base64
    import pickle

    return base64.b64encode(pickle.dumps(Boom(marker))).decode()
