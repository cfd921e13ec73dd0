"""Example local extension, after upstream's fork-and-continue commands: ``/try-again [prompt]``
forks the session before its last prompt, switches to the fork and sends a prompt there — the
last one again, or the one given — so the first attempt stays intact in its own session.
``/go-back`` switches back to the session the last fork came from.

Try it::

    atomic --mode rpc -e examples/extensions/fork_and_switch.py

Both are slash commands because session control (``fork``, ``switch_session``,
``wait_for_idle``) is only offered to commands and shortcuts. ``ctrl+shift+f`` does the same
as ``/try-again``.
"""

from __future__ import annotations

from typing import Any

from atomic_host import SlashCommand, hookimpl

ORIGIN = "fork-origin"
"""The custom entry in the fork that names the session it came from."""


def _last_prompt(api: Any) -> dict[str, Any] | None:
    prompts = [e for e in api.session_entries() if e["type"] == "message" and e["message"]["role"] == "user"]
    return prompts[-1] if prompts else None


async def try_again(args: str, api: Any) -> None:
    await api.wait_for_idle()  # a run in progress finishes first: the fork sees all of it
    last = _last_prompt(api)
    if last is None:
        api.ui.notify("Nothing to fork: send a prompt first", "warning")
        return
    origin = api.session_file or api.session_id
    result = await api.fork(last["id"])
    if result["cancelled"]:
        api.ui.notify("A plugin cancelled the fork", "warning")
        return
    api.append_entry(ORIGIN, {"session": origin})
    await api.send_user_message(args.strip() or result["text"])


async def go_back(args: str, api: Any) -> None:
    origins = [e for e in api.session_entries() if e.get("customType") == ORIGIN]
    if not origins:
        api.ui.notify("This session is not a fork made by /try-again", "warning")
        return
    await api.wait_for_idle()
    await api.switch_session(origins[-1]["data"]["session"])


async def try_again_shortcut(api: Any) -> None:
    await try_again("", api)


@hookimpl
def register_commands(register: Any, api: Any) -> None:
    register(SlashCommand(name="try-again", handler=try_again, description="Fork before the last prompt and retry"))
    register(SlashCommand(name="go-back", handler=go_back, description="Back to the session this fork came from"))
    api.register_shortcut("ctrl+shift+f", try_again_shortcut, description="Fork before the last prompt and retry")
