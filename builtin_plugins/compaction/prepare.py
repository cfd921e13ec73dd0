"""Preparing the region to compact (semantics §4.2): kept tail, numbered lines, protected spans."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from atomic_host.kit.messages import convert_to_llm, entry_to_message, is_active_boundary, starts_user_turn
from atomic_host.kit.transcript import serialize_conversation

MIN_LINES = 20
HEADERS = ("[User]: ", "[Assistant thinking]: ", "[Assistant]: ", "[Assistant tool calls]: ", "[Tool result]: ")
TOOL_RESULT_HEADER = "[Tool result]: "
_OPEN = "<keepcontext>"
_CLOSE = "</keepcontext>"


@dataclass
class Preparation:
    """Everything the planner and the applier need about one compaction region."""

    lines: list[str]
    protected: set[int]
    """1-based numbers of protected lines."""
    first_kept_entry_id: str | None
    tail_messages: list[dict[str, Any]] = field(default_factory=list)
    tokens_before: int = 0
    last_user_text: str | None = None

    @property
    def compactable(self) -> bool:
        return len(self.lines) >= MIN_LINES

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def is_visible(message: dict[str, Any]) -> bool:
    """Whether a context message survives ``convert_to_llm`` (tool results and assistants always do)."""
    return message.get("role") in ("assistant", "toolResult") or starts_user_turn(message)


def _user_like_text(message: dict[str, Any]) -> str | None:
    if message.get("role") not in ("user", "custom", "branchSummary", "bashExecution"):
        return None
    converted = convert_to_llm([message])
    if not converted:
        return None
    content = converted[0].get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


def region_entries(branch: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The entries from the region start to the leaf, and the latest active boundary (if any)."""
    b_index = next((i for i in range(len(branch) - 1, -1, -1) if is_active_boundary(branch[i])), None)
    if b_index is None:
        return branch, None
    boundary = branch[b_index]
    kept_id = boundary.get("firstKeptEntryId")
    start = next((i for i in range(b_index) if kept_id is not None and branch[i].get("id") == kept_id), None)
    return branch[(start if start is not None else b_index + 1) :], boundary


def prepare(
    branch: list[dict[str, Any]], preserve_recent: int, tokens_before: int = 0
) -> Preparation:
    """Split the active branch into the region to compact and the kept tail; number the lines."""
    entries, boundary = region_entries(branch)
    visible: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for entry in entries:
        message = entry_to_message(entry)
        if message is not None and is_visible(message):
            visible.append((entry, message))
    cut = len(visible) - preserve_recent if preserve_recent > 0 else len(visible)
    cut = max(0, cut)
    region, tail = visible[:cut], visible[cut:]
    transcript = serialize_conversation(convert_to_llm([m for _e, m in region]))
    if boundary is not None:
        summary = boundary.get("summary") if isinstance(boundary.get("summary"), str) else ""
        transcript = "\n".join(part for part in (summary, transcript) if part)
    lines = transcript.split("\n") if transcript else []
    last_user = None
    for _e, message in reversed(visible):
        last_user = _user_like_text(message)
        if last_user is not None:
            break
    return Preparation(
        lines=lines,
        protected=protected_lines(lines),
        first_kept_entry_id=tail[0][0]["id"] if tail else None,
        tail_messages=[m for _e, m in tail],
        tokens_before=tokens_before,
        last_user_text=last_user,
    )


_HEADER_RE = re.compile("|".join(re.escape(h) for h in HEADERS))


def protected_lines(lines: list[str]) -> set[int]:
    """1-based numbers of lines inside ``<keepContext>`` spans (tags included), per §4.2 step 5."""
    protected: set[int] = set()
    section: str | None = None  # None: the prior summary before the first header (may protect)
    open_span = False
    for number, line in enumerate(lines, start=1):
        body = line
        header = _HEADER_RE.match(line)
        if header:
            section, open_span = header.group(0), False  # a role header closes any span
            body = line[header.end() :]
        if section == TOOL_RESULT_HEADER:
            continue
        tag = body.strip().lower()
        if tag == _OPEN:
            open_span = True  # nested openers flatten into the open span
            protected.add(number)
        elif tag == _CLOSE:
            if open_span:  # stray closers are ignored
                protected.add(number)
                open_span = False
        elif open_span:
            protected.add(number)
    return protected


def ranges_text(numbers: set[int]) -> str:
    """``a-b, c-d`` for sorted runs of numbers, or ``none``."""
    runs = to_runs(numbers)
    return ", ".join(f"{a}-{b}" for a, b in runs) if runs else "none"


def to_runs(numbers: set[int] | list[int]) -> list[tuple[int, int]]:
    """Maximal runs of consecutive numbers, sorted."""
    runs: list[tuple[int, int]] = []
    for n in sorted(numbers):
        if runs and runs[-1][1] == n - 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs
