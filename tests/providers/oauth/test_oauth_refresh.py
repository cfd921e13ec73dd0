"""OAuth tokens at request time, through the real ``atomic --mode rpc``, a local OAuth server and a
local Anthropic-shaped model server: a token near or past its expiry is refreshed before the request
(auth.json rewritten, 0600), and a refresh that fails in the middle of a prompt ends it with an
assistant error that names the provider and says to log in again, keeps the stored credential, and
leaks no token."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from oauth_helpers import anthropic_reply, assert_no_secret_written, auth_file, login_host, oauth_env
from oauth_server import OAuthServer

from atomic_host.testing_sse import Reply, SSEServer, anthropic_frames

ANTHROPIC_CLIENT_ID = "9d1c250a-e61b-44d9-88ed-5944d1962f5e"
MODEL = ("--model", "anthropic/claude-sonnet-4-5")


def anthropic_bash_call(command: str) -> list[str]:
    usage = {"input_tokens": 5, "output_tokens": 2}
    return anthropic_frames([
        {"type": "message_start", "message": {"id": "m0", "role": "assistant", "content": [], "usage": usage}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": json.dumps({"command": command})}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}},
        {"type": "message_stop"},
    ])


def stored_anthropic(access: str, refresh: str, expires_in_ms: float) -> dict[str, Any]:
    return {"anthropic": {"type": "oauth", "access": access, "refresh": refresh,
                          "expires": int(time.time() * 1000 + expires_in_ms)}}


def session_text(host: Any) -> str:
    return "\n".join(p.read_text() for p in host.agent_dir.rglob("*.jsonl"))


@pytest.mark.parametrize("expires_in_ms", [60_000, -3_600_000], ids=["expiring", "expired"])
async def test_a_token_near_or_past_its_expiry_is_refreshed_before_the_request(tmp_path: Path,
                                                                              expires_in_ms: float) -> None:
    old_access, old_refresh = "sk-ant-oat01-old-access-0123456789", "rt-stored-refresh-0123456789"
    with OAuthServer(access_prefix="sk-ant-oat01-") as oauth, SSEServer() as llm:
        oauth.add_refresh(old_refresh)
        async with login_host(tmp_path, *MODEL, env=oauth_env(oauth, "anthropic"),
                              models={"anthropic": {"baseUrl": llm.base_url}},
                              auth=stored_anthropic(old_access, old_refresh, expires_in_ms)) as host:
            llm.enqueue(anthropic_reply("fresh hello"))
            result = await host.client.prompt_and_wait("hi")
            assert result.ok, result.error
            assert "fresh hello" in result.text

            [refresh] = oauth.seen("/token")
            assert refresh.json and refresh.body == {"grant_type": "refresh_token", "client_id": ANTHROPIC_CLIENT_ID,
                                                     "refresh_token": old_refresh}
            # one request, and it already carries the new token: the refresh came first
            [request] = llm.requests
            new_access = oauth.issued_access[-1]
            assert request.headers["authorization"] == f"Bearer {new_access}"
            assert request.headers["user-agent"].startswith("claude-cli/")
            assert "oauth-2025-04-20" in request.headers["anthropic-beta"]
            assert request.body["system"][0]["text"] == "You are Claude Code, Anthropic's official CLI for Claude."

            record = auth_file(host)["anthropic"]  # checks mode 0600 too
            assert record["access"] == new_access and record["refresh"] == oauth.issued_refresh[-1]
            assert record["expires"] > time.time() * 1000 + 3000 * 1000  # the server's 3600 s
            # the refreshed token is used as is by the next prompt: no second refresh
            llm.enqueue(anthropic_reply("again"))
            assert (await host.client.prompt_and_wait("again")).ok
            assert len(oauth.seen("/token")) == 1
            assert llm.requests[1].headers["authorization"] == f"Bearer {new_access}"
            assert_no_secret_written(host, tmp_path, [old_access, old_refresh, *oauth.issued_access,
                                                      *oauth.issued_refresh])


async def test_a_refresh_rejected_with_invalid_grant_mid_prompt_ends_it_with_a_log_in_again_error(
        tmp_path: Path) -> None:
    access, refresh = "sk-ant-oat01-live-access-0123456789", "rt-revoked-refresh-0123456789"
    stored = stored_anthropic(access, refresh, 3_600_000)
    with OAuthServer(access_prefix="sk-ant-oat01-") as oauth, SSEServer() as llm:
        # the server's error echoes the refresh token: it must be masked wherever the error goes
        oauth.fail_next("/token", 400, json.dumps({"error": "invalid_grant",
                                                   "error_description": f"refresh token {refresh} was revoked"}))
        async with login_host(tmp_path, *MODEL, env=oauth_env(oauth, "anthropic"),
                              models={"anthropic": {"baseUrl": llm.base_url}}, auth=stored) as host:
            llm.enqueue(anthropic_bash_call("echo tool-ran"))
            llm.enqueue(Reply(status=401, body='{"type":"error","error":{"type":"authentication_error",'
                                                '"message":"OAuth token has expired"}}'))
            result = await host.client.prompt_and_wait("run it")
            assert not result.ok
            error = result.error or ""
            assert error.startswith("401"), error
            assert "OAuth token refresh failed for anthropic" in error and "invalid_grant" in error
            assert "Log in to anthropic again" in error
            assert refresh not in error and "[REDACTED:" in error

            # the tool ran, then the second request got the 401, then one refresh was tried
            assert len(llm.requests) == 2
            tool_results = [m for m in llm.requests[1].body["messages"] if m["role"] == "user"
                            and isinstance(m["content"], list) and m["content"][0].get("type") == "tool_result"]
            assert tool_results and "tool-ran" in json.dumps(tool_results)
            assert len(oauth.seen("/token")) == 1

            # the prompt's last assistant message is the error, in the session too
            messages = (await host.client.call("get_messages"))["messages"]
            last = messages[-1]
            assert last["role"] == "assistant" and last["stopReason"] == "error"
            assert "Log in to anthropic again" in last["errorMessage"]
            assert "Log in to anthropic again" in session_text(host)

            # invalid_grant or not, the credential is kept (pi does the same): only a login or
            # logout_provider replaces it
            assert auth_file(host) == stored
            assert_no_secret_written(host, tmp_path, [access, refresh])


async def test_an_expired_token_whose_refresh_fails_is_never_sent_and_a_transient_failure_is_retried(
        tmp_path: Path) -> None:
    access, refresh = "sk-ant-oat01-expired-access-0123456789", "rt-good-refresh-0123456789"
    stored = stored_anthropic(access, refresh, -60_000)
    with OAuthServer(access_prefix="sk-ant-oat01-") as oauth, SSEServer() as llm:
        oauth.add_refresh(refresh)
        oauth.fail_next("/token", 400, '{"error":"invalid_request","error_description":"bad client"}')
        async with login_host(tmp_path, *MODEL, env=oauth_env(oauth, "anthropic"),
                              models={"anthropic": {"baseUrl": llm.base_url}}, auth=stored) as host:
            c = host.client
            result = await c.prompt_and_wait("hi")
            assert not result.ok
            assert result.error == ("OAuth token refresh failed for anthropic: Token refresh failed (400): "
                                    "invalid_request: bad client. Log in to anthropic again (login_provider with "
                                    "authType \"oauth\", or `atomic login anthropic`); the stored credential was kept.")
            assert llm.requests == []  # an expired token is never sent
            assert auth_file(host) == stored

            # a 503 from the token endpoint is transient: the session's auto-retry refreshes again
            oauth.fail_next("/token", 503, "upstream unavailable")
            llm.enqueue(anthropic_reply("back"))
            after = len(c.events)
            again = await c.prompt_and_wait("hi again")
            assert again.ok, again.error
            retry = next(e for e in c.events[after:] if e.get("type") == "auto_retry_start")
            assert retry["errorMessage"].startswith("OAuth token refresh failed for anthropic: Token refresh "
                                                    "failed (503): upstream unavailable.")
            assert len(oauth.seen("/token")) == 3
            [request] = llm.requests
            assert request.headers["authorization"] == f"Bearer {oauth.issued_access[-1]}"
            assert auth_file(host)["anthropic"]["access"] == oauth.issued_access[-1]
            assert_no_secret_written(host, tmp_path, [access, refresh, *oauth.issued_access, *oauth.issued_refresh])


async def test_two_hosts_sharing_auth_json_spend_the_refresh_token_once(tmp_path: Path) -> None:
    """Each host refreshes under the lock on auth.json.lock and re-reads the record first, so the
    second one uses the token the first stored instead of refreshing again."""
    import asyncio

    from atomic_host.testing import start_host

    access, refresh = "sk-ant-oat01-shared-old-0123456789", "rt-shared-refresh-0123456789"
    agent = tmp_path / "shared-agent"
    agent.mkdir()
    (agent / "auth.json").write_text(json.dumps(stored_anthropic(access, refresh, 30_000)))
    (agent / "auth.json").chmod(0o600)
    (agent / "settings.json").write_text(json.dumps({"sessionSummary": {"enabled": False}}))
    with OAuthServer(access_prefix="sk-ant-oat01-") as oauth, SSEServer() as llm:
        oauth.add_refresh(refresh)
        (agent / "models.json").write_text(json.dumps({"providers": {"anthropic": {"baseUrl": llm.base_url}}}))
        env = {**oauth_env(oauth, "anthropic"), "ATOMIC_CODING_AGENT_DIR": str(agent)}
        async with start_host(*MODEL, base=tmp_path / "a", env=env) as one, \
                start_host(*MODEL, base=tmp_path / "b", env=env) as two:
            llm.enqueue(anthropic_reply("one"))
            llm.enqueue(anthropic_reply("two"))
            first, second = await asyncio.gather(one.client.prompt_and_wait("hi"), two.client.prompt_and_wait("hi"))
            assert first.ok and second.ok, (first.error, second.error)
            assert len(oauth.seen("/token")) == 1
            new_access = oauth.issued_access[-1]
            assert [r.headers["authorization"] for r in llm.requests] == [f"Bearer {new_access}"] * 2
            record = json.loads((agent / "auth.json").read_text())["anthropic"]
            assert record["access"] == new_access and record["refresh"] == oauth.issued_refresh[-1]


async def test_hostile_token_answers_to_a_refresh_end_the_prompt_with_a_clear_error(tmp_path: Path) -> None:
    """What the parser property tests check, seen from the client: a token endpoint answering bytes
    that are not UTF-8 or a token no header can carry fails the prompt with a readable error and
    leaves auth.json alone; an absurd ``expires_in`` is capped and the prompt goes through."""
    access, refresh = "sk-ant-oat01-hostile-old-0123456789", "rt-hostile-refresh-0123456789"
    stored = stored_anthropic(access, refresh, -1000)
    with OAuthServer(access_prefix="sk-ant-oat01-") as oauth, SSEServer() as llm:
        async with login_host(tmp_path, *MODEL, env=oauth_env(oauth, "anthropic"),
                              models={"anthropic": {"baseUrl": llm.base_url}}, auth=stored) as host:
            c = host.client
            for body, reason in [
                (b"\xff\xfe<html>\xe9chec</html>", "Token refresh failed (200): \ufffd\ufffd<html>\ufffdchec</html>"),
                (json.dumps({"access_token": "t\u00f6ken-\u20ac", "refresh_token": "rt-x-0123456789"}),
                 "Token refresh returned access_token with characters a token cannot have"),
                ('{"access_token": ["not", "a", "string"]}', "Token refresh returned no access_token"),
            ]:
                oauth.fail_next("/token", 200, body)
                result = await c.prompt_and_wait("hi")
                assert result.error == (f"OAuth token refresh failed for anthropic: {reason}. Log in to anthropic "
                                        "again (login_provider with authType \"oauth\", or `atomic login anthropic`); "
                                        "the stored credential was kept."), result.error
                assert auth_file(host) == stored
            assert llm.requests == []
            new = "sk-ant-oat01-capped-new-0123456789"
            huge = "1" + "0" * 400  # more digits than a float holds
            oauth.fail_next("/token", 200, f'{{"access_token": "{new}", "refresh_token": "rt-capped-0123456789", '
                                           f'"expires_in": {huge}}}')
            llm.enqueue(anthropic_reply("capped"))
            result = await c.prompt_and_wait("hi")
            assert result.ok, result.error
            assert llm.requests[0].headers["authorization"] == f"Bearer {new}"
            record = auth_file(host)["anthropic"]
            assert record["access"] == new and isinstance(record["expires"], int)
            assert record["expires"] < time.time() * 1000 + 11 * 365 * 24 * 3600 * 1000
            assert (await c.call("get_state"))["model"]["provider"] == "anthropic"  # the host is fine
            assert_no_secret_written(host, tmp_path, [access, refresh, new, "rt-capped-0123456789"])
