"""``get_state`` right after any navigation (switch, fork, clone, new_session, navigate_tree, a
prompt, a rename) answers what it answers once the context has been built from scratch: the host
may count a freshly opened session's context from the counts the session keeps instead of
building it, and that count must be the built context's length, field for field the same state.
The stored sessions hold what changes the count: an active (verbatim) compaction boundary, an
inactive one, custom messages, branch summaries with and without text, a message that is not an
object."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from srpc_helpers import chat, state

from atomic_host.kit.messages import VERBATIM_STRATEGY
from atomic_host.testing import start_host
from builtin_plugins.stores import open_builtin_store


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(text: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "provider": "faux",
        "model": "faux-1",
        "api": "faux",
        "stopReason": "stop",
        "timestamp": 2,
    }


def stored_sessions(base: Path) -> list[str]:
    """Sessions of every shape the count distinguishes, in the host's store: their ids."""
    cwd = str((base / "work").resolve())
    store = open_builtin_store("jsonl", base / "agent", None, cwd, fsync="never")
    ids = []
    for shape in ("plain", "compacted", "inactive", "extras", "navigated"):
        session = store.new_session(cwd)
        session.append_model_change("faux", "faux-1")
        session.append_thinking_level_change("off")
        first = None
        for i in range(4):
            entry = session.append_message(user(f"q{i} {shape}"))
            first = first or entry["id"]
            session.append_message(assistant(f"a{i}"))
        if shape in ("compacted", "inactive"):
            details = {"strategy": VERBATIM_STRATEGY} if shape == "compacted" else {}
            session.append("compaction", summary="earlier", firstKeptEntryId=first, tokensBefore=9, details=details)
            session.append_message(user("after"))
            session.append_message(assistant("after"))
        elif shape == "extras":
            session.append("custom_message", customType="note", content="n", display=True)
            session.append("branch_summary", fromId="root", summary="went elsewhere")
            session.append("branch_summary", fromId="root", summary="")
            session.append("message", message="not an object")
            session.append_message(assistant("last"))
        elif shape == "navigated":
            session.set_leaf(first)
            session.append_message(assistant("another way"))
        ids.append(session.id)
        session.close()
    store.close()
    return ids


OPS = st.lists(
    st.sampled_from(["switch", "switch", "fork", "clone", "new", "navigate", "prompt", "name", "label"]),
    min_size=1,
    max_size=10,
)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS, picks=st.lists(st.integers(0, 99), min_size=10, max_size=10))
def test_get_state_after_navigation_is_the_built_contexts(tmp_path: Path, ops: list[str], picks: list[int]) -> None:
    asyncio.run(_walk(tmp_path, ops, picks))


async def _walk(tmp_path: Path, ops: list[str], picks: list[int]) -> None:
    base = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
    (base / "work").mkdir(parents=True)
    ids = stored_sessions(base)
    async with start_host("--session", ids[0], base=base) as host:
        c = host.client
        for op, pick in zip(ops, picks, strict=False):
            if op == "switch":
                await c.call("switch_session", sessionId=ids[pick % len(ids)])
            elif op in ("fork", "navigate"):
                entries = (await c.call("get_entries"))["entries"]
                prompts = [
                    e["id"] for e in entries if isinstance(e.get("message"), dict) and e["message"]["role"] == "user"
                ]
                if op == "fork" and prompts:  # refused in a session not saved yet: the state still holds
                    await c.request({"type": "fork", "entryId": prompts[pick % len(prompts)]})
                elif op == "navigate" and entries:
                    await c.call("navigate_tree", targetId=entries[pick % len(entries)]["id"])
            elif op == "clone":
                if (await c.call("get_tree"))["leafId"] is not None:
                    await c.request({"type": "clone"})  # refused as fork is, before the first save
            elif op == "new":
                await c.call("new_session")
            elif op == "prompt":
                await chat(host, f"prompt {pick}")
            elif op == "name":
                await c.call("set_session_name", name=f"name {pick}")
            elif op == "label":
                leaf = (await c.call("get_tree"))["leafId"]
                if leaf is not None:
                    await c.call("set_label", entryId=leaf, label=f"l{pick}")
            first = await state(c)
            messages = (await c.call("get_messages"))["messages"]
            assert first == await state(c)  # the same once the context is built
            assert first["messageCount"] == len(messages), op


async def test_a_message_that_is_not_an_object_is_a_plain_navigation_target(tmp_path: Path) -> None:
    """navigate_tree moves the leaf onto it (nothing to re-edit); fork refuses it as no prompt."""
    (tmp_path / "work").mkdir()
    extras = stored_sessions(tmp_path)[3]
    async with start_host("--session", extras, base=tmp_path) as host:
        c = host.client
        odd = next(e for e in (await c.call("get_entries"))["entries"] if e.get("message") == "not an object")
        moved = await c.call("navigate_tree", targetId=odd["id"])
        assert moved == {"cancelled": False} and (await c.call("get_tree"))["leafId"] == odd["id"]
        refused = await c.request({"type": "fork", "entryId": odd["id"]})
        assert refused["success"] is False and refused["error"] == "Invalid entry ID for forking"
        assert (await state(c))["messageCount"] == len((await c.call("get_messages"))["messages"])
