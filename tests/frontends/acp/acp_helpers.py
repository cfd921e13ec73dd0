"""Helpers for the ACP tests: a real ``atomic --mode acp`` subprocess driven by the SDK's own
client side (``acp.spawn_agent_process`` → ``ClientSideConnection``), with the faux provider."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    Implementation,
    InitializeResponse,
    RequestPermissionResponse,
)

from atomic_host.testing import FauxScript, host_env


@dataclass
class RecordingClient:
    """The editor side: records every notification; answers permission requests from a script."""

    updates: list[tuple[str, Any]] = field(default_factory=list)
    permission_requests: list[Any] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    """Option ids to pick, in order (``"cancelled"`` answers the request as cancelled)."""
    ext: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    hold_permission: asyncio.Event | None = None
    """When set, permission requests wait for this event before answering."""
    permission_asked: asyncio.Event = field(default_factory=asyncio.Event)

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **_: Any
    ) -> RequestPermissionResponse:
        self.permission_requests.append({"session_id": session_id, "tool_call": tool_call, "options": options})
        self.permission_asked.set()
        if self.hold_permission is not None:
            await self.hold_permission.wait()
        choice = self.answers.pop(0) if self.answers else "allow_once"
        if choice == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=choice))

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        self.ext.append((method, params))

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    def kinds(self, session_id: str | None = None) -> list[str]:
        return [u.session_update for sid, u in self.updates if session_id is None or sid == session_id]

    def of(self, kind: str, session_id: str | None = None) -> list[Any]:
        return [u for sid, u in self.updates if u.session_update == kind and (session_id is None or sid == session_id)]

    def text(self, kind: str = "agent_message_chunk", session_id: str | None = None) -> str:
        return "".join(u.content.text for u in self.of(kind, session_id) if getattr(u.content, "type", "") == "text")

    def clear(self) -> None:
        self.updates.clear()
        self.permission_requests.clear()
        self.ext.clear()


@dataclass
class AcpHost:
    conn: Any
    client: RecordingClient
    process: Any
    faux: FauxScript
    cwd: Path
    agent_dir: Path
    stderr_path: Path
    wire: list[dict[str, Any]] = field(default_factory=list)
    """Every message the SDK parsed from the host's stdout."""
    init: InitializeResponse | None = None

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    async def new_session(self, **kw: Any) -> Any:
        return await self.conn.new_session(cwd=str(self.cwd), mcp_servers=kw.pop("mcp_servers", []), **kw)


async def wait_for(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (value := check()):
        if loop.time() > deadline:
            raise TimeoutError("condition not met in time")
        await asyncio.sleep(0.02)
    return value


@asynccontextmanager
async def acp_host(
    base: Path,
    *args: str,
    settings: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    client: RecordingClient | None = None,
    initialize: bool = True,
) -> AsyncIterator[AcpHost]:
    """Start ``atomic --mode acp --provider faux`` under ``base`` (agent dir, work dir, faux script)."""
    agent_dir, work = base / "agent", base / "work"
    agent_dir.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    if settings is not None:
        (agent_dir / "settings.json").write_text(json.dumps(settings))
    faux = FauxScript(base / "faux.jsonl")
    faux.path.write_text("")  # a host started again under the same base starts a new script
    stderr_path = base / "stderr.txt"
    client = client or RecordingClient()
    wire: list[dict[str, Any]] = []

    def observe(event: StreamEvent) -> None:
        if event.direction == StreamDirection.INCOMING:
            wire.append(event.message)

    argv = [*args] if "--provider" in args or "--model" in args else ["--provider", "faux", *args]
    with stderr_path.open("wb") as err:
        async with spawn_agent_process(
            lambda _agent: client,
            sys.executable,
            "-m",
            "atomic_host",
            "--mode",
            "acp",
            *argv,
            env=host_env(agent_dir, faux.path, base / "faux-log.jsonl", env),
            cwd=work,
            transport_kwargs={"stderr": err, "limit": 50 * 1024 * 1024},
            observers=[observe],
        ) as (conn, process):
            host = AcpHost(conn, client, process, faux, work, agent_dir, stderr_path, wire)
            if initialize:
                host.init = await asyncio.wait_for(
                    conn.initialize(
                        protocol_version=PROTOCOL_VERSION,
                        client_capabilities=ClientCapabilities(),
                        client_info=Implementation(name="atomic-tests", version="0"),
                    ),
                    30,
                )
            yield host


def chat_chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    """One Chat Completions stream chunk."""
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m1",
        "choices": choices,
        **extra,
    }
