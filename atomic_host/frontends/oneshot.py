"""``atomic -p PROMPT`` (rendered with rich) and ``atomic --mode json -p PROMPT`` (events as JSONL).

Exit status: 0 when the final assistant message stopped normally, 1 on an error or abort,
2 when the prompt was rejected before it started.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from atomic_host.core.options import Options


class RichRenderer:
    """Turns agent events into terminal output: streamed text, tool calls, results, a spinner."""

    def __init__(self) -> None:
        from rich.console import Console

        self.console = Console(stderr=False)
        self.err = Console(stderr=True)
        self.status: Any = None
        self.text: dict[int, str] = {}

    def _spin(self, label: str) -> None:
        self._stop_spin()
        if self.console.is_terminal:
            self.status = self.console.status(label)
            self.status.start()

    def _stop_spin(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def __call__(self, event: dict[str, Any]) -> None:
        from rich.markdown import Markdown
        from rich.panel import Panel

        kind = event.get("type")
        if kind == "message_start" and event["message"].get("role") == "assistant":
            self._spin("Thinking…")
        elif kind == "message_end" and event["message"].get("role") == "assistant":
            self._stop_spin()
            message = event["message"]
            for block in message.get("content", []):
                if block.get("type") == "text" and block.get("text", "").strip():
                    if self.console.is_terminal:
                        self.console.print(Markdown(block["text"]))
                    else:  # piped: the plain markdown, not a render padded to the console width
                        self.console.out(block["text"], highlight=False)
                elif block.get("type") == "toolCall":
                    args = ", ".join(f"{k}={v!r}" for k, v in (block.get("arguments") or {}).items())
                    self.console.print(f"[bold cyan]● {block['name']}[/]({args})")
            if message.get("stopReason") in ("error", "aborted"):
                self.err.print(f"[bold red]{message.get('errorMessage') or message['stopReason']}[/]")
        elif kind == "tool_execution_start":
            self._spin(f"Running {event['toolName']}…")
        elif kind == "tool_execution_end":
            self._stop_spin()
            text = "".join(
                b.get("text", "") for b in event["result"].get("content", []) if b.get("type") == "text"
            )
            lines = text.splitlines()
            shown = "\n".join(lines[:20]) + (f"\n… {len(lines) - 20} more lines" if len(lines) > 20 else "")
            style = "red" if event.get("isError") else "dim"
            self.console.print(
                Panel(shown or "(no output)", title=event["toolName"], border_style=style, expand=False)
            )
        elif kind == "auto_retry_start":
            self.err.print(f"[yellow]retrying in {event['delayMs'] / 1000:.0f}s: {event['errorMessage']}[/]")
        elif kind == "extension_error":
            self.err.print(
                f"[red]extension error in {event['extensionPath']} ({event['event']}): {event['error']}[/]"
            )
        elif kind == "agent_settled":
            self._stop_spin()


async def _run(opts: Options) -> int:
    from atomic_host.frontends.rpc.io import Output
    from atomic_host.runtime import Runtime

    json_mode = opts.mode == "json"
    out = Output(fd=sys.stdout.fileno()) if json_mode else Output(fd=os.open(os.devnull, os.O_WRONLY))
    if not json_mode:
        out.listeners.append(RichRenderer())
    rt = Runtime(opts, out=out)
    await rt.start()
    agent = rt.require_session()
    try:
        disposition = await agent.prompt(opts.prompt or "", None, None)
    except Exception as exc:
        print(f"atomic: {exc}", file=sys.stderr)
        await rt.shutdown()
        return 2
    if disposition == "started":
        await agent.wait_idle()
    await rt.shutdown()
    last = next((m for m in reversed(agent.messages) if m.get("role") == "assistant"), None)
    return 0 if last is not None and last.get("stopReason") in ("stop", "length") else 1


def run_oneshot(opts: Options) -> int:
    return asyncio.run(_run(opts))
