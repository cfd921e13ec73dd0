"""The agent loop: context → provider stream → tool calls → tool results → … (semantics §3.2).

One call of :func:`run_agent` is one run: ``agent_start`` … ``agent_end``. Steering is polled
after each turn's whole tool batch; follow-ups only when the loop would otherwise stop.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from atomic_host.agent.truncated_calls import is_cut_off, refused_calls, repeated_cut_off_text
from atomic_host.core.jsonfast import dumps
from atomic_host.kit import secrets
from atomic_host.kit.llm.complete import assistant_message, failed
from atomic_host.kit.llm.stream import ABORTED_MESSAGE
from atomic_host.kit.llm.usage import empty_usage
from atomic_host.plugins.faults import fault_text

if TYPE_CHECKING:
    from atomic_host.agent.ports import RunPorts

ZERO_USAGE = empty_usage()
"""Read-only: the usage sent while a provider has reported none."""


_DELTA_OF_END = {"text_end": "text_delta", "thinking_end": "thinking_delta", "toolcall_end": "toolcall_delta"}
_DELTAS = frozenset(_DELTA_OF_END.values())


class _UpdateEmitter:
    """Turns provider events into ``message_update`` lines. ``usage`` changes a few times per
    message while deltas arrive hundreds of times, so its JSON is encoded once per change.

    Once the host knows a credential, each content block's deltas go through a
    :class:`~atomic_host.kit.secrets.StreamMasker`: a credential split across two deltas is held back
    until it can be masked whole, so the joined deltas equal the masked text of ``message_end``."""

    def __init__(self, emit: Any) -> None:
        self.emit = emit
        self.usage_key: tuple[Any, ...] = ()
        self.usage_json = ""
        self.maskers: dict[Any, tuple[str, secrets.StreamMasker]] = {}
        self.partial: dict[str, Any] = {}
        """The newest partial message: what an abort that had to cancel the stream keeps."""

    def send(self, event: dict[str, Any]) -> None:
        self.partial = event.get("partial") or self.partial
        if not secrets.active():
            self._send(event)
            return
        etype = event.get("type")
        index = event.get("contentIndex")
        if etype in _DELTAS and isinstance(event.get("delta"), str):
            entry = self.maskers.get(index)
            if entry is None:
                entry = self.maskers[index] = (etype, secrets.stream())
            masker = entry[1]
            text = masker.feed(event["delta"])
            if text:
                self._send({**event, "delta": text})
            return
        if etype in _DELTA_OF_END:
            self._release(index)
        self._send(event)

    def flush(self) -> None:
        """Release every held-back tail (the stream ended without closing its blocks)."""
        for index in list(self.maskers):
            self._release(index)

    def _release(self, index: Any) -> None:
        kind, masker = self.maskers.pop(index, ("", None))
        rest = masker.flush() if masker is not None else ""
        if rest:
            self._send({"type": kind, "contentIndex": index, "delta": rest, "partial": self.partial})

    def _send(self, event: dict[str, Any]) -> None:
        partial = event.get("partial") or {}
        usage = partial.get("usage") or ZERO_USAGE
        # Providers update the usage dict in place: its encoding is reused while no field changed
        # (every one counts: reasoning tokens, a plugin's own; the nested cost follows the counts).
        key = tuple(usage.items())
        if key != self.usage_key:
            self.usage_key, self.usage_json = key, dumps(usage)
        delta = dict(event)  # the event without its partial message, its keys in their order
        delta.pop("partial", None)
        update: dict[str, Any] = {"type": "message_update", "usage": usage, "assistantMessageEvent": delta}
        end_turn = partial.get("endTurn")
        if end_turn is not None:
            update["endTurn"] = end_turn
            self.emit(update)
        else:
            line = f'{{"type":"message_update","usage":{self.usage_json},"assistantMessageEvent":{dumps(delta)}}}'
            self.emit(update, line)


async def stream_assistant(
    run: RunPorts, system_prompt: str | None, after_cut_off: bool = False
) -> tuple[dict[str, Any], frozenset[str]]:
    """Stream one assistant message, emitting message_start / message_update / message_end.

    Returns the message and the ids of its tool calls whose arguments were not complete JSON (the
    ``done`` event's ``incompleteToolCalls``). ``after_cut_off``: the run's previous reply was cut
    off inside a tool call; if this one is too, it ends as an error (``truncated_calls``)."""
    emit = run.emit
    model = run.model
    assert model is not None
    emit({"type": "message_start", "message": assistant_message(model, "pending")})
    stream_fn = run.stream_fn(model["api"])
    final: dict[str, Any] | None = None
    incomplete: frozenset[str] = frozenset()
    if run.abort_signal.is_set():
        final = failed("Request was aborted", model, "aborted")
    elif stream_fn is None:
        final = failed(f"No API implementation registered for {model['api']}", model)
    else:
        context = await run.llm_context(system_prompt)
        options = run.stream_options()
        updates = _UpdateEmitter(emit)
        run.in_provider_stream = True
        try:
            async with contextlib.aclosing(stream_fn(model, context, options)) as events:
                async for event in events:
                    etype = event.get("type")
                    if etype == "done":
                        final = event.get("message") or event.get("partial")
                        incomplete = frozenset(event.get("incompleteToolCalls") or ())
                        break
                    if etype == "error":
                        final = event.get("error") or event.get("partial")
                        break
                    updates.send(event)
        except asyncio.CancelledError:
            if not run.cancelled_for_abort:
                raise
            # abort() cancelled a stream that ignored the signal: end the message as aborted.
            run.cancelled_for_abort = False
            asyncio.current_task().uncancel()  # type: ignore[union-attr]
            final = {**failed(ABORTED_MESSAGE, model, "aborted"), "content": updates.partial.get("content", [])}
        except BaseException as exc:  # a provider broke its "never raises" contract (even with sys.exit: faults.py)
            final = failed(f"Provider error: {fault_text(exc)}", model)
        finally:
            run.in_provider_stream = False
        updates.flush()
        if final is None:
            final = failed("Provider stream ended without a terminal event", model)
    final = {k: v for k, v in final.items() if k != "partial"}
    if isinstance(final.get("errorMessage"), str):  # a provider that builds its own error messages
        final["errorMessage"] = secrets.mask(final["errorMessage"])
    if final.get("stopReason") == "pending":
        final["stopReason"] = "error"
    if after_cut_off and is_cut_off(final):
        final["stopReason"], final["errorMessage"] = "error", repeated_cut_off_text(model)
    final = run.end_message(final)
    emit({"type": "message_end", "message": final})
    run.record_message(final)
    return final, incomplete


async def run_agent(
    run: RunPorts,
    new_messages: list[dict[str, Any]],
    system_prompt: str | None,
    poll_steering_first: bool = True,
) -> None:
    """One run: agent_start, turns until the model stops, agent_end. Steering queued before the run
    is polled at its start and delivered after ``new_messages``, before the first model call.

    A ``tool_call`` hook that answers ``terminate`` ends the run after that turn's tool batch: the
    results are recorded, no further model call is made and the queues stay as they are. Between a
    tool batch and the next model call the context may be compacted (``prepare_next_call``)."""
    emit = run.emit
    run_messages: list[dict[str, Any]] = []
    emit({"type": "agent_start"})
    pending = [*new_messages, *run.poll_steering()] if poll_steering_first else new_messages
    cut_off = False  # the previous reply was cut off by the output limit inside a tool call
    while True:
        emit({"type": "turn_start"})
        for message in pending:
            run_messages.append(await run.deliver_message(message))
        pending = []
        assistant, incomplete = await stream_assistant(run, system_prompt, cut_off)
        run_messages.append(assistant)
        run.note_assistant(assistant)
        if assistant["stopReason"] in ("error", "aborted"):
            emit({"type": "turn_end", "message": assistant, "toolResults": []})
            break
        calls = [b for b in assistant.get("content", []) if b.get("type") == "toolCall"]
        results: list[dict[str, Any]] = []
        terminate = False
        cut_off = is_cut_off(assistant)
        if calls:
            # Imported on the first tool call, not at start (with oversized results and the
            # fsio/tempdirs helpers): the first get_state does not wait for them.
            from atomic_host.agent.tool_exec import execute_tool_calls

            # arguments that may be truncated are never run
            refused = refused_calls(assistant, calls, incomplete) if cut_off or incomplete else None
            results, terminate = await execute_tool_calls(run, calls, refused)
            for index, result in enumerate(results):
                emit({"type": "message_start", "message": result})
                results[index] = result = run.end_message(result)
                emit({"type": "message_end", "message": result})
                run.record_message(result)
                run_messages.append(result)
        emit({"type": "turn_end", "message": assistant, "toolResults": results})
        # One event-loop pass per turn, before polling: a provider that answers without ever
        # suspending must not starve the RPC reader (get_state, abort, clear_queue).
        await asyncio.sleep(0)
        if run.abort_signal.is_set() or terminate:
            break
        if calls and not await run.prepare_next_call():
            break  # the context cannot be sent, even compacted (agent_continue_error said why)
        if run.abort_signal.is_set():
            break
        pending = run.poll_steering()
        if pending or calls:
            continue
        pending = run.poll_follow_up()
        if not pending:
            break
    await run.saved()  # agent_end acknowledges the run: its entries are stored (unless aborted)
    emit({"type": "agent_end", "messages": run_messages})
