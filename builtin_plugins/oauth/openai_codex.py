"""ChatGPT sign-in (the ``openai-codex`` provider: ChatGPT Plus/Pro plans through the Codex backend).

Authorization code with PKCE; the browser is redirected to a callback server on
``http://localhost:1455/auth/callback`` and the user may paste the redirect URL instead (a browser
on another machine). The account id the Codex backend wants (``chatgpt-account-id``) is read from
the access token's claims. Endpoints and client id as pi (@mariozechner/pi-ai 0.73.1) uses them;
overrides (``ATOMIC_OAUTH_OPENAI_CODEX_<KEY>``): ``authorizeUrl``, ``tokenUrl``, ``clientId``,
``redirectUri``, ``callbackHost``, ``callbackPort``, ``originator``, ``revokeUrl`` (no default).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from atomic_host.contract.providers import LoginUI
from builtin_plugins.oauth import common
from builtin_plugins.oauth.parsing import OAuthError, TokenResponse, jwt_claims

CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann"
AUTHORIZE_URL = "https://auth.openai.com/oauth/authorize"
TOKEN_URL = "https://auth.openai.com/oauth/token"
CALLBACK_PORT = 1455
CALLBACK_PATH = "/auth/callback"
SCOPE = "openid profile email offline_access"
JWT_CLAIM = "https://api.openai.com/auth"


def account_id(access_token: str) -> str | None:
    """``chatgpt_account_id`` from the token's ``https://api.openai.com/auth`` claim."""
    claim = jwt_claims(access_token).get(JWT_CLAIM)
    value = claim.get("chatgpt_account_id") if isinstance(claim, dict) else None
    return value if isinstance(value, str) and value else None


def _credential(token: TokenResponse, previous_refresh: str | None = None) -> dict[str, Any]:
    refresh = token.refresh_token or previous_refresh
    if not refresh:
        raise OAuthError("Token response has no refresh_token")
    account = account_id(token.access_token)
    if account is None:
        raise OAuthError("Failed to extract the ChatGPT account id from the token")
    return {"access": token.access_token, "refresh": refresh, "expires": common.expires_at(token),
            "accountId": account}


class OpenAICodexFlow:
    """The :class:`~atomic_host.contract.providers.OAuthFlow` of ``openai-codex``."""

    async def login(self, ui: LoginUI, endpoints: Mapping[str, str]) -> dict[str, Any]:
        grant = await common.browser_sign_in(
            ui,
            endpoints,
            port=CALLBACK_PORT,
            path=CALLBACK_PATH,
            authorize_url=AUTHORIZE_URL,
            client_id=CLIENT_ID,
            params={
                "scope": SCOPE,
                "id_token_add_organizations": "true",
                "codex_cli_simplified_flow": "true",
                "originator": common.endpoint(endpoints, "originator", "pi"),
            },
            message="Complete the sign-in in your browser. If the browser is on another machine, paste "
            "the final redirect URL here.",
        )
        ui.progress("Exchanging authorization code for tokens...")
        token = await common.token_request(
            common.endpoint(endpoints, "tokenUrl", TOKEN_URL),
            form={"grant_type": "authorization_code", "client_id": grant.client_id, "code": grant.code,
                  "code_verifier": grant.verifier, "redirect_uri": grant.redirect_uri},
            what="Token exchange",
        )
        return _credential(token)

    async def refresh(self, credential: dict[str, Any], endpoints: Mapping[str, str]) -> dict[str, Any]:
        refresh = str(credential.get("refresh") or "")
        token = await common.token_request(
            common.endpoint(endpoints, "tokenUrl", TOKEN_URL),
            form={"grant_type": "refresh_token", "refresh_token": refresh,
                  "client_id": common.endpoint(endpoints, "clientId", CLIENT_ID)},
            what="Token refresh",
        )
        return _credential(token, refresh)

    def request_auth(self, credential: dict[str, Any]) -> dict[str, Any]:
        headers = {"OpenAI-Beta": "responses=experimental", "originator": "pi"}
        if isinstance(credential.get("accountId"), str):
            headers["chatgpt-account-id"] = credential["accountId"]
        return {"apiKey": str(credential.get("access", "")), "headers": headers}

    async def revoke(self, credential: dict[str, Any], endpoints: Mapping[str, str]) -> None:
        await common.revoke_if_configured(credential, endpoints, CLIENT_ID)


FLOW = OpenAICodexFlow()
