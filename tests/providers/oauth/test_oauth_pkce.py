"""ChatGPT and Anthropic sign-in through the real ``atomic --mode rpc``: authorization code with
PKCE against a local OAuth server, the browser redirect to the host's localhost callback server
(bad state ignored, denial fails the login), the pasted code, a token endpoint error, and the
tokens then used by a real request."""

from __future__ import annotations

import asyncio
from pathlib import Path

from oauth_helpers import (
    answer,
    anthropic_reply,
    assert_no_secret_written,
    auth_file,
    browser_get,
    login_host,
    oauth_env,
    query_of,
    start_login,
    ui_request,
)
from oauth_server import OAuthServer

from atomic_host.testing_sse import SSEServer

CODEX_CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann"
ANTHROPIC_CLIENT_ID = "9d1c250a-e61b-44d9-88ed-5944d1962f5e"


async def test_chatgpt_sign_in_with_the_browser_callback_ignores_a_bad_state(tmp_path: Path) -> None:
    with OAuthServer(account_id="acct-1234") as oauth:
        async with login_host(tmp_path, env=oauth_env(oauth, "openai-codex")) as host:
            c = host.client
            login = start_login(c, "openai-codex", loginId="chatgpt-1")
            auth = await ui_request(c, "oauth_auth")
            assert auth["provider"] == "openai-codex" and auth["loginId"] == "chatgpt-1"
            url = auth["info"]["url"]
            assert url.startswith(oauth.url("/authorize") + "?")
            q = query_of(url)
            assert q["client_id"] == CODEX_CLIENT_ID and q["response_type"] == "code"
            assert q["code_challenge_method"] == "S256" and len(q["code_challenge"]) == 43
            assert q["scope"] == "openid profile email offline_access"
            assert q["codex_cli_simplified_flow"] == "true" and q["originator"] == "pi"
            assert q["redirect_uri"].startswith("http://localhost:") and q["redirect_uri"].endswith("/auth/callback")
            manual = await ui_request(c, "oauth_manual_code")
            assert manual["loginId"] == "chatgpt-1"

            # a redirect that is not this login's (wrong state) is refused and does not end it
            forged = q["redirect_uri"].replace("localhost", "127.0.0.1") + "?code=attacker&state=wrong"
            status, page = await asyncio.to_thread(browser_get, forged)
            assert status == 400 and "State mismatch" in page
            wrong_path = q["redirect_uri"].replace("localhost", "127.0.0.1").replace("/auth/callback", "/x")
            assert (await asyncio.to_thread(browser_get, wrong_path))[0] == 404
            await asyncio.sleep(0.2)
            assert not login.done()

            # the user signs in: the server redirects the browser to the host's callback
            status, page = await asyncio.to_thread(browser_get, url)
            assert status == 200 and "Signed in" in page
            response = await login
            assert response["success"], response
            assert response["data"]["provider"] == "openai-codex" and response["data"]["cancelled"] is False
            await ui_request(c, "oauth_manual_code_cancel")  # the paste box is withdrawn

            [exchange] = oauth.seen("/token")
            assert exchange.body["grant_type"] == "authorization_code" and not exchange.json
            assert exchange.body["redirect_uri"] == q["redirect_uri"]
            record = auth_file(host)["openai-codex"]
            assert record["type"] == "oauth" and record["accountId"] == "acct-1234"
            assert record["access"] == oauth.issued_access[0] and record["refresh"] == oauth.issued_refresh[0]
            assert_no_secret_written(host, tmp_path, oauth.all_tokens())


async def test_a_denied_chatgpt_sign_in_fails_the_login(tmp_path: Path) -> None:
    with OAuthServer(account_id="acct-1") as oauth:
        async with login_host(tmp_path, env=oauth_env(oauth, "openai-codex")) as host:
            c = host.client
            login = start_login(c, "openai-codex")
            url = (await ui_request(c, "oauth_auth"))["info"]["url"]
            status, _page = await asyncio.to_thread(browser_get, url + "&deny=1")
            assert status == 400
            response = await login
            assert response["success"] is False
            assert response["error"] == "Authorization failed: access_denied: The user said no"
            assert not (host.agent_dir / "auth.json").exists()


async def test_anthropic_code_pasted_by_the_user_then_used_as_a_bearer_token(tmp_path: Path) -> None:
    with OAuthServer(access_prefix="sk-ant-oat01-") as oauth, SSEServer() as llm:
        env = oauth_env(oauth, "anthropic")
        models = {"anthropic": {"baseUrl": llm.base_url}}
        async with login_host(tmp_path, env=env, models=models) as host:
            c = host.client
            catalog = await c.call("get_available_models")
            assert {"id": "anthropic", "name": "Anthropic (Claude Pro/Max)", "usesCallbackServer": True} in (
                catalog["oauthProviders"])
            login = start_login(c, "anthropic")
            url = (await ui_request(c, "oauth_auth"))["info"]["url"]
            q = query_of(url)
            assert q["client_id"] == ANTHROPIC_CLIENT_ID and q["code"] == "true"
            assert q["redirect_uri"].endswith("/callback")
            assert "user:inference" in q["scope"].split()
            manual = await ui_request(c, "oauth_manual_code")
            # the browser is elsewhere: the page shows "code#state" and the user pastes it
            code = oauth.add_code(q["code_challenge"], q["redirect_uri"], q["client_id"], q["state"])
            await answer(c, manual, value=f"  {code}#{q['state']}\n")
            response = await login
            assert response["success"], response
            [exchange] = oauth.seen("/token")
            assert exchange.json and exchange.body["state"] == q["state"] and exchange.body["code"] == code
            access = auth_file(host)["anthropic"]["access"]
            assert access.startswith("sk-ant-oat01-")

            await c.call("set_model", provider="anthropic", modelId="claude-sonnet-4-5")
            llm.enqueue(anthropic_reply("hi from claude"))
            result = await c.prompt_and_wait("hello")
            assert result.ok, result.error
            sent = llm.requests[0].headers
            assert sent["authorization"] == f"Bearer {access}" and "x-api-key" not in sent
            assert "oauth-2025-04-20" in sent["anthropic-beta"]
            assert_no_secret_written(host, tmp_path, oauth.all_tokens())


async def test_pasted_code_with_another_state_and_a_failing_token_endpoint_store_nothing(tmp_path: Path) -> None:
    with OAuthServer(access_prefix="sk-ant-oat01-") as oauth:
        async with login_host(tmp_path, env=oauth_env(oauth, "anthropic")) as host:
            c = host.client
            login = start_login(c, "anthropic")
            await ui_request(c, "oauth_auth")
            await answer(c, await ui_request(c, "oauth_manual_code"), value="somecode#not-the-state")
            response = await login
            assert response["success"] is False and response["error"] == "OAuth state mismatch"

            after = len(c.events)
            login = start_login(c, "anthropic")
            q = query_of((await ui_request(c, "oauth_auth", after=after))["info"]["url"])
            code = oauth.add_code(q["code_challenge"], q["redirect_uri"], q["client_id"], q["state"])
            oauth.fail_next("/token", 500, "upstream exploded")
            await answer(c, await ui_request(c, "oauth_manual_code", after=after), value=code)
            response = await login
            assert response["success"] is False
            assert response["error"] == "Token exchange failed (500): upstream exploded"

            after = len(c.events)
            login = start_login(c, "anthropic")
            await ui_request(c, "oauth_auth", after=after)
            await answer(c, await ui_request(c, "oauth_manual_code", after=after), cancelled=True)
            response = await login
            assert response["success"] and response["data"] == {"provider": "anthropic", "cancelled": True}
            assert not (host.agent_dir / "auth.json").exists()
