"""What a prompt goes through before a run starts (semantics §3.1): slash commands, input hooks,
templates and skills, the threshold compaction, ``before_agent_start``; then the runner runs it, or
queues it while a run streams.

:class:`Prompter` serves ``prompt``, ``steer`` / ``follow_up`` and the extension API's prompts
(``api.send_user_message``); it keeps no state of its own.
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from atomic_host.contract.errors import HostError
from atomic_host.contract.events import BeforeAgentStartEvent, InputEvent
from atomic_host.engine.active import now_ms
from atomic_host.kit.lazy import loaded
from atomic_host.kit.log import log, plugin_log
from atomic_host.kit.messages import message_text
from atomic_host.plugins.faults import debug_traceback, fault_report

if TYPE_CHECKING:
    from atomic_host.engine.active import ActiveSession
    from atomic_host.engine.runner import Runner
    from atomic_host.engine.services import HostServices
    from atomic_host.engine.summaries import Summarizer

IN_COMMAND: ContextVar[asyncio.Task[Any] | None] = ContextVar("atomic_in_command", default=None)
"""The task running a slash command's or a shortcut's handler, while it runs: the session-changing
calls of the API (``api.fork``, ``api.wait_for_idle``, …) are allowed in that task only, as
upstream's command context. Tasks started meanwhile inherit the variable but are other tasks (a run
the command started, an async listener): a hook in a run cannot wait for that run (:func:`in_command`)."""


def in_command() -> bool:
    """Whether the running code is a command's or a shortcut's handler (its own task)."""
    task = IN_COMMAND.get()
    return task is not None and task is asyncio.current_task()

BUSY = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."


class Prompter:
    """The prompt pipeline of one session."""

    def __init__(self, rt: HostServices, active: ActiveSession, runner: Runner, summarizer: Summarizer) -> None:
        self._rt = rt
        self._active = active
        self._runner = runner
        self._summarizer = summarizer

    async def prompt(
        self,
        text: str,
        images: list[dict[str, Any]] | None,
        behavior: str | None,
        source: str = "rpc",
        literal: bool = False,
    ) -> str:
        """The prompt pipeline of semantics §3.1; returns the disposition. ``literal`` (extension
        prompts): no slash-command dispatch, no template or skill expansion."""
        rt, runner = self._rt, self._runner
        images = await self.checked_images(images)
        if text.startswith("/") and not literal:
            name, _, args = text[1:].partition(" ")
            command = rt.commands.get(name)
            if command is not None and not command.is_expansion:
                await self.run_command(command, args)
                return "handled"
        self._summarizer.cancel()
        if runner.queues.paused:
            self._enqueue("followUp" if behavior == "followUp" else "steer", text, images)
            return "queued"
        result = await self.apply_input_hooks(text, images, "prompt", source)
        if result is None:
            return "handled"
        text, images = result
        if not literal:
            text = self.expand_command(text)
        if runner.is_streaming:
            if behavior not in ("steer", "followUp"):
                raise HostError(BUSY)
            self._enqueue(behavior, text, images)
            return "queued"
        runner.flush_deferred_bash()
        runner.retry.restore_user_model()
        await self._load_run_machinery(self._active.require_model())
        await runner.compactor.before_prompt()  # the threshold check before a new prompt
        system_prompt: str | None = None
        extra: list[dict[str, Any]] = []
        if rt.hooks.has_impls("before_agent_start"):  # else no override, no messages: the event's defaults
            start = BeforeAgentStartEvent(text, images)
            await rt.hooks.acall("before_agent_start", event=start)
            system_prompt = start.system_prompt
            extra = [_custom(m) for m in start.messages if isinstance(m, dict)]
        if runner.is_streaming:  # a hook started a run meanwhile (send_message with trigger_turn): queue
            self._enqueue("followUp" if behavior == "followUp" else "steer", text, images)
            return "queued"
        # user message, then nextTurn custom messages, then before_agent_start ones (semantics §3.1.10);
        # the run's first steering poll adds what was queued before (and held by an abort).
        next_turn, runner.next_turn = runner.next_turn, []
        runner.queues.held = False
        runner.start_drive([make_user_message(text, images), *next_turn, *extra], system_prompt)
        return "started"

    async def queue_message(self, kind: str, text: str, images: list[dict[str, Any]] | None) -> str:
        """``steer`` / ``follow_up``: never extension commands; queued (or handled by an input hook)."""
        images = await self.checked_images(images)
        if text.startswith("/"):
            name = text[1:].partition(" ")[0]
            command = self._rt.commands.get(name)
            if command is not None and not command.is_expansion:
                raise HostError(
                    f'Extension command "/{name}" cannot be queued. Use prompt() or execute the command '
                    "when not streaming."
                )
        result = await self.apply_input_hooks(text, images, "steer" if kind == "steer" else "follow_up", "rpc")
        if result is None:
            return "handled"
        text, images = result
        self._enqueue(kind, self.expand_command(text), images)
        self._runner.continue_queued()
        return "queued"

    def _enqueue(self, kind: str, text: str, images: list[dict[str, Any]] | None) -> None:
        message = make_user_message(text, images)
        self._runner.enqueue(kind, message, message_text(message))

    async def checked_images(self, images: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        """``images`` with each one checked (real base64 of a PNG/JPEG/GIF/WebP that decodes) and, with
        ``images.autoResize`` (default on), shrunk to fit 2000x2000; a bad one fails the command, naming it.
        In a thread: a 30 MB screenshot takes a while to decode and shrink."""
        if not images:
            return images
        auto_resize = self._rt.settings.bool("images.autoResize", True)

        def check_all() -> list[dict[str, Any]]:
            import base64

            from atomic_host.kit.images import ImageProblem, decode_base64, prepare

            out = []
            for i, block in enumerate(images):
                try:
                    data = decode_base64(block.get("data"))
                    shrunk, mime, note = prepare(data, block.get("mimeType"), auto_resize=auto_resize)
                except ImageProblem as e:
                    raise HostError(f"images[{i}]: {e}") from None
                if note is None and mime == block.get("mimeType"):
                    out.append(block)  # kept verbatim
                else:
                    out.append({**block, "data": base64.b64encode(shrunk).decode("ascii"), "mimeType": mime})
                    if note:
                        log.info(f"prompt image {i}: {note}")
            return out

        return await asyncio.to_thread(check_all)

    async def apply_input_hooks(
        self, text: str, images: list[dict[str, Any]] | None, kind: str, source: str
    ) -> tuple[str, list[dict[str, Any]] | None] | None:
        """Chain ``input`` hooks: None when one handled the input, else the (transformed) text/images."""
        hooks = self._rt.hooks
        if not hooks.has_impls("input"):
            return text, images
        event = InputEvent(text, images, source, kind)
        if await hooks.acall("input", event=event) is not None:
            return None  # handled: the chain's only result that ends it
        return event.text, event.images

    async def _load_run_machinery(self, model: dict[str, Any]) -> None:
        """What a run imports or builds on first use, done in a thread: the agent loop, tool
        execution and the compaction driver (they load with the first prompt, not before the first
        get_state: issue 12, startup), the model's stream module and the shared HTTP client (a TLS
        context: the CA bundle is read). On the loop, each would stall it (and ``abort``) while it
        loads, or wait there for the RPC warm-up thread that is importing it. Cheap once loaded."""
        await loaded("atomic_host.agent.loop", "atomic_host.agent.tool_exec", "atomic_host.engine.compaction")
        rt = self._rt
        models = rt.models
        if (module := models.stream_module(model["api"])) is not None:
            try:
                await loaded(module)
            except asyncio.CancelledError:
                raise
            except BaseException:  # stream_fn reports a broken module (even one calling sys.exit) when the run asks
                pass
        if models.needs_http(model["api"]) and not rt.has_http_client():
            await asyncio.to_thread(rt.http_client)

    def expand_command(self, text: str) -> str:
        """Expand ``/template args`` and ``/skill:name args``; anything else is returned as is."""
        if not text.startswith("/"):
            return text
        name, _, args = text[1:].partition(" ")
        command = self._rt.commands.get(name)
        if command is None or not command.is_expansion:
            return text
        try:
            return command.get_expander()(args)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # sys.exit() in plugin code is the plugin's error (faults.py)
            plugins = self._rt.plugins
            roots = plugins.roots(plugins.records.get(command.plugin))
            self._rt.extension_error(command.path or command.plugin, "expand", fault_report(exc, roots))
            return text

    async def run_command(self, command: Any, args: str) -> None:
        """Run an extension's slash command; what it raises is that extension's error."""
        handler = command.get_handler()
        await run_handler(self._rt, handler, (args, self._rt.api), command.plugin, f"command:{command.name}", "command")

    async def submit_extension_prompt(
        self, content: str | list[dict[str, Any]], deliver_as: str | None, expand: bool = False
    ) -> str:
        """``api.send_user_message``: a prompt with source ``extension`` (semantics §5.3): text, or
        text and image parts. Literal unless ``expand`` (then a slash command runs, a template or
        skill expands, as for a client's prompt). While streaming, ``deliver_as`` (steer | followUp)
        says how to queue it; without it the prompt is refused like any other (the BUSY error)."""
        if deliver_as not in (None, "steer", "followUp"):
            raise ValueError(f"deliver_as must be 'steer' or 'followUp', got {deliver_as!r}")
        text, images = _text_and_images(content)
        return await self.prompt(text, images, deliver_as, source="extension", literal=not expand)


async def run_handler(
    rt: HostServices, handler: Any, args: tuple[Any, ...], plugin: str, where: str, event: str
) -> str | None:
    """Run a command's or a shortcut's handler (sync or async) as a command (:data:`IN_COMMAND`);
    what it raises is its plugin's error, reported as ``extension_error`` at ``where`` and
    returned (None when it succeeded)."""
    import inspect  # with the first command: not on startup's path

    token = IN_COMMAND.set(asyncio.current_task())
    try:
        result = handler(*args)
        if inspect.isawaitable(result):
            await result
    except asyncio.CancelledError:
        raise
    except BaseException as exc:  # sys.exit() in plugin code is the plugin's error (faults.py)
        plugins = rt.plugins
        why = fault_report(exc, plugins.roots(plugins.records.get(plugin)))
        plugin_log.warning(f"{where} failed: {why}")
        debug_traceback(exc)
        rt.extension_error(where, event, why)
        return why
    finally:
        IN_COMMAND.reset(token)
    return None


def _text_and_images(content: str | list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]] | None]:
    """A prompt's text and images from ``send_user_message``'s content: a string, or a list of
    ``{"type": "text", "text"}`` and ``{"type": "image", "data", "mimeType"}`` parts."""
    if isinstance(content, str):
        return content, None
    if not isinstance(content, list):
        raise TypeError(f"content must be a string or a list of text and image parts, not {type(content).__name__}")
    texts, images = [], []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "image" and isinstance(part.get("data"), str) and isinstance(part.get("mimeType"), str):
            images.append({"type": "image", "data": part["data"], "mimeType": part["mimeType"]})
        else:
            raise ValueError(f"not a text or image part: {str(part)[:200]}")
    return "\n".join(texts), images or None


def make_user_message(text: str, images: list[dict[str, Any]] | None) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for image in images or []:
        content.append({"type": "image", "data": image.get("data", ""), "mimeType": image.get("mimeType", "")})
    return {"role": "user", "content": content, "timestamp": now_ms()}


def _custom(message: dict[str, Any]) -> dict[str, Any]:
    out = {"role": "custom", "display": True, "timestamp": now_ms(), **message}
    out.setdefault("customType", "extension")
    out.setdefault("content", "")
    return out
