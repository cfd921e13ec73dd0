"""Extension UI in ACP mode: no dialogs (ACP has none a plugin could use), notices into the thread.

``api.has_ui`` is False, so plugins know not to ask; a dialog that is asked anyway answers at
once as cancelled instead of waiting for a client that will never reply. The one question ACP
has is whether a tool call may run: ``approve`` asks it with ``session/request_permission``. ``notify`` becomes agent
text in the active session (a slash command's output shows up where the user typed it); status,
widget and title updates reach clients that subscribed with ``_atomic/subscribe``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from atomic_host.frontends.rpc.ui import FireAndForgetUI
from atomic_host.kit.log import log

if TYPE_CHECKING:
    import asyncio

    from atomic_host.contract.tools import Approval, ApprovalAnswer
    from atomic_host.frontends.acp.frontend import AcpFrontend


class AcpUI(FireAndForgetUI):
    has_ui = False

    def __init__(self, frontend: AcpFrontend) -> None:
        self.frontend = frontend
        self.pending: dict[str, asyncio.Future[dict[str, Any]]] = {}

    def resolve(self, response: dict[str, Any]) -> bool:
        return False

    def cancel_all(self) -> None:
        return None

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        return None

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None) -> bool:
        return False

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None) -> str | None:
        return None

    async def editor(self, title: str, prefill: str = "", *, timeout: float | None = None) -> str | None:
        return None

    async def approve(self, approval: Approval, *, timeout: float | None = None) -> ApprovalAnswer:
        return await self.frontend.request_approval(approval, timeout)

    def notify(self, message: str, notify_type: str = "info") -> None:
        log.warning(f"[{notify_type}] {message}")
        self.frontend.agent_text(message if notify_type == "info" else f"**{notify_type}:** {message}")
        super().notify(message, notify_type)

    def _fire(self, method: str, **fields: Any) -> None:
        self.frontend.ext_event("atomic/ui", {"method": method, **fields})
