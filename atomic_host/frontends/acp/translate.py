"""Host shapes ↔ ACP shapes: prompt blocks in; tool calls, plans, history and stop reasons out.

Pure functions over the host's wire dicts and the SDK's schema models; the only I/O is reading
a file an ``edit``/``write`` call is about to change, to show the client its diff.
"""

from __future__ import annotations

import base64
import os
import re
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentToolCallContent,
    FileEditToolCallContent,
    ImageContentBlock,
    PlanEntry,
    TextContentBlock,
    ToolCallLocation,
    ToolCallStart,
    ToolKind,
    UserMessageChunk,
)

from atomic_host.kit.proposed import proposed_change

KINDS: dict[str, ToolKind] = {
    "read": "read",
    "ls": "read",
    "find": "search",
    "search": "search",
    "grep": "search",
    "tool_search": "search",
    "edit": "edit",
    "write": "edit",
    "bash": "execute",
    "kill": "execute",
    "codemode": "execute",
    "todo": "think",
    "fetch": "fetch",
    "web_fetch": "fetch",
}
"""Tool name → ACP tool kind (the client picks an icon from it); anything else is ``other``."""

_REFUSAL = re.compile(r"refus|content.?filter|content.?policy|sensitive|safety", re.IGNORECASE)


class PromptError(ValueError):
    """A prompt block the host cannot take (audio, an unknown block type)."""


# --- prompts in ---


def prompt_input(blocks: list[Any]) -> tuple[str, list[dict[str, Any]]]:
    """ACP content blocks → the host's prompt text and images.

    Text blocks are joined with blank lines; embedded text resources are appended as
    ``<context uri="…">`` sections (the way editors attach files); resource links become
    ``@uri`` mentions; images (inline or as an image blob resource) become prompt images.
    """
    parts: list[str] = []
    context: list[str] = []
    images: list[dict[str, Any]] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "image":
            images.append({"type": "image", "data": block.data, "mimeType": block.mime_type})
        elif kind == "resource_link":
            parts.append(f"@{_display_uri(block.uri)}")
        elif kind == "resource":
            res = block.resource
            text = getattr(res, "text", None)
            mime = getattr(res, "mime_type", None) or ""
            if isinstance(text, str):
                context.append(f'<context uri="{res.uri}">\n{text}\n</context>')
            elif mime.startswith("image/"):
                images.append({"type": "image", "data": res.blob, "mimeType": mime})
            else:
                size = len(base64.b64decode(res.blob or "", validate=False)) if res.blob else 0
                context.append(f'<context uri="{res.uri}" mimeType="{mime}">(binary, {size} bytes)</context>')
        elif kind == "audio":
            raise PromptError("Audio prompts are not supported")
        else:
            raise PromptError(f"Unsupported prompt block: {kind}")
    text = "\n\n".join(p for p in parts if p)
    if context:
        text = "\n\n".join([text, *context]) if text else "\n\n".join(context)
    return text, images


def _display_uri(uri: str) -> str:
    return uri[len("file://") :] if uri.startswith("file://") else uri


# --- tool calls out ---


def tool_kind(name: str) -> ToolKind:
    return KINDS.get(name, "other")


def _abs(path: Any, cwd: str) -> str | None:
    if not isinstance(path, str) or not path.strip():
        return None
    path = path[1:] if path.startswith("@") else path
    path = re.sub(r":\d+(?:[-+]\d+)?$", "", path)  # read's path:N / path:A-B suffix
    full = os.path.expanduser(path)
    return os.path.normpath(full if os.path.isabs(full) else os.path.join(cwd, full))


def tool_title(name: str, args: dict[str, Any], label: str | None = None) -> str:
    """A one-line title: what the call does, with its main argument."""
    path = args.get("path")
    if name == "bash" and isinstance(args.get("command"), str):
        command = args["command"].strip().splitlines()[0] if args["command"].strip() else ""
        return f"`{command[:200]}`"
    if name in ("read", "ls", "edit", "write") and isinstance(path, str):
        verb = {"read": "Read", "ls": "List", "edit": "Edit", "write": "Write"}[name]
        return f"{verb} {path}"
    if name in ("find", "search", "grep") and isinstance(args.get("pattern"), str):
        where = f" in {path}" if isinstance(path, str) and path not in ("", ".") else ""
        return f"{'Find' if name == 'find' else 'Search'} {args['pattern']}{where}"
    if name == "todo" and isinstance(args.get("action"), str):
        title = args.get("title") or args.get("id") or ""
        return f"Todo {args['action']}" + (f": {title}" if title else "")
    return label or name


def tool_locations(name: str, args: dict[str, Any], cwd: str) -> list[ToolCallLocation]:
    path = _abs(args.get("path"), cwd)
    if path is None:
        return []
    line = args.get("offset") if name == "read" and isinstance(args.get("offset"), int) else None
    return [ToolCallLocation(path=path, line=line)]


def proposed_diff(name: str, args: dict[str, Any], cwd: str) -> FileEditToolCallContent | None:
    """The diff an ``edit`` or ``write`` call would make, from the file as it is now; None when
    it cannot be told (unreadable or huge file, an edit whose text is not found)."""
    change = proposed_change(name, args, cwd)
    if change is None:
        return None
    return FileEditToolCallContent(type="diff", path=change.path, old_text=change.old, new_text=change.new)


def start_update(
    call_id: str, name: str, args: dict[str, Any], cwd: str, *, label: str | None, status: str
) -> tuple[ToolCallStart, FileEditToolCallContent | None]:
    """The ``tool_call`` update announcing a call (and the proposed diff it carries, if any)."""
    diff = proposed_diff(name, args, cwd)
    start = ToolCallStart(
        session_update="tool_call",
        tool_call_id=call_id,
        title=tool_title(name, args, label),
        kind=tool_kind(name),
        status=status,  # type: ignore[arg-type]
        locations=tool_locations(name, args, cwd) or None,
        content=[diff] if diff is not None else None,
        raw_input=args,
    )
    return start, diff


def result_content(result: dict[str, Any]) -> list[ContentToolCallContent]:
    """A tool result's text and images as tool call content."""
    out: list[ContentToolCallContent] = []
    for block in result.get("content") or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and block.get("text"):
            out.append(
                ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=block["text"]))
            )
        elif block.get("type") == "image" and block.get("data"):
            image = ImageContentBlock(type="image", data=block["data"], mime_type=block.get("mimeType") or "image/png")
            out.append(ContentToolCallContent(type="content", content=image))
    return out


# --- plans from the todo tool ---

PLAN_STATUS = {"done": "completed", "closed": "completed", "in-progress": "in_progress", "in_progress": "in_progress"}


def update_todos(todos: dict[str, dict[str, Any]], details: Any) -> bool:
    """Fold one ``todo`` result into the known todos (id → todo); True when they changed."""
    if not isinstance(details, dict):
        return False
    action = details.get("action")
    if isinstance(details.get("todos"), list) and action == "list-all":
        todos.clear()
    if isinstance(details.get("todos"), list):
        for todo in details["todos"]:
            if isinstance(todo, dict) and isinstance(todo.get("id"), str):
                todos[todo["id"]] = todo
        return True
    todo = details.get("todo")
    if not isinstance(todo, dict) or not isinstance(todo.get("id"), str):
        return False
    if action == "delete":
        todos.pop(todo["id"], None)
    else:
        todos[todo["id"]] = todo
    return True


def plan_entries(todos: dict[str, dict[str, Any]]) -> list[PlanEntry]:
    return [
        PlanEntry(
            content=str(t.get("title") or t["id"]),
            priority="medium",
            status=PLAN_STATUS.get(str(t.get("status") or "").lower(), "pending"),  # type: ignore[arg-type]
        )
        for t in todos.values()
    ]


# --- stop reasons ---


def stop_reason(message: dict[str, Any] | None) -> str:
    """The ACP stop reason of the run's last assistant message; raises ``RuntimeError`` with the
    provider's message for an error that is not a refusal (ACP has no ``error`` stop reason: the
    prompt request fails instead)."""
    if message is None:
        return "end_turn"
    reason = message.get("stopReason")
    if reason == "length":
        return "max_tokens"
    if reason == "aborted":
        return "cancelled"
    if reason == "error":
        text = str(message.get("errorMessage") or "The model request failed")
        if _REFUSAL.search(text):
            return "refusal"
        raise RuntimeError(text)
    return "end_turn"


# --- history replay (session/load) ---


def replay(entries: list[dict[str, Any]], cwd: str) -> list[Any]:
    """The updates that show a stored branch again: user and agent messages, thoughts, tool calls
    with their final status and result."""
    results: dict[str, dict[str, Any]] = {}
    for entry in entries:
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "toolResult":
            results[str(message.get("toolCallId"))] = message
    out: list[Any] = []
    for entry in entries:
        kind = entry.get("type")
        if kind == "custom_message" and entry.get("display") and isinstance(entry.get("content"), str):
            out.append(_agent_text(entry["content"]))
            continue
        if kind == "compaction":
            out.append(_agent_text("*(earlier conversation compacted)*"))
            continue
        message = entry.get("message") if kind == "message" else None
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        if role == "user":
            for block in blocks:
                if block.get("type") == "text" and block.get("text"):
                    out.append(
                        UserMessageChunk(
                            session_update="user_message_chunk",
                            content=TextContentBlock(type="text", text=block["text"]),
                        )
                    )
                elif block.get("type") == "image":
                    image = ImageContentBlock(
                        type="image", data=block.get("data", ""), mime_type=block.get("mimeType", "")
                    )
                    out.append(UserMessageChunk(session_update="user_message_chunk", content=image))
        elif role == "assistant":
            for block in blocks:
                btype = block.get("type")
                if btype == "thinking" and block.get("thinking"):
                    out.append(
                        AgentThoughtChunk(
                            session_update="agent_thought_chunk",
                            content=TextContentBlock(type="text", text=block["thinking"]),
                        )
                    )
                elif btype == "text" and block.get("text"):
                    out.append(_agent_text(block["text"]))
                elif btype == "toolCall":
                    out.append(_replayed_call(block, results.get(str(block.get("id"))), cwd))
    return out


def _agent_text(text: str) -> AgentMessageChunk:
    return AgentMessageChunk(session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text))


def _replayed_call(block: dict[str, Any], result: dict[str, Any] | None, cwd: str) -> ToolCallStart:
    name = str(block.get("name") or "tool")
    args = block.get("arguments") if isinstance(block.get("arguments"), dict) else {}
    if result is None:
        status = "failed"
        content: list[Any] = []
    else:
        status = "failed" if result.get("isError") else "completed"
        content = result_content(result)
    return ToolCallStart(
        session_update="tool_call",
        tool_call_id=str(block.get("id") or ""),
        title=tool_title(name, args),
        kind=tool_kind(name),
        status=status,  # type: ignore[arg-type]
        locations=tool_locations(name, args, cwd) or None,
        content=content or None,
        raw_input=args,
    )
