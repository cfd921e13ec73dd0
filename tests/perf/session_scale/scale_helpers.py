"""Shared helpers of the session-scale tests: a generated session with every kind of entry the read
commands look at (branches, labels, names, tool calls, summaries, compaction, non-ASCII and
line-separator text, float costs), the read commands that must answer the same whatever the
session's history of reads and appends, and a scripted sequence that mixes them."""

from __future__ import annotations

from typing import Any

from atomic_host.kit.sessions.tree import Session

READS: tuple[dict[str, Any], ...] = (
    {"type": "get_state"},
    {"type": "get_messages"},
    {"type": "get_session_stats"},
    {"type": "get_fork_messages"},
    {"type": "get_entries"},
    {"type": "get_tree"},
    {"type": "get_session_summary"},
    {"type": "get_last_assistant_text"},
)


def _usage(i: int) -> dict[str, Any]:
    cost = {"input": 0.1 * i, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.1 * i + 0.2}
    return {"input": 10 + i, "output": 5, "cacheRead": i % 3, "cacheWrite": 0, "totalTokens": 15 + i, "cost": cost}


def user(i: int, text: str | None = None) -> dict[str, Any]:
    body = text if text is not None else f"question {i} café ✓ \u2028 line\u2029sep 🙂"
    return {"role": "user", "content": [{"type": "text", "text": body}], "timestamp": 1_700_000_000_000 + i}


def assistant(i: int, *, tool: bool = False) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": f"answer {i} \u0085 done"}]
    if tool:
        content.append({"type": "toolCall", "id": f"call{i}", "name": "bash", "arguments": {"command": "ls"}})
    return {
        "role": "assistant",
        "content": content,
        "api": "faux",
        "provider": "faux",
        "model": "faux-1",
        "usage": _usage(i),
        "stopReason": "toolUse" if tool else "stop",
        "timestamp": 1_700_000_000_001 + i,
    }


def tool_result(i: int) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": f"call{i}",
        "toolName": "bash",
        "content": [{"type": "text", "text": "file.txt\n"}],
        "isError": False,
        "timestamp": 1_700_000_000_002 + i,
    }


def varied(session: Session, turns: int) -> Session:
    """Append ``turns`` turns of every shape to ``session``; returns it. Deterministic content, but
    entry ids and timestamps are the store's (random ids, the clock)."""
    session.append_model_change("faux", "faux-1")
    session.append_thinking_level_change("off")
    fork_point: str | None = None
    for i in range(turns):
        session.append_message(user(i))
        if i % 5 == 1:
            session.append_message(assistant(i, tool=True))
            session.append_message(tool_result(i))
        session.append_message(assistant(i))
        if i % 7 == 3:
            session.append_label(session.entries[-1]["id"], f"mark {i}")
        if i % 11 == 4:
            session.append_session_info(f"name {i} ✓")
        if i % 13 == 6:
            session.append("custom", customType="ext", data={"n": i, "f": 1e16, "x": -0.0})
        if i == turns // 3:
            fork_point = session.entries[-1]["id"]
    if fork_point is not None:
        # a second branch off an earlier entry, with a summary of the abandoned path
        session.set_leaf(fork_point)
        session.append(
            "branch_summary", fromId=fork_point, summary="the other path", usage=_usage(1), details={"k": 1}
        )
        session.append_message(user(10_000, "on the other branch"))
        session.append_message(assistant(10_000))
        session.append_label(fork_point, "fork here")
        session.append_label(fork_point, None)  # cleared again
    return session





# -- the definitions the cached views are held to: the whole-session scans they replaced ----------


def reference_name(session: Session) -> str | None:
    for entry in reversed(session.entries):
        if entry.get("type") == "session_info":
            name = entry.get("name")
            return (name.strip() or None) if isinstance(name, str) else None
    return None


def reference_fork_messages(session: Session) -> list[dict[str, str]]:
    from atomic_host.kit.messages import message_text

    result = []
    for entry in session.entries:
        message = entry.get("message")
        if entry.get("type") == "message" and isinstance(message, dict) and message.get("role") == "user":
            text = message_text(message)
            if text:
                result.append({"entryId": entry["id"], "text": text})
    return result


def reference_totals(session: Session) -> dict[str, Any]:
    """The counts and sums of get_session_stats as one scan over every entry computed them."""
    counts = {"user": 0, "assistant": 0, "toolResult": 0}
    tool_calls = total = 0
    tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    cost = 0.0
    latest: dict[str, Any] | None = None
    for entry in session.entries:
        usage = None
        if entry.get("type") == "message":
            total += 1
            m = entry.get("message") or {}
            role = m.get("role")
            if role in counts:
                counts[role] += 1
            if role == "assistant":
                tool_calls += sum(1 for b in m.get("content") or [] if b.get("type") == "toolCall")
                usage = m.get("usage")
                latest = usage
        elif entry.get("type") in ("branch_summary", "session_summary"):
            usage = entry.get("usage")
        if usage:
            for k in tokens:
                tokens[k] += usage.get(k, 0) or 0
            cost += (usage.get("cost") or {}).get("total", 0) or 0
    return {"counts": counts, "toolCalls": tool_calls, "total": total, "tokens": tokens, "cost": cost, "latest": latest}


def totals_of(view: Any) -> dict[str, Any]:
    """A :class:`atomic_host.session.stats.Totals` view in :func:`reference_totals`' shape."""
    return {
        "counts": dict(view.counts),
        "toolCalls": view.tool_calls,
        "total": view.total,
        "tokens": dict(view.tokens),
        "cost": view.cost,
        "latest": view.latest,
    }


def reference_tree_text(session: Session) -> str:
    """get_tree's text built from ``Session.tree()``'s nodes (the encoder get_tree had before its
    cached pieces), without recursion: the reference the cached text must equal."""
    from atomic_host.core.jsonfast import dumps

    def encode_tree(roots: list[dict[str, Any]]) -> str:
        """``dumps(roots)`` for nodes as ``Session.tree()`` builds them, the same text, built without
        recursion (each entry is encoded whole by the C encoder)."""
        parts = ["["]
        stack: list[Any] = ["]"]
        for i in range(len(roots) - 1, -1, -1):
            stack.append(roots[i])
            if i:
                stack.append(",")
        while stack:
            item = stack.pop()
            if type(item) is str:
                parts.append(item)
                continue
            parts.append('{"entry":' + dumps(item["entry"]) + ',"children":[')
            tail = "]"
            if "label" in item:
                tail += ',"label":' + dumps(item["label"]) + ',"labelTimestamp":' + dumps(item["labelTimestamp"])
            stack.append(tail + "}")
            children = item["children"]
            for i in range(len(children) - 1, -1, -1):
                stack.append(children[i])
                if i:
                    stack.append(",")
        return "".join(parts)

    return encode_tree(session.tree())


def reference_entries_text(session: Session) -> str:
    from atomic_host.core.jsonfast import dumps

    return dumps(list(session.entries))


def reference_index(entries: list[dict[str, Any]]) -> dict[str, int]:
    index = {}
    for position, entry in enumerate(entries):
        if isinstance(entry.get("id"), str):
            index[entry["id"]] = position  # a duplicate id names its last entry
    return index


def reference_branch(entries: list[dict[str, Any]], leaf_id: str | None) -> list[dict[str, Any]]:
    """The walk with a seen set at every step (the definition)."""
    index = reference_index(entries)
    position = index.get(leaf_id) if leaf_id else None
    positions: list[int] = []
    seen: set[int] = set()
    while position is not None and position not in seen:
        positions.append(position)
        seen.add(position)
        parent = entries[position].get("parentId")
        position = index.get(parent) if isinstance(parent, str) else None
    return [entries[i] for i in reversed(positions)]
