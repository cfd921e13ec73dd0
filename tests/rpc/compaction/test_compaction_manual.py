"""Manual ``compact`` through the real host with the scripted faux model."""

from __future__ import annotations

from compaction_helpers import LONG_PROMPT, file_entries, of_type, seed, session_file

from atomic_host.testing import read_jsonl, start_host


async def test_manual_compact_end_to_end() -> None:
    async with start_host() as host:
        c = host.client
        await seed(host)
        host.faux.push("1,5\n9,12")
        start = len(c.events)
        result = await c.call("compact")

        # the response data is the result
        assert result["rung"] == "planned"
        assert result["promptVersion"] == 3
        assert result["parameters"] == {"compression_ratio": 0.5, "preserve_recent": 2,
                                        "query": "now the second thing"}
        lines = ["[User]: " + LONG_PROMPT.split("\n")[0], *LONG_PROMPT.split("\n")[1:], "", "[Assistant]: first answer"]
        assert len(lines) == 32
        expected = "\n".join(["(filtered 5 lines)", *lines[5:8], "(filtered 4 lines)", *lines[12:]])
        assert result["compactedText"] == expected
        stats = result["stats"]
        assert (stats["linesBefore"], stats["linesDeleted"], stats["linesKept"], stats["rangeCount"]) == (32, 9, 23, 2)
        assert stats["tokensBefore"] == result["tokensBefore"] > 0

        # events: one start/end pair
        events = c.events[start:]
        assert of_type(events, "compaction_start") == [{"type": "compaction_start", "reason": "manual"}]
        [end] = of_type(events, "compaction_end")
        assert end == {"type": "compaction_end", "reason": "manual", "result": result, "aborted": False,
                       "willRetry": False}

        # the planner request: numbered transcript, targets, no tools
        call = host.faux_calls()[-1]
        prompt = call["context"]["messages"][0]["content"][0]["text"]
        assert "1\u2192[User]: requirement 1" in prompt and "32\u2192[Assistant]: first answer" in prompt
        assert "Keep target: 16 lines" in prompt and "Protected ranges (never delete): none" in prompt
        assert call["context"]["tools"] == []

        # the entry and the backup
        path = session_file(host)
        entries = file_entries(path)
        compaction = entries[-1]
        assert compaction["type"] == "compaction"
        assert compaction["summary"] == expected
        assert compaction["tokensBefore"] == result["tokensBefore"]
        details = compaction["details"]
        assert details["strategy"] == "verbatim-lines" and details["rung"] == "planned"
        assert details["promptVersion"] == 3 and details["stats"] == stats
        kept = next(e for e in entries if e["type"] == "message" and e["message"]["role"] == "user"
                    and e["message"]["content"][0]["text"] == "now the second thing")
        assert compaction["firstKeptEntryId"] == result["firstKeptEntryId"] == kept["id"]
        backup = result["backupPath"]
        assert backup == details["backupPath"]
        assert backup.startswith(str(path) + ".") and backup.endswith(".compact.bak")
        stamp = backup[len(str(path)) + 1 : -len(".compact.bak")]
        assert len(stamp) == 24 and stamp[10] == "T" and stamp.endswith("Z") and ":" not in stamp

        # the backup holds the file as it was before the compaction entry
        assert read_jsonl(backup) == read_jsonl(path)[:-1]

        # get_messages: the synthesized compaction message with the kept tail, nothing else
        messages = (await c.get_messages()).messages
        assert len(messages) == 1
        [message] = messages
        assert message["role"] == "custom" and message["customType"] == "compaction"
        text = message["content"][0]["text"]
        assert expected in text
        assert text.endswith("[User]: now the second thing\n\n[Assistant]: second answer")

        # the next prompt's context starts with it
        host.faux.push("third answer")
        await c.prompt_and_wait("third")
        context = host.faux_calls()[-1]["context"]["messages"]
        assert [m["role"] for m in context] == ["user", "user"]
        assert expected in context[0]["content"][0]["text"]
        assert (await c.get_state())["isCompacting"] is False
        host.assert_protocol_lines()


async def test_too_small_and_unusable_answers() -> None:
    async with start_host() as host:
        c = host.client
        host.faux.push("short")
        await c.prompt_and_wait("hi")
        start = len(c.events)
        response = await c.request({"type": "compact"})
        assert response["success"] is False
        assert response["error"] == "Nothing to compact (session too small)"
        [end] = of_type(c.events[start:], "compaction_end")
        assert end["result"] is None and end["aborted"] is False
        assert end["errorMessage"] == "Compaction failed: Nothing to compact (session too small)"

        await seed(host)
        host.faux.push("I think you should delete lines 1 to 5")
        response = await c.request({"type": "compact"})
        assert response["success"] is False
        assert response["error"].startswith("Compaction failed: ")
        host.faux.push({"stopReason": "error", "errorMessage": "401 invalid api key"})
        response = await c.request({"type": "compact"})
        assert response["error"] == "Compaction failed: 401 invalid api key"
        # nothing was written
        assert not [e for e in file_entries(session_file(host)) if e["type"] == "compaction"]
        assert not list(session_file(host).parent.glob("*.bak"))
        host.assert_protocol_lines()
