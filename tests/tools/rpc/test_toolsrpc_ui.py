"""The extension UI sub-protocol (semantics §1) through a local extension and ask_user_question."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from atomic_host.testing import Host

EXT = str(Path(__file__).with_name("ext_toolsrpc.py"))
FIRE_AND_FORGET = {"notify", "setStatus", "setWidget", "setTitle", "set_editor_text"}


def auto_answer(host: Host, answer: Callable[[dict[str, Any]], dict[str, Any] | None]) -> list[dict[str, Any]]:
    """Answer every dialog request with ``answer(request)`` (None: leave it unanswered)."""
    seen: list[dict[str, Any]] = []
    replies: set[asyncio.Future[None]] = set()  # keep references until they are sent

    def on_event(event: dict[str, Any]) -> None:
        if event.get("type") != "extension_ui_request":
            return
        seen.append(event)
        if event["method"] in FIRE_AND_FORGET:
            return
        reply = answer(event)
        if reply is not None:
            task = asyncio.ensure_future(host.client.extension_ui_response(event["id"], **reply))
            replies.add(task)
            task.add_done_callback(replies.discard)

    host.client.on_event(on_event)
    return seen


def probe_answers(request: dict[str, Any]) -> dict[str, Any] | None:
    if "timeout" in request:
        return None  # the timed dialogs fall back to their defaults
    return {
        "select": {"value": "green"},
        "confirm": {"confirmed": True},
        "input": {"value": "Ada"},
        "editor": {"value": "edited text"},
    }[request["method"]]


def check_requests(seen: list[dict[str, Any]]) -> None:
    by_method = {r["method"]: r for r in seen if "timeout" not in r}
    for r in seen:
        assert r["type"] == "extension_ui_request" and uuid.UUID(r["id"])
    assert len({r["id"] for r in seen}) == len(seen)
    assert by_method["select"]["title"] == "Pick a color" and by_method["select"]["options"] == [
        "red",
        "green",
    ]
    assert by_method["confirm"]["title"] == "Proceed?" and by_method["confirm"]["message"] == "This changes things"
    assert by_method["input"]["placeholder"] == "name here"
    assert by_method["editor"]["prefill"] == "prefilled"
    assert [r["timeout"] for r in seen if "timeout" in r] == [300, 300]
    fire = [r for r in seen if r["method"] in FIRE_AND_FORGET]
    assert [{k: v for k, v in r.items() if k not in ("id", "type")} for r in fire] == [
        {"method": "notify", "message": "all done", "notifyType": "warning"},
        {"method": "setStatus", "statusKey": "probe", "statusText": "busy"},
        {
            "method": "setWidget",
            "widgetKey": "probe",
            "widgetLines": ["line 1", "line 2"],
            "widgetPlacement": "belowEditor",
        },
        {"method": "setTitle", "title": "Probe title"},
        {"method": "set_editor_text", "text": "draft text"},
    ]


EXPECTED = {
    "select": "green",
    "confirm": True,
    "input": "Ada",
    "editor": "edited text",
    "timed_select": None,
    "timed_confirm": False,
}


async def test_tool_drives_every_ui_method(rpc_host: Any) -> None:
    async with rpc_host("-e", EXT) as host:
        seen = auto_answer(host, probe_answers)
        host.faux.push({"content": [{"type": "toolCall", "id": "ui-1", "name": "ui_probe", "arguments": {}}]}, "ok")
        events = await host.client.prompt_and_wait("probe the ui")
        end = next(e for e in events if e.get("type") == "tool_execution_end")
        assert end["isError"] is False
        assert json.loads(end["result"]["content"][0]["text"]) == EXPECTED
        check_requests(seen)


async def test_command_ui_and_unknown_or_late_responses(rpc_host: Any) -> None:
    async with rpc_host("-e", EXT) as host:
        c = host.client

        def answers(request: dict[str, Any]) -> dict[str, Any] | None:
            if request["method"] == "input":
                return {"cancelled": True}  # cancelled → the default (None)
            return probe_answers(request)

        seen = auto_answer(host, answers)
        # Responses nobody asked for are dropped silently: no response line, host unaffected.
        before = len(c.lines)
        await c.extension_ui_response("no-such-request", value="x")
        await c.send_raw(b'{"type":"extension_ui_response","id":"also-unknown","confirmed":true}\n')
        await c.prompt_and_wait("/ui-demo")
        entries = (await c.get_entries())["entries"]
        custom = [e for e in entries if e["type"] == "custom" and e.get("customType") == "ui-answers"]
        assert custom and custom[-1]["data"] == {**EXPECTED, "input": None}
        check_requests(seen)
        # Answering a request that already timed out is dropped the same way.
        timed = [r for r in seen if "timeout" in r]
        await c.extension_ui_response(timed[0]["id"], value="a")
        state = await c.get_state()
        assert state["sessionId"]
        stray = [
            json.loads(line)
            for line in c.lines[before:]
            if json.loads(line).get("type") == "response" and json.loads(line)["command"] == "extension_ui_response"
        ]
        assert stray == []


async def test_ask_user_question_through_select(rpc_host: Any) -> None:
    questions = [
        {
            "question": "Which database?",
            "header": "Database",
            "options": [
                {"label": "SQLite", "description": "embedded"},
                {"label": "Postgres", "description": "server"},
            ],
        },
        {
            "question": "Which features?",
            "header": "Features",
            "options": [{"label": "Auth"}, {"label": "Search"}, {"label": "Billing"}],
            "multiSelect": True,
        },
    ]
    async with rpc_host() as host:
        picks = iter(["Postgres — server", "Search", "Auth", "Done"])

        def answer(request: dict[str, Any]) -> dict[str, Any]:
            assert request["method"] == "select"
            value = next(picks)
            assert value in request["options"]
            return {"value": value}

        seen = auto_answer(host, answer)
        host.faux.push(
            {
                "content": [
                    {
                        "type": "toolCall",
                        "id": "ask-1",
                        "name": "ask_user_question",
                        "arguments": {"questions": questions},
                    }
                ]
            },
            "thanks",
        )
        events = await host.client.prompt_and_wait("ask me")
        end = next(e for e in events if e.get("type") == "tool_execution_end")
        assert end["isError"] is False
        assert end["result"]["details"]["answers"] == {
            "Which database?": "Postgres",
            "Which features?": ["Search", "Auth"],
        }
        assert end["result"]["content"][0]["text"] == (
            'User has answered your questions: "Which database?" = "Postgres". '
            '"Which features?" = "Search, Auth". Continue with the user\'s answers in mind.'
        )
        assert seen[0]["title"] == "Database: Which database?"
        assert seen[0]["options"][:2] == ["SQLite — embedded", "Postgres — server"]


async def test_ask_user_question_cancelled(rpc_host: Any) -> None:
    question = {"question": "Go on?", "header": "Go", "options": [{"label": "Yes"}, {"label": "No"}]}
    async with rpc_host() as host:
        auto_answer(host, lambda _r: {"cancelled": True})
        host.faux.push(
            {
                "content": [
                    {
                        "type": "toolCall",
                        "id": "ask-2",
                        "name": "ask_user_question",
                        "arguments": {"questions": [question]},
                    }
                ]
            },
            "ok",
        )
        events = await host.client.prompt_and_wait("ask")
        end = next(e for e in events if e.get("type") == "tool_execution_end")
        assert end["result"]["content"][0]["text"] == "User declined to answer questions"
        assert end["result"]["details"]["cancelled"] is True
