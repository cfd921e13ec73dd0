"""Malformed entries of a hand-edited (or foreign) session, repaired on load (issue 24).

Everything that reads a session (the context, the providers' converters, stats, listings, the
export) relies on a few shapes: a ``message`` entry's message is an object with a string role, its
content a list of block objects (or a string, for user and custom messages), a text block's
``text`` a string, a usage an object of numbers. One entry of another shape used to fail every
read or every prompt of the session. :func:`repair_entries` gives each such entry the shape (a
copy: the store's own copy is never rewritten) and says what it changed, once, when the session
is loaded; well-formed sessions (every one this host writes) pass through a check made of C loops
and come out as they went in.
"""

from __future__ import annotations

import json
from typing import Any

from atomic_host.kit.log import log

UNREADABLE = "atomic.unreadable"
"""``customType`` of the custom entry that stands in for a message entry whose message has no
string role (its ``data`` is the original entry), so the entries after it stay attached to the
tree. A message that is not an object at all is left as it is: it adds nothing to the context
(:meth:`~atomic_host.kit.sessions.tree.Session.odd_message_positions`), and the session reports it."""

_STRING_CONTENT = frozenset({"user", "custom"})
"""Roles whose content may be a string (the others: a list of blocks)."""
_BLOCK_ROLES = frozenset({"user", "assistant", "toolResult", "custom"})
_NUMERIC = frozenset({int, float, type(None)})
"""The types a usage number may have (``bool`` is not one)."""
_USAGE_NUMBERS = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
_COST_NUMBERS = ("input", "output", "cacheRead", "cacheWrite", "total")
_BLOCK_STRINGS: dict[Any, tuple[str, ...]] = {
    "text": ("text",),
    "thinking": ("thinking",),
    "toolCall": ("id", "name"),
    "image": ("data", "mimeType"),
}
"""Per block type, the fields that must be strings."""


def repair_entries(entries: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """``(entries, problems)``: the entries with every malformed one repaired (a new list when
    any was; ``entries`` itself when none was) and one line per repair, e.g. ``entry 1a2b3c4d:
    assistant content is a string (made a text block)``."""
    if _well_formed(entries):
        return entries, []
    problems: list[str] = []
    repaired = [_repair(entry, problems) for entry in entries]
    return repaired, problems


def _well_formed(entries: list[dict[str, Any]]) -> bool:
    """True when no entry needs a repair: one pass, each entry's objects looked at once while they
    are in the cache (about 1 µs an entry; passes of C loops, one per field, were slower past a
    few thousand entries: each pass walked the whole session out of the cache again)."""
    return all(map(_entry_ok, entries))


def _entry_ok(entry: dict[str, Any]) -> bool:
    """Whether :func:`_repair` would leave ``entry`` as it is (the two must agree)."""
    parent = entry.get("parentId")
    if parent is not None and type(parent) is not str:
        return False
    kind = entry.get("type")
    if kind != "message":
        usage = entry.get("usage")
        if usage is not None and not _usage_ok(usage):
            return False
        return kind != "custom_message" or _content_ok(entry.get("content"), "custom")
    message = entry.get("message")
    if type(message) is not dict:
        return True  # left as it is: such an entry adds nothing to the context (``Session``'s odd messages)
    role = message.get("role")
    if type(role) is not str or not _content_ok(message.get("content"), role):
        return False
    if role == "toolResult" and type(message.get("toolCallId")) is not str:
        return False
    usage = message.get("usage")
    return usage is None or _usage_ok(usage)


def _content_ok(content: Any, role: str) -> bool:
    if type(content) is list:
        for block in content:
            if type(block) is not dict:
                return False
            kind = block.get("type")
            if kind == "text":  # the common kinds first, without a loop over their fields
                if type(block.get("text")) is not str:
                    return False
            elif kind == "toolCall":
                if type(block.get("id")) is not str or type(block.get("name")) is not str:
                    return False
                if type(block.get("arguments")) is not dict:
                    return False
            elif type(kind) is str and kind in _BLOCK_STRINGS and not _strings(block, _BLOCK_STRINGS[kind]):
                return False
        return True
    return content is None or role not in _BLOCK_ROLES or (type(content) is str and role in _STRING_CONTENT)


def _strings(block: dict[str, Any], names: tuple[str, ...]) -> bool:
    return set(map(type, map(block.get, names))) == {str}


def _usage_ok(usage: Any) -> bool:
    if type(usage) is not dict or not set(map(type, map(usage.get, _USAGE_NUMBERS))) <= _NUMERIC:
        return False
    cost = usage.get("cost")
    return cost is None or (type(cost) is dict and set(map(type, map(cost.get, _COST_NUMBERS))) <= _NUMERIC)


# -- the per-entry pass (only for a session that has a malformed entry) ------------------------------
def _repair(entry: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    where = f"entry {entry.get('id')}"
    fixed = dict(entry)
    parent = entry.get("parentId")
    if parent is not None and not isinstance(parent, str):
        problems.append(f"{where}: parentId is {_kind(parent)} (made a root)")
        fixed["parentId"] = None
    kind = entry.get("type")
    if kind != "message":
        if "usage" in entry:
            _set(fixed, "usage", _usage(entry["usage"], where, problems))
        if kind == "custom_message" and "content" in entry:
            fixed["content"] = _content(entry["content"], "custom", where, problems)
        return fixed if fixed != entry else entry
    message = entry.get("message")
    if not isinstance(message, dict):
        return fixed if fixed != entry else entry
    if not isinstance(message.get("role"), str):
        problems.append(f"{where}: a message without a string role (kept aside as a custom entry {UNREADABLE!r})")
        kept = {k: fixed[k] for k in ("id", "parentId", "timestamp") if k in fixed}
        return {"type": "custom", **kept, "customType": UNREADABLE, "data": entry}
    role = message["role"]
    repaired = dict(message)
    if "content" in message:
        repaired["content"] = _content(message["content"], role, f"{where}: {role}", problems)
    if role == "toolResult" and not isinstance(message.get("toolCallId"), str):
        problems.append(f"{where}: toolResult toolCallId is {_kind(message.get('toolCallId'))} (made text)")
        repaired["toolCallId"] = _text(message.get("toolCallId"))
    if "usage" in message:
        _set(repaired, "usage", _usage(message["usage"], where, problems))
    if repaired != message:
        fixed["message"] = repaired
    return fixed if fixed != entry else entry


def _set(target: dict[str, Any], key: str, value: Any) -> None:
    """``target[key] = value``, or no key for None (a dropped value)."""
    if value is None:
        target.pop(key, None)
    else:
        target[key] = value


def _content(content: Any, role: str, where: str, problems: list[str]) -> Any:
    """A message's content as every reader takes it (``content`` itself when it is)."""
    if isinstance(content, list):
        return _blocks(content, where, problems)
    if _content_ok(content, role):
        return content
    if isinstance(content, str):
        problems.append(f"{where} content is a string (made a text block)")
        return [{"type": "text", "text": content}]
    problems.append(f"{where} content is {_kind(content)} (dropped)")
    return []


def _blocks(content: list[Any], where: str, problems: list[str]) -> list[Any]:
    out: list[Any] = []
    changed = False
    for block in content:
        if not isinstance(block, dict):
            problems.append(f"{where} content block is {_kind(block)} (dropped)")
            changed = True
            continue
        kind = block.get("type")
        fields = _BLOCK_STRINGS.get(kind) if isinstance(kind, str) else None
        bad = [name for name in fields or () if not isinstance(block.get(name), str)]
        if kind == "image" and bad:
            problems.append(f"{where} image block without string {' and '.join(bad)} (dropped)")
            changed = True
            continue
        if bad:
            what = ", ".join(f"{name} is {_kind(block.get(name))}" for name in bad)
            problems.append(f"{where} {kind} block: {what} (made text)")
            block = {**block, **{name: _text(block.get(name)) for name in bad}}
            changed = True
        if kind == "toolCall" and not isinstance(block.get("arguments"), dict):
            problems.append(f"{where} toolCall arguments are {_kind(block.get('arguments'))} (made {{}})")
            block = {**block, "arguments": {}}
            changed = True
        out.append(block)
    return out if changed else content


def _usage(usage: Any, where: str, problems: list[str]) -> Any:
    """A usage object with only numbers where numbers are read (None: dropped)."""
    if not isinstance(usage, dict):
        if usage is not None:
            problems.append(f"{where}: usage is {_kind(usage)} (dropped)")
        return None
    if _usage_ok(usage):
        return usage
    problems.append(f"{where}: usage has values that are not numbers (dropped them)")
    fixed = {k: v for k, v in usage.items() if k not in _USAGE_NUMBERS or _is_number(v)}
    cost = usage.get("cost")
    if isinstance(cost, dict):
        fixed["cost"] = {k: v for k, v in cost.items() if k not in _COST_NUMBERS or _is_number(v)}
    elif cost is not None:
        del fixed["cost"]
    return fixed


def _is_number(value: Any) -> bool:
    """A value a usage may hold: a number (not a boolean), or null."""
    return type(value) in _NUMERIC


def _text(value: Any) -> str:
    """A string for a value that should have been one: its JSON text (``5`` → ``"5"``)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (ValueError, RecursionError):  # nested deeper than the encoder goes
        return ""


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def report_repairs(location: str, problems: list[str], how: str = "in memory; the stored copy is unchanged") -> None:
    """Say once, on stderr, what was done about a session's malformed entries as it was loaded."""
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        count = f"{len(problems)} malformed entr{'y' if len(problems) == 1 else 'ies'}"
        log.warning(f"session {location}: {count} ({how}): " + "; ".join(problems[:3]) + more)


def report_unreadable(location: str, places: list[str]) -> None:
    """Say once, on stderr, that records of a session were skipped on load (``places``: where,
    e.g. ``line 7``): a torn last line after a crash, or a hand edit that is not JSON."""
    if places:
        shown = ", ".join(places[:5]) + (f" and {len(places) - 5} more" if len(places) > 5 else "")
        log.warning(f"session {location}: skipped {len(places)} unreadable record(s) ({shown})")


__all__ = ["UNREADABLE", "repair_entries", "report_repairs", "report_unreadable"]
