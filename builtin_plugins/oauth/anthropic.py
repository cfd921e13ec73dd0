"""Anthropic Claude Pro/Max sign-in, as pi (@mariozechner/pi-ai 0.73.1) offers it.

Authorization code with PKCE. The browser is redirected to ``http://localhost:53692/callback``; the
user can instead paste the code Anthropic shows (``code#state``) or the final redirect URL, answering
the ``oauth_manual_code`` request. Token exchange and refresh are JSON posts. The access token
(``sk-ant-oat…``) is sent as a Bearer token with the Claude Code headers by the anthropic adapter.

Unlike pi, the ``state`` is its own random value, not the PKCE verifier: the authorize URL is shown
to the client, and the verifier must stay unknown until the token exchange.

Overrides (``ATOMIC_OAUTH_ANTHROPIC_<KEY>``): ``authorizeUrl``, ``tokenUrl``, ``clientId``,
``redirectUri``, ``callbackHost``, ``callbackPort``, ``revokeUrl`` (no default).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from atomic_host.contract.providers import LoginUI
from builtin_plugins.oauth import common
from builtin_plugins.oauth.parsing import OAuthError, TokenResponse

CLIENT_ID = "9d1c250a-e61b-44d9-88ed-5944d1962f5e"
AUTHORIZE_URL = "https://claude.ai/oauth/authorize"
TOKEN_URL = "https://platform.claude.com/v1/oauth/token"
CALLBACK_PORT = 53692
CALLBACK_PATH = "/callback"
CLAUDE_CODE_VERSION = "2.1.75"
"""The ``claude-cli/<version>`` user agent pi sends with an OAuth token (pi-mono 83378aa,
``packages/ai/src/providers/anthropic.ts``); the anthropic adapter adds the rest of the Claude Code
identity (``anthropic-beta: claude-code-20250219,oauth-2025-04-20``, ``x-app: cli``, the "You are
Claude Code" system block) whenever the key is an ``sk-ant-oat`` token."""
SCOPES = "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload"


def _credential(token: TokenResponse, previous_refresh: str | None = None) -> dict[str, Any]:
    refresh = token.refresh_token or previous_refresh
    if not refresh:
        raise OAuthError("Token response has no refresh_token")
    return {"access": token.access_token, "refresh": refresh, "expires": common.expires_at(token)}


class AnthropicFlow:
    """The :class:`~atomic_host.contract.providers.OAuthFlow` of ``anthropic``."""

    async def login(self, ui: LoginUI, endpoints: Mapping[str, str]) -> dict[str, Any]:
        grant = await common.browser_sign_in(
            ui,
            endpoints,
            port=CALLBACK_PORT,
            path=CALLBACK_PATH,
            authorize_url=AUTHORIZE_URL,
            client_id=CLIENT_ID,
            params={"code": "true", "scope": SCOPES},
            message="Complete the sign-in in your browser. If the browser is on another machine, paste "
            "the code it shows (or the final redirect URL) here.",
        )
        ui.progress("Exchanging authorization code for tokens...")
        token = await common.token_request(
            common.endpoint(endpoints, "tokenUrl", TOKEN_URL),
            json_body={"grant_type": "authorization_code", "client_id": grant.client_id, "code": grant.code,
                       "state": grant.state, "redirect_uri": grant.redirect_uri, "code_verifier": grant.verifier},
            what="Token exchange",
        )
        return _credential(token)

    async def refresh(self, credential: dict[str, Any], endpoints: Mapping[str, str]) -> dict[str, Any]:
        refresh = str(credential.get("refresh") or "")
        token = await common.token_request(
            common.endpoint(endpoints, "tokenUrl", TOKEN_URL),
            json_body={"grant_type": "refresh_token", "client_id": common.endpoint(endpoints, "clientId", CLIENT_ID),
                       "refresh_token": refresh},
            what="Token refresh",
        )
        return _credential(token, refresh)

    def request_auth(self, credential: dict[str, Any]) -> dict[str, Any]:
        return {"apiKey": str(credential.get("access", "")),
                "headers": {"user-agent": f"claude-cli/{CLAUDE_CODE_VERSION}"}}

    async def revoke(self, credential: dict[str, Any], endpoints: Mapping[str, str]) -> None:
        await common.revoke_if_configured(credential, endpoints, CLIENT_ID)


FLOW = AnthropicFlow()
