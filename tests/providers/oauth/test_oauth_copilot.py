"""GitHub Copilot sign-in through the real ``atomic --mode rpc``: the device flow against a local
OAuth server (pending, slow_down, denied, expired), the Copilot token exchange, cancel mid-flow,
and the token then used (and refreshed on a 401) by a real request to a local model server."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

from oauth_helpers import (
    answer,
    assert_no_secret_written,
    auth_file,
    login_host,
    oauth_env,
    start_login,
    ui_request,
)
from oauth_server import OAuthServer

from atomic_host.testing_sse import Reply, SSEServer, openai_chat_frames

COPILOT_CLIENT_ID = "Iv1.b507a08c87ecfe98"


def chat_reply(text: str) -> list[str]:
    return openai_chat_frames([
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
         "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}},
    ])


async def test_device_flow_polls_through_pending_and_slow_down_then_stores_the_copilot_token(tmp_path: Path) -> None:
    polls = ["authorization_pending", ("slow_down", 0.2), "authorization_pending", "ok"]
    with OAuthServer(device_polls=polls) as oauth:
        async with login_host(tmp_path, env=oauth_env(oauth, "github-copilot")) as host:
            c = host.client
            login = start_login(c, "github-copilot", loginId="L1")
            enterprise = await ui_request(c, "oauth_prompt")
            assert enterprise["provider"] == "github-copilot" and enterprise["loginId"] == "L1"
            assert "Enterprise" in enterprise["prompt"]["message"]
            await answer(c, enterprise, value="")
            device = await ui_request(c, "oauth_device_code")
            assert device["info"]["userCode"] == "WDJB-MJHT"
            assert device["info"]["verificationUri"] == "https://github.example/login/device"
            assert device["loginId"] == "L1"
            response = await login
            assert response["success"], response
            data = response["data"]
            assert data["provider"] == "github-copilot" and data["cancelled"] is False
            assert {m["provider"] for m in data["models"]} >= {"github-copilot"}
            assert {"id": "github-copilot", "name": "GitHub Copilot"} in data["oauthProviders"]

            polls = oauth.seen("/device/token")
            assert len(polls) == 4
            assert all(p.body["grant_type"] == "urn:ietf:params:oauth:grant-type:device_code" for p in polls)
            assert {p.body["client_id"] for p in polls} == {COPILOT_CLIENT_ID}
            # slow_down's interval (0.2 s) is honoured before the next poll
            gaps = [b.at - a.at for a, b in itertools.pairwise(polls)]
            assert gaps[1] >= 0.2 and gaps[2] >= 0.2, gaps
            [exchange] = oauth.seen("/copilot/token")
            assert exchange.headers["authorization"] == f"Bearer {oauth.github_tokens[0]}"
            assert exchange.headers["copilot-integration-id"] == "vscode-chat"

            record = auth_file(host)["github-copilot"]
            assert record["type"] == "oauth"
            assert record["access"] == oauth.issued_access[-1] and record["refresh"] == oauth.github_tokens[0]
            # then each catalog model's policy is accepted with the new Copilot token, as pi does
            policies = [r for r in oauth.requests if r.path.startswith("/models/")]
            ids = {m["id"] for m in data["models"] if m["provider"] == "github-copilot"}
            assert {r.path for r in policies} == {f"/models/{i}/policy" for i in ids}
            for r in policies:
                assert r.method == "POST" and r.json and r.body == {"state": "enabled"}
                assert r.headers["authorization"] == f"Bearer {record['access']}"
                assert r.headers["openai-intent"] == "chat-policy"
                assert r.headers["copilot-integration-id"] == "vscode-chat"
            assert min(r.at for r in policies) > exchange.at  # after the token exchange
            state = await c.call("get_available_models")
            assert any(m["provider"] == "github-copilot" for m in state["models"])
            assert_no_secret_written(host, tmp_path, oauth.all_tokens())


async def test_denied_and_expired_device_codes_fail_the_login_and_store_nothing(tmp_path: Path) -> None:
    for index, (polls, expires_in, error) in enumerate([
        (["authorization_pending", "access_denied"], 900, "Device flow failed: access_denied"),
        (["authorization_pending", "expired_token"], 900, "Device flow failed: expired_token"),
        (["authorization_pending"], 0.4, "Device flow timed out"),
    ]):
        with OAuthServer(device_polls=polls, device_expires_in=expires_in) as oauth:
            async with login_host(tmp_path / str(index), env=oauth_env(oauth, "github-copilot")) as host:
                c = host.client
                login = start_login(c, "github-copilot")
                await answer(c, await ui_request(c, "oauth_prompt"), value="")
                response = await login
                assert response["success"] is False
                assert response["error"].startswith(error), response
                assert not (host.agent_dir / "auth.json").exists()
                status = await c.call("get_available_models")
                assert not any(m["provider"] == "github-copilot" for m in status["models"])


async def test_cancel_mid_flow_ends_only_that_login_and_keeps_the_previous_credential(tmp_path: Path) -> None:
    previous = {"github-copilot": {"type": "api_key", "key": "ghp-previous-credential-123"}}
    with OAuthServer(device_polls=["authorization_pending"]) as oauth:
        async with login_host(tmp_path, env=oauth_env(oauth, "github-copilot"), auth=previous) as host:
            c = host.client
            login = start_login(c, "github-copilot", loginId="active")
            await answer(c, await ui_request(c, "oauth_prompt"), value="")
            await ui_request(c, "oauth_device_code")
            while len(oauth.seen("/device/token")) < 2:  # polling is under way
                await asyncio.sleep(0.05)
            busy = await c.request({"type": "login_provider", "provider": "github-copilot", "authType": "oauth"})
            assert busy["success"] is False and busy["error"] == "Login already in progress: github-copilot"
            stale = await c.request({"type": "cancel_login_provider", "provider": "github-copilot", "loginId": "old"})
            assert stale["success"] is True
            await asyncio.sleep(0.2)
            assert not login.done()
            cancel = await c.request({"type": "cancel_login_provider", "provider": "github-copilot",
                                      "loginId": "active"})
            assert cancel == {"id": cancel["id"], "type": "response", "command": "cancel_login_provider",
                              "success": True}
            response = await login
            assert response["success"] and response["data"] == {"provider": "github-copilot", "cancelled": True}
            polls = len(oauth.seen("/device/token"))
            await asyncio.sleep(0.3)
            assert len(oauth.seen("/device/token")) == polls  # the polling stopped with the login
            assert auth_file(host) == previous


async def test_the_copilot_token_is_sent_and_refreshed_once_on_a_401(tmp_path: Path) -> None:
    with OAuthServer() as oauth, SSEServer() as llm:
        github = "gho_stored_github_token_0123456789"
        oauth.add_github_token(github)
        stored = {"github-copilot": {"type": "oauth", "access": "tid=stale-copilot-token-000;exp=1",
                                     "refresh": github, "expires": 4_102_444_800_000}}
        models = {"github-copilot": {"baseUrl": llm.base_url}}
        args = ("--model", "github-copilot/gpt-4.1")
        async with login_host(tmp_path, *args, env=oauth_env(oauth, "github-copilot"), models=models,
                              auth=stored) as host:
            llm.enqueue(Reply(status=401, body='{"error":{"message":"token expired"}}'))
            llm.enqueue(chat_reply("hello from copilot"))
            result = await host.client.prompt_and_wait("hi")
            assert result.ok, result.error
            assert "hello from copilot" in result.text
            first, second = llm.requests
            assert first.headers["authorization"] == "Bearer tid=stale-copilot-token-000;exp=1"
            [exchange] = oauth.seen("/copilot/token")
            assert exchange.headers["authorization"] == f"Bearer {github}"
            assert second.headers["authorization"] == f"Bearer {oauth.issued_access[-1]}"
            assert second.headers["copilot-integration-id"] == "vscode-chat"
            assert auth_file(host)["github-copilot"]["access"] == oauth.issued_access[-1]

            # a second 401 right after the refresh is the model's answer: no endless refreshing
            llm.enqueue(Reply(status=401, body='{"error":{"message":"no seat"}}'))
            llm.enqueue(Reply(status=401, body='{"error":{"message":"still no seat"}}'))
            failed = await host.client.prompt_and_wait("again")
            assert failed.error and failed.error.startswith("401"), failed.error
            assert len(oauth.seen("/copilot/token")) == 2
            assert len(llm.requests) == 4
            assert_no_secret_written(host, tmp_path, [github, *oauth.issued_access])
