"""Provider login over RPC: ``login_provider``, ``cancel_login_provider``, ``save_provider_credential``
and ``logout_provider``.

An OAuth login (``authType:"oauth"``) runs the provider's flow (declared on its ``ProviderInfo.oauth``)
as a task that talks to the user with ``oauth_*`` extension UI requests carrying ``provider`` and
``loginId``; the command answers when the flow ends: ``{provider, cancelled:false, models,
scopedModels, customAuthProviders, oauthProviders, providerAuthStatuses}`` after the token is stored
in auth.json, ``{provider, cancelled:true}`` when the user declined or ``cancel_login_provider`` ended
it, ``success:false`` with the flow's error otherwise. Tokens never travel back over stdout.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from atomic_host.contract.providers import LoginCancelled
from atomic_host.core.models.auth_oauth import endpoint_overrides, resolve_flow
from atomic_host.frontends.rpc.server import CommandFailed

if TYPE_CHECKING:
    from atomic_host.frontends.rpc.ui import RpcUI
    from atomic_host.runtime import Runtime

Cmd = dict[str, Any]


class RpcLoginUI:
    """:class:`~atomic_host.contract.providers.LoginUI` over the extension UI sub-protocol."""

    def __init__(self, ui: RpcUI, provider: str, login_id: str) -> None:
        self.ui, self.envelope = ui, {"provider": provider, "loginId": login_id}

    def _fire(self, method: str, **fields: Any) -> None:
        self.ui._fire(method, **self.envelope, **fields)

    async def _ask(self, method: str, **fields: Any) -> str:
        response = await self.ui._dialog(method, None, **self.envelope, **fields)
        if response is None or response.get("cancelled"):
            raise LoginCancelled
        value = response.get("value")
        return value if isinstance(value, str) else ""

    def auth_url(self, url: str, instructions: str | None = None) -> None:
        self._fire("oauth_auth", info={"url": url, **({"instructions": instructions} if instructions else {})})

    def device_code(self, user_code: str, verification_uri: str, interval_s: float | None = None,
                    expires_in_s: float | None = None) -> None:
        info: dict[str, Any] = {"userCode": user_code, "verificationUri": verification_uri}
        if interval_s is not None:
            info["intervalSeconds"] = interval_s
        if expires_in_s is not None:
            info["expiresInSeconds"] = expires_in_s
        self._fire("oauth_device_code", info=info)

    def progress(self, message: str) -> None:
        self._fire("oauth_progress", message=message)

    def info(self, message: str, links: Sequence[tuple[str, str | None]] = ()) -> None:
        self._fire("oauth_info", message=message,
                   links=[{"url": url, **({"label": label} if label else {})} for url, label in links])

    async def prompt(self, message: str, placeholder: str | None = None) -> str:
        return await self._ask("oauth_prompt", prompt={"message": message,
                                                       **({"placeholder": placeholder} if placeholder else {})})

    async def select(self, message: str, options: Sequence[tuple[str, str]]) -> str:
        return await self._ask("oauth_select", prompt={"message": message,
                                                       "options": [{"id": i, "label": label} for i, label in options]})

    async def manual_code(self, message: str | None = None) -> str:
        return await self._ask("oauth_manual_code", prompt={"message": message or "Paste the authorization code:"})

    def manual_code_cancel(self) -> None:
        self._fire("oauth_manual_code_cancel")


class ProviderLogins:
    """The logins in progress of one runtime, keyed by ``loginId``."""

    def __init__(self, rt: Runtime, catalog: Callable[[], dict[str, Any]]) -> None:
        self.rt = rt
        self.catalog = catalog
        self.active: dict[str, tuple[str, asyncio.Task[Any]]] = {}

    async def login(self, cmd: Cmd) -> Any:
        provider = str(cmd["provider"])
        login_id = str(cmd.get("loginId") or provider)
        if cmd.get("authType") == "oauth":
            login = self.rt.models.oauth_login(provider)
            if login is None:
                raise CommandFailed(f"Unknown OAuth provider: {provider}")
            ui = RpcLoginUI(self.rt.ui, provider, login_id)

            async def run() -> dict[str, Any]:
                flow = resolve_flow(login)
                return await flow.login(ui, endpoint_overrides(provider, self.rt.models.env))

            credential = await self._run(provider, login_id, run())
            if credential is None:
                return {"provider": provider, "cancelled": True}
            self._store(provider, {"type": "oauth", **credential})
            return {"provider": provider, "cancelled": False, **self.catalog()}
        key = cmd.get("apiKey")
        info = self.rt.models.provider_info(provider)
        if info is None:  # before asking for a key that could never be stored
            raise CommandFailed(f"Unknown provider: {provider}")
        if not key:
            title = f"API key for {info.name}"
            key = await self._run(provider, login_id, self.rt.ui.input(title, "API key"))
            if not key:
                return {"provider": provider, "cancelled": True}
        try:
            self.rt.models.login(provider, key)
        except ValueError as exc:
            raise CommandFailed(str(exc)) from exc
        self.rt.models.reload()
        # authStatus is what atomic-host answered before logins had types; the rest is the
        # catalog the protocol's api_key result carries.
        return {"provider": provider, "cancelled": False, "type": "api_key",
                "authStatus": self.rt.models.auth_status(provider), **self.catalog()}

    async def _run(self, provider: str, login_id: str, work: Any) -> Any:
        """Run ``work`` as the login ``login_id``; None when it was cancelled."""
        if any(p == provider for p, _task in self.active.values()) or login_id in self.active:
            work.close()
            raise CommandFailed(f"Login already in progress: {provider}")
        task = asyncio.ensure_future(work)
        self.active[login_id] = (provider, task)
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:  # the host is shutting down: take the login with it
            task.cancel()
            raise
        finally:
            if self.active.get(login_id, (None, None))[1] is task:
                del self.active[login_id]
        if task.cancelled():
            return None
        exc = task.exception()
        if isinstance(exc, LoginCancelled):
            return None
        if exc is not None:
            raise CommandFailed(str(exc) or type(exc).__name__) from exc
        return task.result()

    def _store(self, provider: str, record: dict[str, Any]) -> None:
        try:
            self.rt.models.save_credential(provider, record)
        except ValueError as exc:
            raise CommandFailed(f"{provider} returned an unusable credential: {exc}") from exc
        self.rt.models.reload()

    def cancel(self, cmd: Cmd) -> None:
        provider, login_id = cmd.get("provider"), cmd.get("loginId")
        for key, (owner, task) in list(self.active.items()):
            if (login_id is None or key == login_id) and (provider is None or owner == provider):
                task.cancel()

    def save(self, cmd: Cmd) -> Any:
        try:
            self.rt.models.save_credential(str(cmd["provider"]), cmd["credential"])
        except ValueError as exc:
            raise CommandFailed(str(exc)) from exc
        self.rt.models.reload()
        return self.catalog()

    async def logout(self, cmd: Cmd) -> dict[str, Any]:
        """Revoke (when the flow and its settings allow), then remove the stored credential."""
        provider = str(cmd["provider"])
        reg = self.rt.models
        login, record = reg.oauth_login(provider), reg.stored_record(provider)
        if login is not None and record is not None and record.get("type") == "oauth":
            try:
                flow = resolve_flow(login)
                revoke = getattr(flow, "revoke", None)
                if revoke is not None:
                    await revoke({k: v for k, v in record.items() if k != "type"},
                                 endpoint_overrides(provider, reg.env))
            except Exception as exc:  # a broken flow must not keep the user from logging out
                self.rt.extension_error(provider, "logout_provider", str(exc))
        reg.logout(provider)
        reg.reload()
        return {"provider": provider, "authStatus": reg.auth_status(provider)}
