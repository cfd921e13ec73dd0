"""Example local extension: a ``word_count`` tool, a ``/wc`` command and a safety gate.

Try it::

    atomic --mode rpc -e examples/extensions/word_count.py

or copy it to ``~/.atomic/agent/extensions/``. Then the model can call ``word_count``,
``{"type":"prompt","message":"/wc some text"}`` counts words itself, and any ``bash`` tool call
containing ``rm -rf /`` is refused before it runs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from atomic_host import SlashCommand, Tool, ToolCallDecision, ToolContext, ToolError, ToolResult, hookimpl


class WordCountParams(BaseModel):
    text: str | None = Field(None, description="Text to count words in")
    path: str | None = Field(None, description="File to count words in, relative to the working directory")


def count(text: str) -> dict[str, int]:
    return {"words": len(text.split()), "lines": len(text.splitlines()), "chars": len(text)}


async def word_count(params: WordCountParams, ctx: ToolContext) -> ToolResult:
    if (params.text is None) == (params.path is None):
        raise ToolError("Give exactly one of text or path")
    if params.path is not None:
        try:
            text = (Path(ctx.cwd) / params.path).read_text(errors="replace")
        except OSError as exc:
            raise ToolError(f"Cannot read {params.path}: {exc.strerror}") from None
    else:
        text = params.text or ""
    stats = count(text)
    return ToolResult.text(
        f"{stats['words']} words, {stats['lines']} lines, {stats['chars']} characters", stats
    )


async def wc_command(args: str, api: Any) -> None:
    """``/wc TEXT``: count words without the model; the result is kept as a session entry."""
    stats = count(args)
    api.append_entry("word_count", stats)
    api.ui.notify(f"{stats['words']} words")


# Matches "rm -rf /" (or -fr, --recursive --force) aimed at the filesystem root itself.
_DANGEROUS = re.compile(
    r"\brm\s+(-[a-zA-Z]*r[a-zA-Z]*f[a-zA-Z]*|-[a-zA-Z]*f[a-zA-Z]*r[a-zA-Z]*)\s+/(\s|\*|$)"
)


@hookimpl
def register_tools(register):
    register(
        Tool(
            name="word_count",
            description="Count words, lines and characters of a text or a file.",
            params=WordCountParams,
            handler=word_count,
        )
    )


@hookimpl
def register_commands(register):
    register(SlashCommand(name="wc", handler=wc_command, description="Count the words of the arguments"))


@hookimpl
def tool_call(event, api):
    if event.tool_name == "bash" and _DANGEROUS.search(str(event.input.get("command", ""))):
        return ToolCallDecision(block=True, reason="Blocked by word_count.py: refusing to run rm -rf /")
    return None
