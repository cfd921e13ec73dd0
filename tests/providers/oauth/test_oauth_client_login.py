"""The Python client's login flow (``RpcClient.login_provider(..., on_ui=...)``) through the real
host: the GitHub device flow answered by a handler, a pasted API key, and cancelling the call,
which sends ``cancel_login_provider`` for that login only."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from oauth_helpers import auth_file, login_host, oauth_env
from oauth_server import OAuthServer


async def test_the_device_flow_is_answered_by_the_login_handler(tmp_path: Path) -> None:
    with OAuthServer(device_polls=["authorization_pending", "ok"]) as oauth:
        async with login_host(tmp_path, env=oauth_env(oauth, "github-copilot")) as host:
            seen: list[tuple[str, Any]] = []

            def on_ui(request: Any) -> str | None:
                seen.append((request.method, request.login_id))
                if request.method == "oauth_device_code":
                    assert request.info["userCode"] == "WDJB-MJHT"
                return "" if request.method == "oauth_prompt" else None  # no GitHub Enterprise

            data = await host.client.login_provider("github-copilot", auth_type="oauth", on_ui=on_ui)
            assert data["provider"] == "github-copilot" and data["cancelled"] is False
            methods = [m for m, _ in seen]
            assert methods[:2] == ["oauth_prompt", "oauth_device_code"]
            assert len({login for _, login in seen}) == 1 and seen[0][1].startswith("login-")
            assert auth_file(host)["github-copilot"]["type"] == "oauth"


async def test_a_key_login_takes_the_key_from_the_ui_handler_and_a_credential_is_saved(tmp_path: Path) -> None:
    key = "sk-groq-from-the-handler-0123456789"
    async with login_host(tmp_path) as host:
        # the host asks for a key with a plain ``input`` dialog (no loginId): on_ui_request answers it
        host.client.on_ui_request = lambda request: key if request.title == "API key for Groq" else None
        data = await host.client.login_provider("groq", timeout=30)
        assert data["cancelled"] is False and data["type"] == "api_key"
        assert auth_file(host) == {"groq": {"type": "api_key", "key": key}}
        models = await host.client.save_provider_credential("mistral", {"type": "api_key", "key": "sk-mistral-0123"})
        assert any(m.provider == "mistral" for m in models.models)
        assert auth_file(host)["mistral"] == {"type": "api_key", "key": "sk-mistral-0123"}


async def test_cancelling_the_call_cancels_that_login(tmp_path: Path) -> None:
    previous = {"github-copilot": {"type": "api_key", "key": "ghp-previous-credential-123"}}
    with OAuthServer(device_polls=["authorization_pending"]) as oauth:
        async with login_host(tmp_path, env=oauth_env(oauth, "github-copilot"), auth=previous) as host:
            c = host.client
            login = asyncio.ensure_future(c.login_provider("github-copilot", auth_type="oauth", on_ui=lambda r: ""))
            while len(oauth.seen("/device/token")) < 2:  # polling is under way
                await asyncio.sleep(0.05)
            login.cancel()
            await asyncio.gather(login, return_exceptions=True)
            for _ in range(100):
                answered = [r for r in c.responses if r["command"] == "login_provider"]
                if answered:
                    break
                await asyncio.sleep(0.05)
            assert [r["success"] for r in c.responses if r["command"] == "cancel_login_provider"] == [True]
            assert answered[0]["data"] == {"provider": "github-copilot", "cancelled": True}
            polls = len(oauth.seen("/device/token"))
            await asyncio.sleep(0.3)
            assert len(oauth.seen("/device/token")) == polls  # the polling stopped with the login
            assert auth_file(host) == previous
