"""todo: a small file-based task list shared by sessions working in one project.

Each todo is ``<dir>/<8 hex>.md``: a pretty-printed JSON object (id, title, tags, status,
created_at, assigned_to_session?) then a blank line and a markdown body. ``<dir>`` is
``$ATOMIC_TODO_PATH`` or ``<cwd>/.atomic/todos``. Mutations hold ``<hex>.lock`` (O_EXCL) so two
sessions cannot claim the same todo at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from atomic_host.contract.tools import ToolContext, ToolError, ToolResult

CLOSED = frozenset({"closed", "done"})
LOCK_STALE_SECONDS = 30.0


class Params(BaseModel):
    action: Literal["list", "list-all", "get", "create", "update", "append", "delete", "claim", "release"] = Field(
        description="What to do"
    )
    id: str | None = Field(
        None, description="Todo id (e.g. TODO-1a2b3c4d or 1a2b3c4d); required except for list/create"
    )
    title: str | None = Field(None, description="Title (create, update)")
    status: str | None = Field(None, description="Status such as open, in-progress, done, closed (create, update)")
    tags: list[str] | None = Field(None, description="Tags (create, update)")
    body: str | None = Field(None, description="Markdown body (create, update replaces it, append adds to it)")
    force: bool = Field(False, description="claim/release even when another session holds the todo")


def todos_dir(cwd: str) -> Path:
    env = os.environ.get("ATOMIC_TODO_PATH")
    return Path(os.path.expanduser(env)) if env else Path(cwd) / ".atomic" / "todos"


def normalize_id(raw: str) -> str:
    value = raw.strip().lstrip("#")
    if value.upper().startswith("TODO-"):
        value = value[5:]
    value = value.lower()
    if not re.fullmatch(r"[0-9a-f]{1,32}", value):
        raise ToolError(f"Invalid todo id {raw!r}: expected TODO-<hex>")
    return value


def _split(content: str) -> tuple[dict[str, Any], str]:
    if content.startswith("{"):
        dec = json.JSONDecoder()
        try:
            obj, end = dec.raw_decode(content)
            if isinstance(obj, dict):
                return obj, content[end:].lstrip("\r\n")
        except json.JSONDecodeError:
            pass
    return {}, content


def read_todo(path: Path, hex_id: str) -> dict[str, Any]:
    meta, body = _split(path.read_text(encoding="utf-8"))
    tags = meta.get("tags")
    todo = {
        "id": hex_id,
        "title": meta.get("title") if isinstance(meta.get("title"), str) else "",
        "tags": [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else [],
        "status": meta.get("status") if isinstance(meta.get("status"), str) and meta.get("status") else "open",
        "created_at": meta.get("created_at") if isinstance(meta.get("created_at"), str) else "",
        "body": body,
    }
    assigned = meta.get("assigned_to_session")
    if isinstance(assigned, str) and assigned.strip():
        todo["assigned_to_session"] = assigned
    return todo


def write_todo(path: Path, todo: dict[str, Any]) -> None:
    from atomic_host.kit.fsio import atomic_write

    meta = {k: todo[k] for k in ("id", "title", "tags", "status", "created_at")}
    if todo.get("assigned_to_session"):
        meta["assigned_to_session"] = todo["assigned_to_session"]
    body = str(todo.get("body") or "").lstrip("\n").rstrip()
    text = json.dumps(meta, indent=2, ensure_ascii=False) + ("\n\n" + body + "\n" if body else "\n")
    atomic_write(path, text.encode("utf-8"), None)


@contextlib.contextmanager
def _lock(directory: Path, hex_id: str, session_id: str, check: Callable[[], None] | None = None) -> Iterator[None]:
    lock = directory / f"{hex_id}.lock"
    deadline = time.monotonic() + 3.0
    while True:
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            break
        except FileExistsError:
            with contextlib.suppress(OSError):
                if time.time() - lock.stat().st_mtime > LOCK_STALE_SECONDS:
                    lock.unlink()  # left behind by a crashed process
                    continue
            if time.monotonic() > deadline:
                raise ToolError(f"Todo TODO-{hex_id} is locked by another session; try again") from None
            if check is not None:
                check()
            time.sleep(0.02)
    try:
        os.write(fd, json.dumps({"session": session_id, "pid": os.getpid()}).encode())
        os.close(fd)
        yield
    finally:
        with contextlib.suppress(OSError):
            lock.unlink()


def render(todo: dict[str, Any]) -> str:
    head = f"TODO-{todo['id']} [{todo['status']}] {todo['title']}"
    extra = []
    if todo.get("tags"):
        extra.append("tags: " + ", ".join(todo["tags"]))
    if todo.get("assigned_to_session"):
        extra.append("assigned to session " + todo["assigned_to_session"])
    if todo.get("created_at"):
        extra.append("created " + todo["created_at"])
    text = head + ("\n" + "; ".join(extra) if extra else "")
    body = str(todo.get("body") or "").strip()
    return text + ("\n\n" + body if body else "")


def _public(todo: dict[str, Any]) -> dict[str, Any]:
    return {**todo, "id": f"TODO-{todo['id']}"}


def list_todos(directory: Path) -> list[dict[str, Any]]:
    out = []
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    for name in names:
        if name.endswith(".md"):
            with contextlib.suppress(OSError, UnicodeDecodeError):
                out.append(read_todo(directory / name, name[:-3]))
    # Open before closed, then oldest first.
    out.sort(key=lambda t: (t["status"] in CLOSED, t.get("created_at") or "", t["id"]))
    return out


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def run(params: Params, ctx: ToolContext) -> ToolResult:
    # File work and the lock wait (up to 3 s of polling) happen in a worker thread.
    return await ctx.run_blocking(lambda: _todo(params, ctx), label="Todo")


def _todo(params: Params, ctx: ToolContext) -> ToolResult:
    directory = todos_dir(ctx.cwd)
    action = params.action
    if action in ("list", "list-all"):
        todos = list_todos(directory)
        if action == "list":
            todos = [t for t in todos if t["status"] not in CLOSED]
            todos.sort(key=lambda t: t.get("assigned_to_session") is None)  # assigned first, stable
        text = "\n".join(
            f"TODO-{t['id']} [{t['status']}] {t['title']}"
            + (f" (tags: {', '.join(t['tags'])})" if t["tags"] else "")
            + (
                " (assigned to this session)"
                if t.get("assigned_to_session") == ctx.session_id
                else f" (assigned to {t['assigned_to_session']})"
                if t.get("assigned_to_session")
                else ""
            )
            for t in todos
        ) or ("No open todos." if action == "list" else "No todos.")
        return ToolResult.text(
            text, {"action": action, "todos": [_public(t) for t in todos], "currentSessionId": ctx.session_id}
        )
    if action == "create":
        if not params.title or not params.title.strip():
            raise ToolError("Error: title required")
        directory.mkdir(parents=True, exist_ok=True)
        hex_id = secrets.token_hex(4)
        while (directory / f"{hex_id}.md").exists():
            hex_id = secrets.token_hex(4)
        todo = {
            "id": hex_id,
            "title": params.title.strip(),
            "tags": params.tags or [],
            "status": params.status or "open",
            "created_at": _now(),
            "body": params.body or "",
        }
        with _lock(directory, hex_id, ctx.session_id, ctx.check_cancelled):
            write_todo(directory / f"{hex_id}.md", todo)
        return ToolResult.text(render(todo), {"action": action, "todo": _public(todo)})

    if not params.id:
        raise ToolError("Error: id required")
    hex_id = normalize_id(params.id)
    path = directory / f"{hex_id}.md"
    if not path.exists():
        raise ToolError(f"Todo TODO-{hex_id} not found")
    if action == "get":
        todo = read_todo(path, hex_id)
        return ToolResult.text(render(todo), {"action": action, "todo": _public(todo)})
    with _lock(directory, hex_id, ctx.session_id, ctx.check_cancelled):
        todo = read_todo(path, hex_id)
        holder = todo.get("assigned_to_session")
        if action == "delete":
            path.unlink()
            return ToolResult.text(f"Deleted TODO-{hex_id}: {todo['title']}", {"action": action, "todo": _public(todo)})
        if action == "update":
            if params.title is not None:
                todo["title"] = params.title
            if params.status is not None:
                todo["status"] = params.status
            if params.tags is not None:
                todo["tags"] = params.tags
            if params.body is not None:
                todo["body"] = params.body
            todo["created_at"] = todo["created_at"] or _now()
        elif action == "append":
            if params.body and params.body.strip():
                old = str(todo["body"]).rstrip()
                todo["body"] = (old + "\n\n" if old else "") + params.body.strip() + "\n"
        elif action == "claim":
            if todo["status"] in CLOSED:
                raise ToolError(f"Todo TODO-{hex_id} is {todo['status']}; reopen it before claiming")
            if holder and holder != ctx.session_id and not params.force:
                raise ToolError(
                    f"Todo TODO-{hex_id} is already assigned to session {holder}. Use force=true to take it over."
                )
            todo["assigned_to_session"] = ctx.session_id
        elif action == "release":
            if holder and holder != ctx.session_id and not params.force:
                raise ToolError(
                    f"Todo TODO-{hex_id} is assigned to session {holder}, not this one. Use force=true to release it."
                )
            todo.pop("assigned_to_session", None)
        if todo["status"] in CLOSED:
            todo.pop("assigned_to_session", None)
        write_todo(path, todo)
    return ToolResult.text(render(todo), {"action": action, "todo": _public(todo)})
