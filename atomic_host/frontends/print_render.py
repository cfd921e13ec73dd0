"""What ``atomic -p`` shows a person while a run goes on: the answer as it streams, the thinking
(dimmed), each tool call with a live tail of its output, then a compact result.

:class:`PlainRenderer` is for a pipe or a file: answer tokens go to stdout the moment they arrive
(flushed per delta), everything else to stderr, so ``atomic -p ... > answer.md`` keeps only the
answer. :class:`LiveRenderer` is for a terminal: a rich ``Live`` region re-renders the markdown at
most :data:`FPS` times a second and only its last :data:`LIVE_WINDOW` lines stay redrawable; lines
above are printed for good, so a long answer scrolls like ordinary output.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import re
import threading
import time
from typing import Any, TextIO

FPS = 10
TAIL_LINES = 5
"""Lines of a running tool's output shown live."""
RESULT_LINES = 4
"""Lines of a finished tool's output kept on screen."""
LIVE_WINDOW = 8
"""Rendered markdown lines that may still change; earlier ones are printed for good."""
FREEZE_CHARS = 4096
"""A streamed block is rendered whole every frame until it is this long; then its start, once
printed for good, is left out (see :meth:`LiveRenderer._freeze`)."""
FREEZE_KEEP = 1024
"""Characters at a block's end never left out: the lines that may still change come from there."""
_REFERENCE = re.compile(r"^[ \t>*+\-0-9.)]*\[[^\]\n]*\]:", re.MULTILINE)
"""A line that may be a link reference definition (it applies to the whole block)."""


def _short(value: Any, limit: int = 100) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tool_call_line(name: str, args: dict[str, Any]) -> str:
    return f"● {name}(" + ", ".join(f"{k}={_short(v)}" for k, v in args.items()) + ")"


def result_text(payload: dict[str, Any] | None) -> str:
    blocks = (payload or {}).get("content") or []
    return "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")


def compact_result(text: str) -> list[str]:
    """The first :data:`RESULT_LINES` lines of a tool's output and how many more there were."""
    lines = [line for line in text.rstrip("\n").splitlines() if line.strip()]
    if not lines:
        return ["(no output)"]
    shown = lines[:RESULT_LINES]
    if len(lines) > RESULT_LINES:
        shown.append(f"… +{len(lines) - RESULT_LINES} lines")
    return shown


def _rstrip(line: list[Any]) -> list[Any]:
    """A rendered line without its trailing blanks: a line that fills the width leaves the cursor
    in the last column, where anything the terminal echoes (``^C``) wraps and breaks the redraw."""
    # lazy: rich only for the live terminal view (PlainRenderer never loads it)
    from rich.segment import Segment

    line = list(line)
    while line and not line[-1].control and not line[-1].text.rstrip():
        line.pop()
    if line and not line[-1].control:
        last = line[-1]
        line[-1] = Segment(last.text.rstrip(), last.style, last.control)
    return line


class Renderer:
    """Turns agent events (``Output`` listener records) into calls of the methods below."""

    def __init__(self, hide_thinking: bool = False) -> None:
        self.hide_thinking = hide_thinking
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()

    def __call__(self, event: dict[str, Any]) -> None:
        if threading.get_ident() != self.thread:  # an event sent from a worker thread
            self.loop.call_soon_threadsafe(self, event)
            return
        kind = event.get("type")
        if kind == "message_update":
            delta = event.get("assistantMessageEvent") or {}
            dtype = delta.get("type")
            if dtype == "text_delta":
                self.text(delta.get("delta", ""))
            elif dtype == "thinking_delta" and not self.hide_thinking:
                self.thinking(delta.get("delta", ""))
            elif dtype in ("text_end", "thinking_end"):
                self.end_block()
            elif dtype == "toolcall_end":
                call = delta.get("toolCall") or {}
                self.tool_call(call.get("name", "?"), call.get("arguments") or {})
        elif kind == "message_start" and event["message"].get("role") == "assistant":
            self.waiting("Thinking…")
        elif kind == "message_end" and event["message"].get("role") == "assistant":
            self.end_block()
            message = event["message"]
            if message.get("stopReason") == "error":
                self.note(f"error: {message.get('errorMessage') or 'the model call failed'}", "error")
            elif message.get("stopReason") == "aborted":
                self.note("aborted", "warning")
            self.idle()
        elif kind == "tool_execution_start":
            self.tool_start(event["toolCallId"], event["toolName"])
        elif kind == "tool_execution_update":
            self.tool_update(event["toolCallId"], event["toolName"], result_text(event.get("partialResult")))
        elif kind == "tool_execution_end":
            self.tool_end(event["toolCallId"], event["toolName"], result_text(event.get("result")), event["isError"])
        elif kind == "auto_retry_start":
            self.note(f"retrying in {event['delayMs'] / 1000:.0f}s: {event['errorMessage']}", "warning")
        elif kind == "compaction_start":
            self.note("compacting the conversation…", "info")
        elif kind == "extension_error":
            self.note(f"extension error in {event['extensionPath']} ({event['event']}): {event['error']}", "error")
        elif kind == "agent_settled":
            self.idle()

    # What a renderer shows; the defaults show nothing.
    def text(self, delta: str) -> None: ...
    def thinking(self, delta: str) -> None: ...
    def end_block(self) -> None: ...
    def tool_call(self, name: str, args: dict[str, Any]) -> None: ...
    def tool_start(self, call_id: str, name: str) -> None: ...
    def tool_update(self, call_id: str, name: str, text: str) -> None: ...
    def tool_end(self, call_id: str, name: str, text: str, is_error: bool) -> None: ...
    def waiting(self, label: str) -> None: ...
    def idle(self) -> None: ...
    def note(self, text: str, level: str) -> None: ...

    def notify(self, message: str, level: str = "info") -> None:
        """What an extension command said (``api.ui.notify``)."""
        self.note(message, level)

    def status_line(self, text: str) -> None:
        """Something the person should see now (the Ctrl-C notice)."""
        self.note(text, "warning")

    def close(self) -> None:
        """Finish the screen (end the live region); safe to call twice."""


class PlainRenderer(Renderer):
    """stdout is not a terminal: the answer's tokens on stdout as they arrive, the rest on stderr."""

    def __init__(self, out: TextIO, err: TextIO, hide_thinking: bool = False) -> None:
        super().__init__(hide_thinking)
        self.out, self.err = out, err
        self.open: TextIO | None = None
        self.line_start = {id(out): True, id(err): True}

    def _write(self, stream: TextIO, text: str) -> None:
        if not text:
            return
        try:
            stream.write(text)
            stream.flush()
        except OSError:
            if stream is self.out:
                raise  # the answer could not be delivered: the run stops (frontends/oneshot.py)
            return  # stderr, best effort: a stderr that takes nothing (2>/dev/full) costs no answer
        self.line_start[id(stream)] = text.endswith("\n")

    def _line(self, stream: TextIO, text: str) -> None:
        self.end_block()
        if not self.line_start[id(stream)]:
            self._write(stream, "\n")
        self._write(stream, text + "\n")

    def text(self, delta: str) -> None:
        if self.open is not self.out:
            self.end_block()
        self.open = self.out
        self._write(self.out, delta)

    def thinking(self, delta: str) -> None:
        if self.open is not self.err:
            self.end_block()
        self.open = self.err
        self._write(self.err, delta)

    def end_block(self) -> None:
        if self.open is not None and not self.line_start[id(self.open)]:
            self._write(self.open, "\n")
        self.open = None

    def tool_call(self, name: str, args: dict[str, Any]) -> None:
        self._line(self.err, tool_call_line(name, args))

    def tool_end(self, call_id: str, name: str, text: str, is_error: bool) -> None:
        lines = compact_result(text)
        self._line(self.err, "\n".join(("  ⎿ " if i == 0 else "    ") + line for i, line in enumerate(lines)))

    def note(self, text: str, level: str) -> None:
        self._line(self.err, text)

    def status_line(self, text: str) -> None:
        self._write(self.err, "\n")  # off the line a streamed answer (or a ^C echo) left open
        self._line(self.err, text)

    def notify(self, message: str, level: str = "info") -> None:
        self._line(self.out if level == "info" else self.err, message)

    def close(self) -> None:
        self.end_block()


class LiveRenderer(Renderer):
    """stdout is a terminal: markdown streamed through a rich ``Live`` region, ≤ :data:`FPS` frames a second."""

    is_live = True

    def __init__(self, hide_thinking: bool = False) -> None:
        # lazy: rich only for the live terminal view (PlainRenderer never loads it)
        from rich.console import Console
        from rich.markdown import Markdown  # noqa: F401  (imported now: ~0.2 s at the first delta otherwise)

        super().__init__(hide_thinking)
        self.console = Console()
        self.err = Console(stderr=True)
        self.live: Any = None
        self.kind: str | None = None  # "text" | "thinking": the block being streamed
        self.block = ""
        self.committed = 0
        """Rendered lines of the block already printed above the live region."""
        self.freeze_at = FREEZE_CHARS
        """Length of :attr:`block` at which :meth:`_freeze` is tried next."""
        self.tools: dict[str, tuple[str, str]] = {}
        """Running tools: call id → (name, output so far)."""
        self.label: str | None = None
        self.spinners: dict[str, Any] = {}
        self.status: str | None = None
        """A line kept under everything until the end (the Ctrl-C notice)."""
        self.timer: asyncio.TimerHandle | None = None
        self.last_frame = 0.0
        self.saved_tty = _echo_off()

    # --- the live region ---

    def _dirty(self) -> None:
        if self.timer is None:
            delay = max(0.0, self.last_frame + 1 / FPS - time.monotonic())
            self.timer = self.loop.call_later(delay, self._tick)

    def _tick(self) -> None:
        self.timer = None
        self.last_frame = time.monotonic()
        self._frame()
        if self.label is not None or self.tools:
            self._dirty()  # keep the spinner turning

    def _block_lines(self, source: str | None = None) -> list[Any]:
        # lazy: rich only for the live terminal view (PlainRenderer never loads it)
        from rich.markdown import Markdown
        from rich.segment import Segment
        from rich.text import Text

        block = self.block if source is None else source
        renderable = Markdown(block) if self.kind == "text" else Text(block, style="dim italic")
        lines = [_rstrip(line) for line in self.console.render_lines(renderable, self.console.options, pad=False)]
        while lines and not lines[-1]:
            lines.pop()
        return [[*line, Segment.line()] for line in lines]

    def _frame(self, final: bool = False) -> None:
        """Print the block's settled lines for good and redraw the rest, the spinner and tool tails."""
        # lazy: rich only for the live terminal view (PlainRenderer never loads it)
        from rich.console import Group
        from rich.segment import Segments
        from rich.text import Text

        parts: list[Any] = []
        settled_lines: list[Any] = []
        if self.kind is not None:
            lines = self._block_lines()
            settled = len(lines) if final else max(0, len(lines) - LIVE_WINDOW)
            if settled > self.committed:
                settled_lines, self.committed = lines[self.committed : settled], settled
            if not final:
                parts.append(Segments([s for line in lines[self.committed :] for s in line]))
                if len(self.block) >= self.freeze_at:
                    self._freeze(lines)
        for call_id, (name, output) in self.tools.items():
            parts.append(self._spinner(call_id, f"Running {name}…"))
            for line in output.rstrip("\n").splitlines()[-TAIL_LINES:]:
                parts.append(Text("    " + line, style="dim", no_wrap=True, overflow="ellipsis"))
        if self.label is not None and self.kind is None and not self.tools:
            parts.append(self._spinner("", self.label))
        if self.status is not None:
            parts.append(Text(self.status, style="yellow"))
        if self.live is not None:
            self.live.update(Group(*parts), refresh=False)
            if settled_lines:
                # One redraw per frame: printing above the region redraws the region, so the region
                # gets its new content first (what Live.refresh does, without drawing it).
                live_render = getattr(self.live, "_live_render", None)
                if live_render is None:
                    self.live.refresh()
                else:
                    live_render.set_renderable(self.live.renderable)
        if settled_lines:
            self.console.print(Segments([s for line in settled_lines for s in line]), end="")
        if not parts:
            self._stop_live()
        elif self.live is None:
            # lazy: rich only for the live terminal view (PlainRenderer never loads it)
            from rich.live import Live

            self.live = Live(
                Group(*parts), console=self.console, auto_refresh=False, transient=True, redirect_stderr=True
            )
            self.live.start(refresh=True)
        elif not settled_lines:
            self.live.refresh()

    def _freeze(self, lines: list[Any]) -> None:
        """Leave the start of the block out of every later frame's render when its lines are all
        printed for good and rendering it apart changes nothing: the block is cut where a
        top-level markdown block starts (a line start for thinking), and kept only when the two
        parts render to this frame's ``lines`` with nothing but blank lines between them. Not
        with a possible link reference definition (it applies to text after the cut too).

        Rendering the whole block every frame cost a frame time proportional to the answer so
        far: a 200 KB answer took 112 s of CPU (at a frame per 400 characters), 20 KB 1.2 s."""
        block = self.block
        self.freeze_at = len(block) + FREEZE_CHARS // 2  # a failed try is not repeated every frame
        if "\r" in block or "\0" in block or (self.kind == "text" and _REFERENCE.search(block)):
            return
        for cut in self._cuts(block)[:3]:
            head, tail = self._block_lines(block[:cut]), self._block_lines(block[cut:])
            gap = len(lines) - len(head) - len(tail)
            if gap < 0 or len(head) + gap > self.committed:
                continue
            if (
                lines[: len(head)] == head
                and lines[len(head) + gap :] == tail
                and all(len(line) == 1 for line in lines[len(head) : len(head) + gap])
            ):
                self.block = block[cut:]
                self.committed -= len(head) + gap
                self.freeze_at = len(self.block) + FREEZE_CHARS // 2
                return

    def _cuts(self, block: str) -> list[int]:
        """Where :meth:`_freeze` may cut ``block``, latest first, at least :data:`FREEZE_KEEP`
        characters before its end: the starts of top-level markdown blocks (thinking: of lines)."""
        limit = len(block) - FREEZE_KEEP
        if self.kind != "text":
            cuts: list[int] = []
            end = limit
            while len(cuts) < 3 and (found := block.rfind("\n", 0, end)) >= 0:
                cuts.append(found + 1)
                end = found
            return cuts
        # lazy: rich only for the live terminal view (PlainRenderer never loads it)
        from rich.markdown import Markdown

        starts = [0, *(m.end() for m in re.finditer("\n", block))]
        lines = {t.map[0] for t in Markdown(block).parsed if t.level == 0 and t.map and t.nesting >= 0}
        return sorted((starts[n] for n in lines if 0 < n < len(starts) and starts[n] <= limit), reverse=True)

    def _spinner(self, key: str, label: str) -> Any:
        """One spinner per label and tool call, kept between frames so it turns."""
        # lazy: rich only for the live terminal view (PlainRenderer never loads it)
        from rich.spinner import Spinner
        from rich.text import Text

        spinner = self.spinners.get(key)
        if spinner is None:
            spinner = self.spinners[key] = Spinner("dots", style="cyan")
        spinner.update(text=Text(label, style="cyan"))
        return spinner

    def _stop_live(self) -> None:
        if self.live is not None:
            self.live.update("", refresh=False)
            self.live.stop()
            self.live = None

    def _print(self, *objects: Any, err: bool = False, **kw: Any) -> None:
        self._finish_block()
        if not err:
            self.console.print(*objects, **kw)  # above the live region
            return
        # stderr bypasses the region's bookkeeping: take the region down, print, draw it again.
        self._stop_live()
        self.err.print(*objects, **kw)
        self._frame()

    def _finish_block(self) -> None:
        if self.kind is not None:
            self._frame(final=True)
            self.kind, self.block, self.committed, self.freeze_at = None, "", 0, FREEZE_CHARS
            self._frame()

    # --- events ---

    def _stream(self, kind: str, delta: str) -> None:
        if self.kind != kind:
            self._finish_block()
            self.kind = kind
        self.label = None
        self.block += delta
        self._dirty()

    def text(self, delta: str) -> None:
        self._stream("text", delta)

    def thinking(self, delta: str) -> None:
        self._stream("thinking", delta)

    def end_block(self) -> None:
        self._finish_block()

    def waiting(self, label: str) -> None:
        self.label = label
        self._dirty()

    def idle(self) -> None:
        self.label = None
        self._dirty()

    def tool_call(self, name: str, args: dict[str, Any]) -> None:
        # lazy: rich only for the live terminal view (PlainRenderer never loads it)
        from rich.text import Text

        self.label = None
        self._print(Text(tool_call_line(name, args), style="bold cyan"))

    def tool_start(self, call_id: str, name: str) -> None:
        self.label = None
        self.tools[call_id] = (name, "")
        self._dirty()

    def tool_update(self, call_id: str, name: str, text: str) -> None:
        self.tools[call_id] = (name, text)
        self._dirty()

    def tool_end(self, call_id: str, name: str, text: str, is_error: bool) -> None:
        # lazy: rich only for the live terminal view (PlainRenderer never loads it)
        from rich.text import Text

        self.tools.pop(call_id, None)
        self.spinners.pop(call_id, None)
        lines = compact_result(text)
        body = "\n".join(("  ⎿ " if i == 0 else "    ") + line for i, line in enumerate(lines))
        self._print(Text(body, style="red" if is_error else "dim"))
        self._frame()

    def status_line(self, text: str) -> None:
        self.status = text  # in the live region: printing it would split the answer being streamed
        self._frame()  # now: the run may well be over before the next frame is due

    def note(self, text: str, level: str) -> None:
        # lazy: rich only for the live terminal view (PlainRenderer never loads it)
        from rich.text import Text

        style = {"error": "bold red", "warning": "yellow"}.get(level, "dim")
        self._print(Text(text, style=style), err=True)

    def notify(self, message: str, level: str = "info") -> None:
        # lazy: rich only for the live terminal view (PlainRenderer never loads it)
        from rich.text import Text

        if level == "info":
            self._print(Text(message))
        else:
            self.note(message, level)

    def close(self) -> None:
        self.status = None
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self._finish_block()
        self.tools.clear()
        self.label = None
        self._stop_live()
        if self.saved_tty is not None:
            _restore_tty(self.saved_tty)
            self.saved_tty = None


def _echo_off() -> Any:
    """Stop a terminal on stdin echoing keys (a typed Enter or ``^C`` would break the live region);
    returns what to restore, or None."""
    try:
        # lazy: termios only when stdin is a terminal
        import termios

        if not os.isatty(0):
            return None
        saved = termios.tcgetattr(0)
        quiet = termios.tcgetattr(0)
        quiet[3] &= ~termios.ECHO
        termios.tcsetattr(0, termios.TCSANOW, quiet)
    except Exception:  # no termios, or not a real terminal
        return None
    atexit.register(_restore_tty, saved)
    return saved


def _restore_tty(saved: Any) -> None:
    try:
        # lazy: termios only when stdin is a terminal
        import termios

        termios.tcsetattr(0, termios.TCSANOW, saved)
    except Exception:  # no termios, or not a real terminal
        pass
