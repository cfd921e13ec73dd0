"""A login declared by an extension through the provider hook, through the real ``atomic --mode rpc``:
a local extension file (``<agent dir>/extensions/``) registers a provider with its own
``OAuthLogin``; it is listed in ``oauthProviders``, ``login_provider`` runs its flow over the
extension UI sub-protocol, requests carry what its ``request_auth`` says, its ``refresh`` runs
against the local OAuth server before the token expires, and ``logout_provider`` calls its
``revoke``; ``providerAuthStatuses`` follows each step."""

from __future__ import annotations

from pathlib import Path

from oauth_helpers import answer, assert_no_secret_written, auth_file, login_host, start_login, ui_request
from oauth_server import OAuthServer

from atomic_host.testing_sse import SSEServer, openai_chat_frames

EXTENSION = '''
"""Acme SSO: a provider with its own sign-in."""
import os
import time

import httpx

from atomic_host import hookimpl
from atomic_host.contract.providers import LoginCancelled, OAuthLogin, ProviderInfo


class AcmeFlow:
    async def login(self, ui, endpoints):
        ui.auth_url("https://sso.acme.example/device", "Sign in, then type the one-time code shown")
        code = await ui.prompt("One-time code:", placeholder="123-456")
        if not code.strip():
            raise LoginCancelled
        ui.progress("Checking the code...")
        # the code was issued as a refresh token: trade it for the first access token
        return await self.refresh({"refresh": code.strip()}, endpoints)

    async def refresh(self, credential, endpoints):
        async with httpx.AsyncClient() as client:
            resp = await client.post(endpoints["tokenUrl"], data={"grant_type": "refresh_token",
                                                                  "refresh_token": credential["refresh"]})
        resp.raise_for_status()
        data = resp.json()
        # expires in 60 s: inside the host's refresh margin, so each request refreshes first
        return {"access": data["access_token"], "refresh": data["refresh_token"],
                "expires": int(time.time() * 1000) + 60_000, "tenant": "acme-tenant-7"}

    def request_auth(self, credential):
        return {"apiKey": credential["access"], "headers": {"X-Acme-Tenant": credential["tenant"]}}

    async def revoke(self, credential, endpoints):
        async with httpx.AsyncClient() as client:
            await client.post(endpoints["revokeUrl"], data={"token": credential["refresh"]})


@hookimpl
def register_providers(register):
    base = os.environ["ACME_BASE_URL"]
    register(ProviderInfo(
        id="acme", name="Acme", api="openai-completions", base_url=base,
        models=[{"id": "acme-1", "name": "Acme 1", "api": "openai-completions", "provider": "acme",
                 "baseUrl": base, "reasoning": False, "input": ["text"],
                 "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                 "contextWindow": 32000, "maxTokens": 4000}],
        oauth=OAuthLogin(name="Acme SSO", flow=AcmeFlow(), login_label="Sign in with Acme"),
    ))
'''


def chat_reply(text: str) -> list[str]:
    return openai_chat_frames([
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
         "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}},
    ])


async def test_an_extension_declares_a_login_that_works_end_to_end(tmp_path: Path) -> None:
    code = "rt-one-time-code-0123456789"
    with OAuthServer(access_prefix="acme-at-") as oauth, SSEServer() as llm:
        oauth.add_refresh(code)
        env = {"ACME_BASE_URL": llm.base_url, "ATOMIC_OAUTH_ACME_TOKEN_URL": oauth.url("/token"),
               "ATOMIC_OAUTH_ACME_REVOKE_URL": oauth.url("/revoke")}
        async with login_host(tmp_path, env=env, extension=EXTENSION) as host:
            c = host.client
            catalog = await c.call("get_available_models")
            assert {"id": "acme", "name": "Acme SSO", "loginLabel": "Sign in with Acme"} in catalog["oauthProviders"]
            assert {"id": "acme", "name": "Acme"} in catalog["customAuthProviders"]
            assert {"provider": "acme", "status": {"configured": False}} in catalog["providerAuthStatuses"]
            assert not any(m["provider"] == "acme" for m in catalog["models"])

            login = start_login(c, "acme", loginId="acme-login")
            auth = await ui_request(c, "oauth_auth")
            assert auth["provider"] == "acme" and auth["loginId"] == "acme-login"
            assert auth["info"] == {"url": "https://sso.acme.example/device",
                                    "instructions": "Sign in, then type the one-time code shown"}
            prompt = await ui_request(c, "oauth_prompt")
            assert prompt["loginId"] == "acme-login"
            assert prompt["prompt"] == {"message": "One-time code:", "placeholder": "123-456"}
            await answer(c, prompt, value=code)
            progress = await ui_request(c, "oauth_progress")
            assert progress["message"] == "Checking the code..." and progress["loginId"] == "acme-login"
            response = await login
            assert response["success"], response
            data = response["data"]
            assert data["provider"] == "acme" and data["cancelled"] is False
            assert any(m["provider"] == "acme" for m in data["models"])
            assert not any(s["provider"] == "acme" for s in data["providerAuthStatuses"])  # stored now
            record = auth_file(host)["acme"]
            assert record["type"] == "oauth" and record["access"] == oauth.issued_access[0]
            assert record["tenant"] == "acme-tenant-7"

            # a request: the flow's refresh runs first (the token has < 5 min left), then its auth
            await c.call("set_model", provider="acme", modelId="acme-1")
            llm.enqueue(chat_reply("hello from acme"))
            result = await c.prompt_and_wait("hi")
            assert result.ok, result.error
            assert len(oauth.seen("/token")) == 2
            [request] = llm.requests
            assert request.headers["authorization"] == f"Bearer {oauth.issued_access[1]}"
            assert request.headers["x-acme-tenant"] == "acme-tenant-7"
            assert auth_file(host)["acme"]["access"] == oauth.issued_access[1]

            # logout: the flow's revoke reaches the server, the record goes, the status follows
            out = await c.call("logout_provider", provider="acme")
            assert out["authStatus"] == {"configured": False}
            assert oauth.revoked == [oauth.issued_refresh[-1]]
            assert "acme" not in auth_file(host)
            after = await c.call("get_available_models")
            assert {"provider": "acme", "status": {"configured": False}} in after["providerAuthStatuses"]
            assert not any(m["provider"] == "acme" for m in after["models"])
            assert_no_secret_written(host, tmp_path, [code, *oauth.issued_access, *oauth.issued_refresh])


async def test_an_extension_login_that_raises_fails_cleanly_and_one_declined_is_cancelled(tmp_path: Path) -> None:
    with OAuthServer(access_prefix="acme-at-") as oauth, SSEServer() as llm:
        env = {"ACME_BASE_URL": llm.base_url, "ATOMIC_OAUTH_ACME_TOKEN_URL": oauth.url("/token"),
               "ATOMIC_OAUTH_ACME_REVOKE_URL": oauth.url("/revoke")}
        async with login_host(tmp_path, env=env, extension=EXTENSION) as host:
            c = host.client
            login = start_login(c, "acme")
            await answer(c, await ui_request(c, "oauth_prompt"), value="rt-never-issued-0123")
            response = await login
            assert response["success"] is False and "400 Bad Request" in response["error"], response
            assert not (host.agent_dir / "auth.json").exists()

            after = len(c.events)
            login = start_login(c, "acme")
            await answer(c, await ui_request(c, "oauth_prompt", after=after), value="  ")
            response = await login
            assert response["success"] and response["data"] == {"provider": "acme", "cancelled": True}
            status = await c.call("get_available_models")
            assert {"provider": "acme", "status": {"configured": False}} in status["providerAuthStatuses"]


async def test_an_extension_flow_whose_request_auth_raises_fails_only_that_prompt(tmp_path: Path) -> None:
    auth_line = '''return {"apiKey": credential["access"], "headers": {"X-Acme-Tenant": credential["tenant"]}}'''
    broken = EXTENSION.replace(auth_line, '''raise RuntimeError("no tenant configured")''')
    assert broken != EXTENSION
    record = {"type": "oauth", "access": "acme-at-stored-0123456789", "refresh": "rt-acme-stored-0123456789",
              "expires": 4_102_444_800_000, "tenant": "t"}
    with SSEServer() as llm:
        async with login_host(tmp_path, env={"ACME_BASE_URL": llm.base_url}, extension=broken,
                              auth={"acme": record}) as host:
            c = host.client
            await c.call("set_model", provider="acme", modelId="acme-1")
            result = await c.prompt_and_wait("hi")
            assert result.error == "The acme OAuth login cannot authorize the request: no tenant configured"
            assert llm.requests == []
            assert (await c.call("get_state"))["model"]["id"] == "acme-1"  # the host carries on
