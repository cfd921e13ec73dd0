"""``atomic -p PROMPT`` (print mode) and ``atomic --mode json -p PROMPT`` (every event as JSONL).

Print mode streams the answer (see :mod:`atomic_host.frontends.print_render`), or prints
``--output-format json`` (one result object at the end) or ``stream-json`` (one JSON object per
line, then the result), in the shape ``claude -p`` users script against. Piped stdin is added to
the prompt (prompt, blank line, stdin) or is the prompt when ``-p`` has none; a terminal on stdin
is never read.

Exit status: 0 when the run's last assistant message stopped normally (or a ``/command`` was
handled), 1 on an error or abort, or when a ``tool_call`` gate failed (a safety check that did not
run is a failed run, whether the call went ahead or was blocked), 2 when the prompt was rejected
before it started, 130 after Ctrl-C (the run is aborted and the session kept; a second Ctrl-C exits
at once).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
import time
from typing import TYPE_CHECKING, Any

from atomic_host.contract.records import record
from atomic_host.contract.tools import ApprovalAnswer
from atomic_host.core.options import Options

if TYPE_CHECKING:
    from atomic_host.contract.tools import Approval


@record
class PrintOptions:
    output_format: str = "text"
    """text | json | stream-json"""
    hide_thinking: bool = False
    quiet: bool = False


# --- the prompt -----------------------------------------------------------------------------


def piped_stdin() -> str | None:
    """Everything on stdin when it is a pipe or a file; None for a terminal (never read) or no stdin."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):
        return None
    if os.isatty(fd):
        return None
    try:
        data = sys.stdin.buffer.read()
    except OSError:
        return None
    return data.decode("utf-8", errors="replace")


def build_prompt(prompt: str | None, stdin: str | None) -> str:
    """``prompt``, a blank line, then the piped text (as ``llm`` and ``claude -p`` do)."""
    piped = (stdin or "").rstrip("\r\n")
    prompt = prompt or ""
    if prompt and piped.strip():
        return f"{prompt}\n\n{piped}"
    return prompt or piped


# --- what the run did -----------------------------------------------------------------------


class RunStats:
    """Collects the run's finished messages, usage and command errors (an ``Output`` listener)."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.assistant: list[dict[str, Any]] = []
        self.command_failed = False
        self.gate_failed = False
        self.notices: list[str] = []

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_end" and event["message"].get("role") == "assistant":
            self.assistant.append(event["message"])
        elif kind == "extension_error" and event.get("event") == "command":
            self.command_failed = True
        elif kind == "extension_error" and event.get("event") == "tool_call":
            self.gate_failed = True

    @property
    def last(self) -> dict[str, Any] | None:
        return self.assistant[-1] if self.assistant else None

    def usage(self) -> dict[str, float]:
        total = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "cost": 0.0}
        for message in self.assistant:
            usage = message.get("usage") or {}
            for key in ("input", "output", "cacheRead", "cacheWrite"):
                total[key] += int(usage.get(key) or 0)
            total["cost"] += float((usage.get("cost") or {}).get("total") or 0.0)
        return total

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def result_text(self) -> str:
        last = self.last
        if last is None:
            return "\n".join(self.notices)
        return "".join(b.get("text", "") for b in last.get("content", []) if b.get("type") == "text")

    def ok(self, handled: bool) -> bool:
        if self.command_failed or self.gate_failed:
            return False
        if self.last is None:
            return handled
        return self.last.get("stopReason") in ("stop", "length")


def summary_line(model: dict[str, Any] | None, stats: RunStats) -> str:
    """``provider/model · 1,234 in · 56 out · $0.0123 · 2.1s``"""
    u = stats.usage()
    name = f"{model['provider']}/{model['id']}" if model else "no model"
    tokens = f"{u['input']:,} in · {u['output']:,} out"
    if u["cacheRead"] or u["cacheWrite"]:
        tokens += f" · {u['cacheRead']:,} cache read · {u['cacheWrite']:,} cache write"
    return f"{name} · {tokens} · ${u['cost']:.4f} · {stats.elapsed():.1f}s"


# --- the UI extensions see in print mode ----------------------------------------------------


class PrintUI:
    """No person to ask: dialogs get the answer a dismissed dialog gives, with a line that says so;
    ``notify`` is shown; status, widgets and titles are dropped."""

    has_ui = False

    def __init__(self, notify: Any, warn: Any) -> None:
        self._notify = notify
        self._warn = warn
        self.pending: dict[str, Any] = {}

    def _refuse(self, method: str, title: str, answer: str) -> None:
        self._warn(f'atomic: "{title}" asks for input ({method}), but print mode has no UI: answered {answer}')

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        self._refuse("select", title, "with no choice")
        return None

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None) -> bool:
        self._refuse("confirm", title, "no")
        return False

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None) -> str | None:
        self._refuse("input", title, "with nothing")
        return None

    async def editor(self, title: str, prefill: str = "", *, timeout: float | None = None) -> str | None:
        self._refuse("editor", title, "with nothing")
        return None

    async def approve(self, approval: Approval, *, timeout: float | None = None) -> ApprovalAnswer:
        """Nobody to ask: a denial the approvals plugin words (and reports) itself."""
        return ApprovalAnswer("deny", why="print mode has no one to ask", unasked=True)

    def notify(self, message: str, notify_type: str = "info") -> None:
        self._notify(message, notify_type)

    def set_status(self, key: str, text: str | None) -> None: ...
    def set_widget(self, key: str, lines: list[str] | None, placement: str = "aboveEditor") -> None: ...
    def set_title(self, title: str) -> None: ...
    def set_editor_text(self, text: str) -> None: ...

    def cancel_all(self) -> None: ...


# --- json output ----------------------------------------------------------------------------


class JsonReporter:
    """``--output-format json|stream-json``: ``claude -p``-shaped records on stdout."""

    def __init__(self, stream: bool) -> None:
        self.stream = stream
        self.session_id: str | None = None

    def emit(self, obj: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
        sys.stdout.flush()

    def __call__(self, event: dict[str, Any]) -> None:
        if not self.stream or event.get("type") != "message_end":
            return
        message = event["message"]
        role = message.get("role")
        if role in ("assistant", "toolResult"):
            kind = "assistant" if role == "assistant" else "user"
            self.emit({"type": kind, "message": message, "session_id": self.session_id})

    def init(self, agent: Any, cwd: str) -> None:
        self.session_id = agent.session.id
        if self.stream:
            model = agent.model
            self.emit(
                {
                    "type": "system",
                    "subtype": "init",
                    "session_id": self.session_id,
                    "cwd": cwd,
                    "model": f"{model['provider']}/{model['id']}" if model else None,
                    "tools": [t.name for t in agent.rt.tools.for_model()],
                }
            )

    def close(self) -> None: ...

    def notify(self, message: str, level: str = "info") -> None:
        if self.stream:
            self.emit({"type": "system", "subtype": "notification", "level": level, "message": message})

    def result(self, stats: RunStats, model: dict[str, Any] | None, ok: bool, error: str | None) -> None:
        u = stats.usage()
        last = stats.last or {}
        out: dict[str, Any] = {
            "type": "result",
            "subtype": "success" if ok else "error_during_execution",
            "is_error": not ok,
            "result": stats.result_text(),
            "session_id": self.session_id,
            "model": f"{model['provider']}/{model['id']}" if model else None,
            "num_turns": len(stats.assistant),
            "duration_ms": round(stats.elapsed() * 1000),
            "stop_reason": last.get("stopReason"),
            "total_cost_usd": u["cost"],
            "usage": {
                "input_tokens": u["input"],
                "output_tokens": u["output"],
                "cache_read_input_tokens": u["cacheRead"],
                "cache_creation_input_tokens": u["cacheWrite"],
            },
        }
        error = error or last.get("errorMessage")
        if error and not ok:
            out["error"] = error
        self.emit(out)


# --- the run --------------------------------------------------------------------------------


def _err(text: str) -> None:
    """A line on stderr, best effort: a stderr that takes nothing (``2>/dev/full``) must not turn a
    delivered answer into a failure (the summary line's ENOSPC ended a good run with 1)."""
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except OSError:
        pass


def _dim(text: str) -> str:
    return f"\x1b[2m{text}\x1b[0m" if sys.stderr.isatty() else text


async def _run(opts: Options, popts: PrintOptions) -> int:
    # here, not at the top: an empty prompt (exit 2) costs none of it, and Ctrl-C while loading is run_oneshot's
    from atomic_host.contract.errors import HostError
    from atomic_host.frontends.hints import explain
    from atomic_host.frontends.print_render import LiveRenderer, PlainRenderer, Renderer
    from atomic_host.frontends.rpc.io import Output, stdout_failure
    from atomic_host.kit.log import plugin_log
    from atomic_host.plugins.faults import host_exit
    from atomic_host.runtime import Runtime

    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    events_mode = opts.mode == "json"
    stats = RunStats()
    if events_mode:
        out = Output(fd=sys.stdout.fileno())
        view: Any = None
    else:
        out = Output()
        out.closed = True  # the listeners get every record; nothing is written as JSON
        if popts.output_format != "text":
            view = JsonReporter(stream=popts.output_format == "stream-json")
        elif os.isatty(sys.stdout.fileno()):
            view = LiveRenderer(popts.hide_thinking)
        else:
            view = PlainRenderer(sys.stdout, sys.stderr, popts.hide_thinking)
        if isinstance(view, Renderer):  # it shows each extension_error: the log's copy would repeat it
            plugin_log.setLevel(logging.ERROR)
    aborting: set[asyncio.Task[None]] = set()
    gone: int | None = None
    """The exit status once stdout failed: 141 when its reader left, 1 for any other failure."""

    def stdout_gone(exc: OSError) -> None:
        """A write to stdout failed: its reader left (``atomic -p … | head``, EPIPE) or it takes no
        more (``> /dev/full``). The rest goes to /dev/null, so no later write or the interpreter's
        last flush fails again, and the run stops."""
        nonlocal gone
        if gone is not None:
            return
        gone, what = stdout_failure(exc)
        _err(f"atomic: {what}; stopping the run")
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        agent = rt.session
        if agent is not None and agent.is_streaming:
            task = loop.create_task(agent.abort())
            aborting.add(task)
            task.add_done_callback(aborting.discard)

    def guarded(listener: Any) -> Any:
        """``listener`` (a renderer writing to stdout) with a failed write handled, not raised
        into the run (a broken pipe failed it as "could not save the session", a full disk as a
        provider error)."""

        def call(record: dict[str, Any]) -> None:
            if gone is not None:  # the run's end (aborted) would only be noise on stderr now
                return
            try:
                listener(record)
            except OSError as exc:  # only stdout's: the renderers write nothing else that can fail
                stdout_gone(exc)

        return call

    out.on_broken = stdout_gone
    out.listeners.append(stats)
    if view is not None:
        out.listeners.append(guarded(view))
    if view is not None:

        def notify(message: str, level: str = "info") -> None:
            stats.notices.append(message)
            view.notify(message, level)

        ui: Any = PrintUI(notify, lambda text: view.notify(text, "warning"))
    else:
        # lazy: rpc.ui only for --mode json (dialogs as events)
        from atomic_host.frontends.rpc.ui import RpcUI

        ui = RpcUI(out, has_ui=False)  # json mode: dialogs go out as extension_ui_request events
    rt = Runtime(opts, out, ui)

    interrupted = 0

    def on_sigint() -> None:
        nonlocal interrupted
        interrupted += 1
        if interrupted > 1:
            if view is not None:
                view.close()
            _err("atomic: interrupted")
            try:
                sys.stdout.flush()
            finally:
                host_exit(130)
        notice = "atomic: interrupted; stopping the run (Ctrl-C again to quit at once)"
        if isinstance(view, Renderer):
            view.status_line(notice)
        else:
            _err(notice)
        agent = rt.session
        if agent is not None and agent.is_streaming:
            task = loop.create_task(agent.abort())
            aborting.add(task)
            task.add_done_callback(aborting.discard)
        elif main is not None:
            main.cancel()

    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
    except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here
        pass

    code = 0
    handled = False
    try:
        try:
            await rt.start()
        except Exception as exc:
            _err(f"atomic: failed to start: {type(exc).__name__}: {exc}")
            return 1
        agent = rt.require_session()
        if isinstance(view, JsonReporter):
            view.init(agent, rt.cwd)
        try:
            disposition = await agent.prompt(opts.prompt or "", None, None)
        except Exception as exc:
            message = explain(str(exc), rt.models, opts) if isinstance(exc, HostError) else str(exc)
            if isinstance(view, JsonReporter):
                view.result(stats, agent.model, False, message)
            else:
                _err(f"atomic: {message}")
            return 2
        handled = disposition == "handled"
        await agent.wait_idle()
    except asyncio.CancelledError:
        if main is not None:
            main.uncancel()
        code = 130
    finally:
        if view is not None:
            view.close()
        try:
            await rt.shutdown()
        except asyncio.CancelledError:
            code = 130
        except Exception as exc:  # after a failed start, say, there may be little to shut down
            _err(f"atomic: shutdown failed: {type(exc).__name__}: {exc}")
    if interrupted:
        code = 130
    ok = stats.ok(handled)
    model = rt.session.model if rt.session is not None else None
    if isinstance(view, JsonReporter):
        try:
            view.result(stats, model, ok and not code, "interrupted" if code == 130 else None)
        except OSError as exc:
            stdout_gone(exc)
    elif view is not None and not popts.quiet and (stats.assistant or not handled) and gone is None:
        _err(_dim(summary_line(model, stats)))
    if gone is not None:
        return gone
    if code:
        return code
    return 0 if ok else 1


def run_oneshot(opts: Options, popts: PrintOptions | None = None) -> int:
    popts = popts or PrintOptions()
    try:
        if opts.mode == "print":
            opts.prompt = build_prompt(opts.prompt, piped_stdin())
            if not opts.prompt.strip():
                _err('atomic: no prompt: atomic -p "PROMPT", or pipe one in: echo "PROMPT" | atomic -p')
                return 2
        return asyncio.run(_run(opts, popts))
    except KeyboardInterrupt:  # before the loop's own handler was in place
        _err("\natomic: interrupted")
        return 130
