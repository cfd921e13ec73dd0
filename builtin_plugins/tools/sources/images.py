"""Images for the model from any source: checked and shrunk (``atomic_host.kit.images``), or refused."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from atomic_host.contract.tools import ToolError, ToolResult

if TYPE_CHECKING:
    from atomic_host.contract.tools import ToolContext


def auto_resize(settings: object) -> bool:
    """``images.autoResize`` (default on)."""
    images = settings.get("images") if isinstance(settings, dict) else None
    return not (isinstance(images, dict) and images.get("autoResize") is False)


def image_result(label: str, data: bytes, ctx: ToolContext, details: dict[str, Any]) -> ToolResult:
    """An image block (checked, shrunk to fit) after a one-line text; a broken image is a :class:`ToolError`."""
    from atomic_host.kit.images import ImageProblem, prepare

    try:
        out, mime, note = prepare(data, auto_resize=auto_resize(ctx.settings))
    except ImageProblem as e:
        raise ToolError(f"Cannot read image {label}: {e}") from e
    text = f"Read image file {label} [{mime}]" + (f" ({note})" if note else "")
    return ToolResult(
        [
            {"type": "text", "text": text},
            {"type": "image", "data": base64.b64encode(out).decode("ascii"), "mimeType": mime},
        ],
        {**details, "mimeType": mime, **({"resized": note} if note else {})},
    )
