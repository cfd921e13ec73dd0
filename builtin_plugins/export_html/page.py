"""The ``html`` exporter: one self-contained HTML file of a session's active branch.

No external assets, no script: CSS is inline, tool calls and results fold with ``<details>``,
images are inline ``data:`` URIs with an allow-listed mime type. Every piece of session text
goes through ``html.escape``, so a message containing ``<script>`` renders as text.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from html import escape
from pathlib import Path
from typing import Any

from atomic_host.kit import secrets

_IMAGE_MIMES = {"image/png", "image/jpeg", "image/gif", "image/webp"}

_CSS = """
body{font:14px/1.5 system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em}
body{color:#1d1d1f;background:#fafafa}
header{border-bottom:1px solid #ddd;margin-bottom:1em}
header dl{display:grid;grid-template-columns:max-content 1fr;gap:0 1em}
dt{color:#666}
.entry{margin:.6em 0;padding:.6em .9em;border-radius:6px;background:#fff;border:1px solid #e4e4e4}
.role{font-size:12px;font-weight:600;text-transform:uppercase;color:#666}
.user{border-left:4px solid #2f6feb}
.assistant{border-left:4px solid #1a7f37}
.tool{border-left:4px solid #8250df}
.bash{border-left:4px solid #bf8700}
.error{border-left:4px solid #cf222e}
.meta{font-size:12px;color:#666;background:transparent;border:none;padding:0 .9em}
.summary{border-left:4px solid #999;background:#f3f3f3}
pre{white-space:pre-wrap;word-break:break-word;margin:.3em 0}
pre{background:#f6f8fa;padding:.5em;border-radius:4px}
.thinking{color:#666;font-style:italic}
details>summary{cursor:pointer}
img{max-width:100%}
"""


def _text(value: Any) -> str:
    return escape(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2))


def _image(block: dict[str, Any]) -> str:
    mime, data = block.get("mimeType"), block.get("data")
    if mime not in _IMAGE_MIMES or not isinstance(data, str):
        return '<p class="meta">[image omitted]</p>'
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return '<p class="meta">[invalid image omitted]</p>'
    return f'<img alt="image" src="data:{mime};base64,{data}">'


def _blocks(content: Any) -> str:
    if isinstance(content, str):
        return f"<pre>{escape(content)}</pre>"
    parts = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(f"<pre>{_text(block.get('text', ''))}</pre>")
        elif kind == "image":
            parts.append(_image(block))
        elif kind == "thinking":
            body = "[redacted]" if block.get("redacted") else block.get("thinking", "")
            parts.append(
                f'<details><summary>thinking</summary><pre class="thinking">{_text(body)}</pre></details>'
            )
        elif kind == "toolCall":
            args = json.dumps(block.get("arguments"), ensure_ascii=False, indent=2)
            parts.append(
                f"<details><summary>tool call: {_text(block.get('name', ''))}</summary>"
                f"<pre>{escape(args)}</pre></details>"
            )
    return "".join(parts)


def _div(css: str, role: str, body: str) -> str:
    return f'<div class="entry {css}"><div class="role">{escape(role)}</div>{body}</div>'


def _message(message: dict[str, Any]) -> str:
    role = message.get("role")
    if role == "user":
        return _div("user", "user", _blocks(message.get("content")))
    if role == "assistant":
        body = _blocks(message.get("content"))
        if message.get("errorMessage"):
            body += f'<p class="meta">error: {_text(message["errorMessage"])}</p>'
        label = f"assistant · {message.get('provider', '')}/{message.get('model', '')}"
        return _div("assistant error" if message.get("stopReason") == "error" else "assistant", label, body)
    if role == "toolResult":
        css = "tool error" if message.get("isError") else "tool"
        summary = f"result: {_text(message.get('toolName', ''))}"
        return _div(
            css,
            "tool result",
            f"<details><summary>{summary}</summary>{_blocks(message.get('content'))}</details>",
        )
    if role == "bashExecution":
        status = "cancelled" if message.get("cancelled") else f"exit {message.get('exitCode')}"
        body = f"<pre>$ {_text(message.get('command', ''))}</pre>"
        output = _text(message.get("output", ""))
        body += f"<details><summary>output ({escape(status)})</summary><pre>{output}</pre></details>"
        return _div("bash", "bash", body)
    if role == "custom":
        return _div("summary", f"custom · {message.get('customType', '')}", _blocks(message.get("content")))
    return _div("meta", str(role), f"<pre>{_text(message)}</pre>")


def _entry(entry: dict[str, Any]) -> str:
    kind = entry.get("type")
    if kind == "message" and isinstance(entry.get("message"), dict):
        return _message(entry["message"])
    if kind == "custom_message":
        return _div("summary", f"custom · {entry.get('customType', '')}", _blocks(entry.get("content")))
    if kind == "compaction":
        return _div("summary", "compaction", f"<pre>{_text(entry.get('summary', ''))}</pre>")
    if kind == "branch_summary":
        return _div("summary", "branch summary", f"<pre>{_text(entry.get('summary', ''))}</pre>")
    if kind == "model_change":
        return (
            f'<p class="entry meta">model → {_text(entry.get("provider"))}/{_text(entry.get("modelId"))}</p>'
        )
    if kind == "thinking_level_change":
        return f'<p class="entry meta">thinking level → {_text(entry.get("thinkingLevel"))}</p>'
    if kind == "session_info":
        return f'<p class="entry meta">session name → {_text(entry.get("name", ""))}</p>'
    return ""


def _branch(entries: list[dict[str, Any]], leaf_id: str | None) -> list[dict[str, Any]]:
    by_id = {e.get("id"): e for e in entries}
    path, seen = [], set()
    current = by_id.get(leaf_id) if leaf_id else None
    while current is not None and current.get("id") not in seen:
        seen.add(current.get("id"))
        path.append(current)
        current = by_id.get(current.get("parentId"))
    return path[::-1]


def render_html(header: dict[str, Any], entries: list[dict[str, Any]], leaf_id: str | None) -> str:
    """The active branch (root → ``leaf_id``) as one self-contained HTML page."""
    branch = _branch(entries, leaf_id)
    name = next((e.get("name") for e in reversed(entries) if e.get("type") == "session_info"), None)
    title = name or f"Session {header.get('id', '')}"
    meta = "".join(
        f"<dt>{escape(k)}</dt><dd>{_text(v)}</dd>"
        for k, v in (
            ("id", header.get("id", "")),
            ("cwd", header.get("cwd", "")),
            ("created", header.get("timestamp", "")),
            ("entries", f"{len(branch)} on this branch, {len(entries)} in the session"),
        )
    )
    body = "\n".join(filter(None, (_entry(e) for e in branch)))
    # Masked as a whole (raw and HTML-escaped forms): the session may predate its credentials.
    return secrets.mask(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; img-src data:; '
        "style-src 'unsafe-inline'\">"
        f"<title>{_text(title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{_text(title)}</h1><dl>{meta}</dl></header><main>\n{body}\n</main></body></html>\n"
    )


def default_export_path(session: Any) -> str:
    """``atomic-session-<basename>.html`` in the process cwd (basename of the session file or id)."""
    location = getattr(session, "location", None)
    base = Path(location).stem if location and not str(location).startswith("sqlite:") else session.id
    return str(Path.cwd() / f"atomic-session-{base}.html")


def export_session(session: Any, output_path: str | None = None) -> str:
    """Render ``session`` (a ``Session``) to ``output_path`` (default: ``default_export_path``)."""
    path = output_path or default_export_path(session)
    data = render_html(session.header, session.entries, session.leaf_id).encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    return path
