"""MCP ``CallToolResult`` (as its wire JSON) → the host's tool-result content blocks.

Works on the wire dict (``model_dump(by_alias=True)``), so it does not depend on which major
version of the ``mcp`` package produced it, and needs no import of it.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def _blob_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data) * 3 // 4


def _block(item: Any) -> dict[str, Any]:
    if not isinstance(item, dict):
        return {"type": "text", "text": str(item)}
    kind = item.get("type")
    if kind == "text":
        return {"type": "text", "text": str(item.get("text", ""))}
    if kind == "image" and isinstance(item.get("data"), str):
        mime = str(item.get("mimeType") or "image/png")
        if mime in _IMAGE_TYPES:
            return {"type": "image", "data": item["data"], "mimeType": mime}
        return {
            "type": "text",
            "text": f"[image {mime}, {_blob_size(item['data'])} bytes, not shown: unsupported type]",
        }
    if kind == "audio":
        data = item.get("data") if isinstance(item.get("data"), str) else ""
        return {"type": "text", "text": f"[audio {item.get('mimeType') or '?'}, {_blob_size(data)} bytes, not shown]"}
    if kind == "resource_link":
        parts = [f"Resource link: {item.get('uri', '')}"]
        for key in ("name", "title", "mimeType", "description"):
            if item.get(key):
                parts.append(f"{key}: {item[key]}")
        return {"type": "text", "text": "\n".join(parts)}
    if kind == "resource":
        res = item.get("resource") if isinstance(item.get("resource"), dict) else {}
        uri, mime = res.get("uri", ""), res.get("mimeType")
        if isinstance(res.get("text"), str):
            head = f"Resource {uri}" + (f" ({mime})" if mime else "")
            return {"type": "text", "text": f"{head}:\n{res['text']}"}
        if isinstance(res.get("blob"), str):
            if mime in _IMAGE_TYPES:
                return {"type": "image", "data": res["blob"], "mimeType": mime}
            return {"type": "text", "text": f"[resource {uri} ({mime or 'binary'}), {_blob_size(res['blob'])} bytes]"}
        return {"type": "text", "text": f"Resource {uri}"}
    return {"type": "text", "text": json.dumps(item, ensure_ascii=False)}


def to_content(result: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any], bool]:
    """``(content blocks, details, is_error)`` for one ``CallToolResult``.

    Structured content goes to ``details["structuredContent"]``, and to the model as JSON text
    only when the server sent no content blocks (servers should send both; many send one).
    """
    raw = result.get("content")
    blocks = [_block(item) for item in raw] if isinstance(raw, list) else []
    details: dict[str, Any] = {}
    structured = result.get("structuredContent")
    if structured is not None:
        details["structuredContent"] = structured
        if not blocks:
            blocks = [{"type": "text", "text": json.dumps(structured, ensure_ascii=False, indent=2)}]
    is_error = result.get("isError") is True
    if not blocks:
        blocks = [
            {"type": "text", "text": "(the tool returned an error without a message)" if is_error else "(no output)"}
        ]
    return blocks, details, is_error
