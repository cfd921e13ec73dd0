"""Stored credentials through the real ``atomic --mode rpc``: ``logout_provider`` clears an OAuth
record (revoking it at the local OAuth server when a revoke URL is configured),
``save_provider_credential`` stores an API key that the next request uses and that is masked
everywhere, and ``login_provider`` for a key-only provider asks for the key with an ``input``
request (answered, declined, or ended by ``cancel_login_provider``)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from oauth_helpers import (
    answer,
    anthropic_reply,
    assert_no_secret_written,
    auth_file,
    login_host,
    oauth_env,
    ui_request,
)
from oauth_server import OAuthServer

from atomic_host.testing_sse import SSEServer


async def test_logout_revokes_and_clears_the_oauth_credential(tmp_path: Path) -> None:
    github = "gho_stored_github_token_for_logout_01"
    copilot = "tid=copilot-token-for-logout-0123;exp=1"
    other = {"type": "api_key", "key": "sk-other-provider-key-0123456789"}
    stored = {"github-copilot": {"type": "oauth", "access": copilot, "refresh": github,
                                 "expires": int(time.time() * 1000) + 3_600_000},
              "openai": other}
    with OAuthServer() as oauth:
        env = {**oauth_env(oauth, "github-copilot"), "ATOMIC_OAUTH_GITHUB_COPILOT_REVOKE_URL": oauth.url("/revoke")}
        async with login_host(tmp_path, env=env, auth=stored) as host:
            c = host.client
            before = await c.call("get_available_models")
            assert any(m["provider"] == "github-copilot" for m in before["models"])
            data = await c.call("logout_provider", provider="github-copilot")
            assert data["provider"] == "github-copilot" and data["authStatus"] == {"configured": False}
            assert not any(m["provider"] == "github-copilot" for m in data["models"])
            # the server saw the GitHub token revoked, with the client id, before the record went
            [revoke] = oauth.seen("/revoke")
            assert revoke.body == {"token": github, "token_type_hint": "refresh_token",
                                   "client_id": "Iv1.b507a08c87ecfe98"}
            assert oauth.revoked == [github]
            assert auth_file(host) == {"openai": other}  # only that provider's record is gone
            after = await c.call("get_available_models")
            assert not any(m["provider"] == "github-copilot" for m in after["models"])
            assert {"id": "github-copilot", "name": "GitHub Copilot"} in after["oauthProviders"]  # can log in again

            # a revoke endpoint that fails does not keep the user logged in
            oauth.fail_next("/revoke", 500)
            await c.call("save_provider_credential", provider="github-copilot", credential=stored["github-copilot"])
            assert "github-copilot" in auth_file(host)
            again = await c.call("logout_provider", provider="github-copilot")
            assert again["authStatus"] == {"configured": False}
            assert "github-copilot" not in auth_file(host)
            assert_no_secret_written(host, tmp_path, [github, copilot, other["key"]])


async def test_logout_without_a_revoke_url_only_clears_the_record(tmp_path: Path) -> None:
    stored = {"anthropic": {"type": "oauth", "access": "sk-ant-oat01-logout-me-0123456789",
                            "refresh": "rt-logout-me-0123456789", "expires": int(time.time() * 1000) + 3_600_000}}
    with OAuthServer() as oauth:
        async with login_host(tmp_path, env=oauth_env(oauth, "anthropic"), auth=stored) as host:
            data = await host.client.call("logout_provider", provider="anthropic")
            assert data["authStatus"] == {"configured": False}
            assert oauth.requests == []  # Anthropic documents no revoke endpoint: nothing is sent
            assert auth_file(host) == {}


async def test_a_saved_api_key_is_stored_private_used_next_and_masked_everywhere(tmp_path: Path) -> None:
    key = "sk-ant-api03-saved-through-rpc-0123456789abcdef"
    with SSEServer() as llm:
        async with login_host(tmp_path, "--model", "anthropic/claude-sonnet-4-5",
                              models={"anthropic": {"baseUrl": llm.base_url}}) as host:
            c = host.client
            bad = await c.request({"type": "save_provider_credential", "provider": "anthropic",
                                   "credential": {"type": "api_key", "key": ""}})
            assert bad["success"] is False and bad["error"] == "Invalid credential: api_key needs a non-empty key"
            unknown = await c.request({"type": "save_provider_credential", "provider": "nope",
                                       "credential": {"type": "api_key", "key": key}})
            assert unknown["success"] is False and unknown["error"] == "Unknown provider: nope"
            assert not (host.agent_dir / "auth.json").exists()

            data = await c.call("save_provider_credential", provider="anthropic",
                                credential={"type": "api_key", "key": key})
            assert any(m["provider"] == "anthropic" for m in data["models"])
            assert auth_file(host) == {"anthropic": {"type": "api_key", "key": key}}  # mode 0600

            # the model echoes the key back (as a confused model or a proxy might)
            llm.enqueue(anthropic_reply(f"your key is {key}"))
            result = await c.prompt_and_wait("what is my key?")
            assert result.ok, result.error
            sent = llm.requests[0].headers
            assert sent["x-api-key"] == key and "authorization" not in sent
            assert "[REDACTED:" in result.text and key not in result.text
            state = await c.call("get_state")
            assert key not in json.dumps(state)
            assert_no_secret_written(host, tmp_path, [key])


async def test_login_for_a_key_only_provider_asks_for_the_key_with_an_input_request(tmp_path: Path) -> None:
    key = "sk-groq-entered-at-the-prompt-0123456789"
    async with login_host(tmp_path) as host:
        c = host.client
        login = asyncio.ensure_future(c.request({"type": "login_provider", "provider": "groq"}, timeout=30))
        ask = await ui_request(c, "input")
        assert "groq" in ask["title"].lower() and "API key" in ask["title"]
        await answer(c, ask, value=key)
        response = await login
        assert response["success"], response
        data = response["data"]
        assert data["provider"] == "groq" and data["cancelled"] is False and data["type"] == "api_key"
        assert data["authStatus"] == {"configured": True, "source": "stored", "label": "stored credential"}
        assert any(m["provider"] == "groq" for m in data["models"])
        assert auth_file(host) == {"groq": {"type": "api_key", "key": key}}

        # declined at the prompt: nothing changes
        after = len(c.events)
        login = asyncio.ensure_future(c.request({"type": "login_provider", "provider": "mistral"}, timeout=30))
        await answer(c, await ui_request(c, "input", after=after), cancelled=True)
        response = await login
        assert response["success"] and response["data"] == {"provider": "mistral", "cancelled": True}

        # ended by cancel_login_provider while the prompt is open
        after = len(c.events)
        login = asyncio.ensure_future(c.request({"type": "login_provider", "provider": "mistral",
                                                 "loginId": "key-1"}, timeout=30))
        await ui_request(c, "input", after=after)
        await c.call("cancel_login_provider", provider="mistral", loginId="key-1")
        response = await login
        assert response["success"] and response["data"] == {"provider": "mistral", "cancelled": True}
        assert auth_file(host) == {"groq": {"type": "api_key", "key": key}}
        assert_no_secret_written(host, tmp_path, [key])


async def test_login_for_an_unknown_provider_fails_at_once_without_asking_for_a_key(tmp_path: Path) -> None:
    """Found by the random-fields property test in CI: the host asked for a key it could never
    store and the command stayed unanswered until the client replied to the dialog."""
    async with login_host(tmp_path) as host:
        c = host.client
        n0 = len(c.events)
        for fields in ({}, {"apiKey": "sk-some-key-0123456789"}):
            response = await asyncio.wait_for(
                c.request({"type": "login_provider", "provider": "no-such-provider", **fields}), 5
            )
            assert response["success"] is False and response["error"] == "Unknown provider: no-such-provider"
        assert not [e for e in c.events[n0:] if e.get("type") == "extension_ui_request"]
        assert not (host.agent_dir / "auth.json").exists()
