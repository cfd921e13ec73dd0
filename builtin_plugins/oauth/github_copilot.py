"""GitHub Copilot: the GitHub device flow (RFC 8628), then the Copilot token exchange.

The stored credential's ``refresh`` is the GitHub OAuth token; ``access`` is the short-lived Copilot
token (about 30 minutes), re-fetched from ``copilot_internal/v2/token`` to refresh. Endpoints and
client id as pi (@mariozechner/pi-ai 0.73.1) uses them; each can be overridden
(``ATOMIC_OAUTH_GITHUB_COPILOT_<KEY>``): ``deviceCodeUrl``, ``accessTokenUrl``, ``copilotTokenUrl``,
``clientId``, ``minPollInterval``, ``apiBaseUrl`` (where models are enabled after a login; default:
the token's ``proxy-ep``), ``revokeUrl`` (no default). A GitHub Enterprise domain given at
the prompt derives all three URLs from that domain and is kept in the credential (``enterpriseUrl``).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import urllib.parse
from collections.abc import Mapping
from typing import Any

from atomic_host.contract.providers import LoginUI
from builtin_plugins.oauth import common
from builtin_plugins.oauth.declarations import copilot_model_ids
from builtin_plugins.oauth.parsing import OAuthError, parse_copilot_token, parse_device_code_response

CLIENT_ID = "Iv1.b507a08c87ecfe98"
USER_AGENT = "GitHubCopilotChat/0.35.0"
COPILOT_BASE_URL = "https://api.individual.githubcopilot.com"
COPILOT_HEADERS = {
    "User-Agent": USER_AGENT,
    "Editor-Version": "vscode/1.107.0",
    "Editor-Plugin-Version": "copilot-chat/0.35.0",
    "Copilot-Integration-Id": "vscode-chat",
}


def normalize_domain(text: str) -> str | None:
    """The host name of a GitHub Enterprise URL or domain, None when blank or unreadable."""
    text = text.strip()
    if not text:
        return None
    try:
        host = urllib.parse.urlsplit(text if "://" in text else f"https://{text}").hostname
    except ValueError:
        return None
    return host or None


def _urls(endpoints: Mapping[str, str], domain: str | None) -> dict[str, str]:
    base = domain or "github.com"
    return {
        "deviceCodeUrl": common.endpoint(endpoints, "deviceCodeUrl", f"https://{base}/login/device/code"),
        "accessTokenUrl": common.endpoint(endpoints, "accessTokenUrl", f"https://{base}/login/oauth/access_token"),
        "copilotTokenUrl": common.endpoint(endpoints, "copilotTokenUrl",
                                           f"https://api.{base}/copilot_internal/v2/token"),
    }


async def _copilot_token(github_token: str, domain: str | None, endpoints: Mapping[str, str]) -> dict[str, Any]:
    url = _urls(endpoints, domain)["copilotTokenUrl"]
    headers = {"Accept": "application/json", "Authorization": f"Bearer {github_token}", **COPILOT_HEADERS}
    status, body = await common.request("GET", url, headers=headers)
    answer = parse_copilot_token(status, body)
    credential: dict[str, Any] = {"access": answer.token, "refresh": github_token,
                                  "expires": int(answer.expires_at * 1000)}
    if domain:
        credential["enterpriseUrl"] = domain
    return credential


class GitHubCopilotFlow:
    """The :class:`~atomic_host.contract.providers.OAuthFlow` of ``github-copilot``."""

    async def login(self, ui: LoginUI, endpoints: Mapping[str, str]) -> dict[str, Any]:
        answer = await ui.prompt("GitHub Enterprise URL/domain (blank for github.com)", "company.ghe.com")
        domain = normalize_domain(answer)
        if answer.strip() and domain is None:
            raise OAuthError("Invalid GitHub Enterprise URL/domain")
        urls = _urls(endpoints, domain)
        client_id = common.endpoint(endpoints, "clientId", CLIENT_ID)
        form_headers = {"User-Agent": USER_AGENT}
        status, body = await common.request("POST", urls["deviceCodeUrl"], headers={"Accept": "application/json",
                                            **form_headers}, form={"client_id": client_id, "scope": "read:user"})
        device = parse_device_code_response(status, body)
        ui.device_code(device.user_code, device.verification_uri, device.interval, device.expires_in)

        async def poll() -> tuple[int, str]:
            return await common.request(
                "POST", urls["accessTokenUrl"], headers={"Accept": "application/json", **form_headers},
                form={"client_id": client_id, "device_code": device.device_code,
                      "grant_type": "urn:ietf:params:oauth:grant-type:device_code"},
            )

        github = await common.poll_device_token(device, poll, endpoints)
        ui.progress("Exchanging the GitHub token for a Copilot token...")
        credential = await _copilot_token(github.access_token, domain, endpoints)
        ui.progress("Enabling models...")
        await self._enable_models(credential, endpoints)
        return credential

    async def _enable_models(self, credential: dict[str, Any], endpoints: Mapping[str, str]) -> None:
        """Accept each catalog model's policy, as pi does after a login (Claude and Gemini models
        answer 403 until the user, or this, enabled them). Best effort: a model that cannot be
        enabled stays as the account has it."""
        base = common.endpoint(endpoints, "apiBaseUrl", self.request_auth(credential).get("baseUrl")
                               or COPILOT_BASE_URL).rstrip("/")
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {credential['access']}",
                   **COPILOT_HEADERS, "openai-intent": "chat-policy", "x-interaction-type": "chat-policy"}

        async def enable(model_id: str) -> None:
            with contextlib.suppress(OAuthError):
                await common.request("POST", f"{base}/models/{urllib.parse.quote(model_id)}/policy",
                                     headers=headers, json_body={"state": "enabled"})

        await asyncio.gather(*(enable(model_id) for model_id in copilot_model_ids()))

    async def refresh(self, credential: dict[str, Any], endpoints: Mapping[str, str]) -> dict[str, Any]:
        refresh = credential.get("refresh")
        if not isinstance(refresh, str) or not refresh:
            raise OAuthError("The stored GitHub Copilot credential has no GitHub token; sign in again")
        domain = credential.get("enterpriseUrl")
        return await _copilot_token(refresh, domain if isinstance(domain, str) and domain else None, endpoints)

    def request_auth(self, credential: dict[str, Any]) -> dict[str, Any]:
        token = str(credential.get("access", ""))
        auth: dict[str, Any] = {"apiKey": token, "headers": dict(COPILOT_HEADERS)}
        # The token names its API host: "…;proxy-ep=proxy.individual.githubcopilot.com;…".
        match = re.search(r"(?:^|;)proxy-ep=([^;]+)", token)
        if match:
            auth["baseUrl"] = "https://" + re.sub(r"^proxy\.", "api.", match.group(1))
        elif isinstance(credential.get("enterpriseUrl"), str) and credential["enterpriseUrl"]:
            auth["baseUrl"] = f"https://copilot-api.{credential['enterpriseUrl']}"
        return auth

    def context_headers(self, context: Mapping[str, Any]) -> dict[str, str]:
        """The per-request headers pi sends (``github-copilot-headers.ts``): ``X-Initiator`` says
        whether the user or the agent (a follow-up after tool results) made the request, and
        ``Copilot-Vision-Request`` must be set when images go along."""
        messages = [m for m in context.get("messages") or [] if isinstance(m, dict)]
        headers = {"X-Initiator": "agent" if messages and messages[-1].get("role") != "user" else "user",
                   "Openai-Intent": "conversation-edits"}
        if any(isinstance(m.get("content"), list) and m.get("role") in ("user", "toolResult")
               and any(isinstance(b, dict) and b.get("type") == "image" for b in m["content"]) for m in messages):
            headers["Copilot-Vision-Request"] = "true"
        return headers

    async def revoke(self, credential: dict[str, Any], endpoints: Mapping[str, str]) -> None:
        await common.revoke_if_configured(credential, endpoints, CLIENT_ID)


FLOW = GitHubCopilotFlow()
