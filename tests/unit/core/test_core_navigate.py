"""navigate_tree through the real host: moving the leaf, re-editing a prompt, summarizing the
abandoned branch with the model."""

from __future__ import annotations

from atomic_host.core.protocol import validate_output_line
from atomic_host.testing import start_host


async def test_navigate_tree_with_summary_appends_branch_summary() -> None:
    async with start_host() as host:
        c = host.client
        host.faux.push("first answer", "second answer", "Tried two prompts; nothing changed on disk.")
        await c.prompt_and_wait("first question")
        await c.prompt_and_wait("second question")
        entries = (await c.get_entries())["entries"]
        users = [e for e in entries if e["type"] == "message" and e["message"]["role"] == "user"]
        second_user = users[1]

        data = await c.navigate_tree(second_user["id"], {"summarize": True, "customInstructions": "Be terse."})
        assert data["editorText"] == "second question"
        summary = data["summaryEntry"]
        assert summary["type"] == "branch_summary"
        assert summary["summary"] == "Tried two prompts; nothing changed on disk."
        assert summary["fromId"] == second_user["parentId"]

        # The summary request saw the abandoned branch as data, with the custom instructions.
        request = host.faux_calls()[-1]["context"]
        text = request["messages"][0]["content"][0]["text"]
        assert "Be terse." in text and "second question" in text and "second answer" in text
        assert "first question" not in text  # before the common ancestor: not abandoned
        assert request["tools"] == []

        # The new context: first exchange plus the summary; the model sees it on the next prompt.
        messages = (await c.get_messages()).messages
        assert [m["role"] for m in messages] == ["user", "assistant", "branchSummary"]
        host.faux.push("ok")
        await c.prompt_and_wait("third question")
        sent = host.faux_calls()[-1]["context"]["messages"]
        assert any("Tried two prompts" in str(m["content"]) for m in sent)
        for line in c.lines:
            validate_output_line(line)


async def test_navigate_tree_errors_and_plain_move() -> None:
    async with start_host() as host:
        c = host.client
        host.faux.push("answer")
        await c.prompt_and_wait("question")
        response = await c.request({"type": "navigate_tree", "targetId": "deadbeef"})
        assert response["success"] is False and response["error"] == "Entry deadbeef not found"
        entries = (await c.get_entries())["entries"]
        assistant = next(e for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant")
        data = await c.navigate_tree(assistant["id"])
        assert data == {"cancelled": False}
        assert (await c.get_entries())["leafId"] == assistant["id"]
