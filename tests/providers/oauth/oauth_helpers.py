"""Driving a login from the client side: wait for the host's ``oauth_*`` UI requests, answer them,
act as the user's browser, and check that no secret reached anything the host wrote."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from oauth_server import OAuthServer

from atomic_host.client import RpcClient
from atomic_host.testing import Host, start_host
from atomic_host.testing_sse import anthropic_frames


def oauth_env(oauth: OAuthServer, provider: str) -> dict[str, str]:
    """``ATOMIC_OAUTH_<PROVIDER>_*`` pointing every endpoint of ``provider`` at the test server."""
    prefix = f"ATOMIC_OAUTH_{provider.upper().replace('-', '_')}_"
    keys = {
        "github-copilot": {"DEVICE_CODE_URL": "/device/code", "ACCESS_TOKEN_URL": "/device/token",
                           "COPILOT_TOKEN_URL": "/copilot/token", "API_BASE_URL": ""},
        "openai-codex": {"AUTHORIZE_URL": "/authorize", "TOKEN_URL": "/token"},
        "anthropic": {"AUTHORIZE_URL": "/authorize", "TOKEN_URL": "/token"},
    }[provider]
    env = {prefix + key: oauth.url(path) for key, path in keys.items()}
    env[prefix + "MIN_POLL_INTERVAL"] = "0.05"
    env[prefix + "CALLBACK_PORT"] = "0"  # a free port: the redirect_uri in the authorize URL says which
    return env


@asynccontextmanager
async def login_host(tmp_path: Path, *args: str, env: dict[str, str] | None = None,
                     models: dict[str, Any] | None = None, auth: dict[str, Any] | None = None,
                     extension: str | None = None) -> AsyncIterator[Host]:
    """A host (faux provider, stderr to ``tmp_path/stderr.log``) with optional models.json, auth.json
    and an extension file written into its agent dir first."""
    agent = tmp_path / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    if models is not None:
        (agent / "models.json").write_text(json.dumps({"providers": models}))
    if auth is not None:
        (agent / "auth.json").write_text(json.dumps(auth))
        os.chmod(agent / "auth.json", 0o600)
    if extension is not None:
        (agent / "extensions").mkdir(exist_ok=True)
        (agent / "extensions" / "login_ext.py").write_text(extension)
    with (tmp_path / "stderr.log").open("wb") as err:
        async with start_host(*args, base=tmp_path, env=env, stderr=err.fileno(),
                              settings={"sessionSummary": {"enabled": False}}) as host:
            yield host


async def ui_request(client: RpcClient, method: str, after: int = 0, timeout: float = 20) -> dict[str, Any]:
    """The first ``extension_ui_request`` with ``method`` (event index >= ``after``)."""
    return await client.wait_for_event(
        lambda e: e.get("type") == "extension_ui_request" and e.get("method") == method, after=after, timeout=timeout
    )


async def answer(client: RpcClient, request: dict[str, Any], **fields: Any) -> None:
    """Send the ``extension_ui_response`` to ``request`` (``value=...`` or ``cancelled=True``)."""
    await client.send_raw(json.dumps({"type": "extension_ui_response", "id": request["id"], **fields}).encode() + b"\n")


def start_login(client: RpcClient, provider: str, **fields: Any) -> asyncio.Task[dict[str, Any]]:
    """``login_provider`` with ``authType:"oauth"`` as a task (it answers when the flow ends)."""
    command = {"type": "login_provider", "provider": provider, "authType": "oauth", **fields}
    return asyncio.ensure_future(client.request(command, timeout=60))


def browser_get(url: str) -> tuple[int, str]:
    """GET ``url`` following redirects, as the user's browser would: ``(status, body)``."""
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:  # the test's own servers
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def query_of(url: str) -> dict[str, str]:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))


def auth_file(host: Host) -> dict[str, Any]:
    """auth.json, after checking it is a regular file with mode 0600."""
    path = host.agent_dir / "auth.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600, oct(path.stat().st_mode)
    return json.loads(path.read_text())


def assert_no_secret_written(host: Host, tmp_path: Path, secrets: list[str]) -> None:
    """None of ``secrets`` is in a stdout line, stderr, or any file under the host's cwd and agent dir
    other than auth.json (sessions, settings, logs)."""
    secrets = [s for s in secrets if s]
    assert secrets
    places: dict[str, str] = {"stdout": "\n".join(host.client.lines)}
    stderr = tmp_path / "stderr.log"
    if stderr.exists():
        places["stderr"] = stderr.read_text(errors="replace")
    for root in (host.agent_dir, host.cwd):
        for path in root.rglob("*"):
            if path.is_file() and path.name != "auth.json" and not path.name.startswith(".auth.json"):
                places[str(path)] = path.read_text(errors="replace")
    for secret in secrets:
        for where, text in places.items():
            assert secret not in text, f"{secret[:12]}… found in {where}"


def anthropic_reply(text: str) -> list[str]:
    """A short Anthropic Messages stream that answers ``text``."""
    usage = {"input_tokens": 5, "output_tokens": 2}
    return anthropic_frames([
        {"type": "message_start", "message": {"id": "m1", "role": "assistant", "content": [], "usage": usage}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}},
        {"type": "message_stop"},
    ])
