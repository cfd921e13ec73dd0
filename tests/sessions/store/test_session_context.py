"""Context building (§2.4) and conversion to provider messages."""

from __future__ import annotations

from session_helpers import assistant, tool_result, user

from atomic_host.kit.sessions.tree import Session
from atomic_host.session.context import (
    BRANCH_SUMMARY_PREFIX,
    INTERRUPTED_TOOL_TEXT,
    VERBATIM_COMPACTION_PREFIX,
    bash_execution_to_text,
    build_session_context,
    convert_to_llm,
)


def make(*items) -> Session:
    session = Session({"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/"})
    for kind, fields in items:
        session.append(kind, **fields)
    return session


def msg(message):
    return ("message", {"message": message})


def test_bash_execution_formats():
    base = {"role": "bashExecution", "command": "ls", "cancelled": False, "truncated": False, "timestamp": 1}
    assert bash_execution_to_text({**base, "output": "a\nb", "exitCode": 0}) == "Ran `ls`\n```\na\nb\n```"
    assert (
        bash_execution_to_text({**base, "output": "", "exitCode": 2})
        == "Ran `ls`\n(no output)\n\nCommand exited with code 2"
    )
    text = bash_execution_to_text(
        {
            **base,
            "output": "x",
            "cancelled": True,
            "exitCode": 1,
            "truncated": True,
            "fullOutputPath": "/tmp/o",
        }
    )
    assert text == "Ran `ls`\n```\nx\n```\n\n(command cancelled)\n\n[Output truncated. Full output: /tmp/o]"
    converted = convert_to_llm(
        [{**base, "output": "", "exitCode": None}, {**base, "output": "", "excludeFromContext": True}]
    )
    assert converted == [
        {"role": "user", "content": [{"type": "text", "text": "Ran `ls`\n(no output)"}], "timestamp": 1}
    ]


def test_model_thinking_and_plain_messages():
    session = make(
        ("model_change", {"provider": "a", "modelId": "m1"}),
        ("thinking_level_change", {"thinkingLevel": "high"}),
        msg(user("hi")),
        msg(assistant("yo")),
        ("custom", {"customType": "state", "data": {}}),
        ("label", {"targetId": "x", "label": "l"}),
        ("future_entry_type", {"x": 1}),
        ("custom_message", {"customType": "note", "content": "remember", "display": True}),
        (
            "custom_message",
            {"customType": "hidden", "content": "no", "display": False, "excludeFromContext": True},
        ),
        ("branch_summary", {"fromId": "root", "summary": ""}),
        ("branch_summary", {"fromId": "root", "summary": "tried X"}),
    )
    ctx = build_session_context(session.branch())
    assert ctx.model == {"provider": "faux", "modelId": "faux-1"}  # the assistant message came later
    assert ctx.thinking_level == "high"
    assert [m["role"] for m in ctx.messages] == ["user", "assistant", "custom", "custom", "branchSummary"]
    llm = convert_to_llm(ctx.messages)
    assert [m["role"] for m in llm] == ["user", "assistant", "user", "user"]
    assert llm[2]["content"] == [{"type": "text", "text": "remember"}]
    assert llm[3]["content"][0]["text"] == BRANCH_SUMMARY_PREFIX + "tried X</summary>"


def test_defaults_without_entries():
    ctx = build_session_context([])
    assert ctx.messages == [] and ctx.model is None and ctx.thinking_level == "off"


def test_whitespace_user_dropped_and_redacted_thinking():
    llm = convert_to_llm(
        [
            {"role": "user", "content": "  \n", "timestamp": 1},
            {"role": "user", "content": [{"type": "text", "text": " "}], "timestamp": 2},
            {
                **assistant("a"),
                "content": [{"type": "redacted_thinking", "data": "sig"}, {"type": "text", "text": "a"}],
            },
        ]
    )
    assert len(llm) == 1
    assert llm[0]["content"][0] == {
        "type": "thinking",
        "thinking": "",
        "thinkingSignature": "sig",
        "redacted": True,
    }


def test_tool_pairing_repair():
    call = assistant("t", tool_calls=[("c1", "read"), ("c2", "bash")])
    messages = [
        user("go"),
        call,
        tool_result("c1"),
        tool_result("c1", "dup"),
        tool_result("zz", "orphan"),
        user("interrupting"),
        assistant("ok"),
    ]
    llm = convert_to_llm(messages)
    roles = [(m["role"], m.get("toolCallId")) for m in llm]
    assert roles == [
        ("user", None),
        ("assistant", None),
        ("toolResult", "c1"),
        ("toolResult", "c2"),
        ("user", None),
        ("assistant", None),
    ]
    assert llm[3]["isError"] is True and llm[3]["content"][0]["text"] == INTERRUPTED_TOOL_TEXT
    assert llm[3]["toolName"] == "bash"
    trailing = [user("go"), assistant("t", tool_calls=[("c9", "read")])]
    assert len(convert_to_llm(trailing)) == 2
    repaired = convert_to_llm(trailing, repair_trailing=True)
    assert repaired[-1]["toolCallId"] == "c9" and repaired[-1]["isError"] is True
    # error/aborted turns never executed their calls: no synthetic result
    assert len(convert_to_llm([assistant("x", tool_calls=[("c3", "r")], stop="aborted"), user("n")])) == 2


def test_compaction_boundary_with_kept_tail():
    session = make(msg(user("old question")), msg(assistant("old answer")))
    kept = session.append_message(user("kept question"))
    session.append_message(assistant("kept answer", tool_calls=[("k1", "read")]))
    session.append_message(
        {
            **tool_result("k1", "file text"),
            "content": [
                {"type": "text", "text": "file text"},
                {"type": "image", "data": "AA==", "mimeType": "image/png"},
            ],
        }
    )
    session.append(
        "compaction",
        summary="[User]: old question\n(filtered 1 lines)",
        firstKeptEntryId=kept["id"],
        tokensBefore=500,
        details={"strategy": "verbatim-lines"},
    )
    session.append_message(user("after"))
    ctx = build_session_context(session.branch())
    assert [m["role"] for m in ctx.messages] == ["custom", "user"]
    boundary = ctx.messages[0]
    assert boundary["customType"] == "compaction" and boundary["display"] is True
    assert boundary["details"] == {"strategy": "verbatim-lines", "tokensBefore": 500}
    text = boundary["content"][0]["text"]
    assert text.startswith(
        VERBATIM_COMPACTION_PREFIX + "[User]: old question\n(filtered 1 lines)\n\n[User]: kept question"
    )
    assert '[Assistant]: kept answer\n\n[Assistant tool calls]: read(path="a")\n\n[Tool result]: file text\n' in text
    assert boundary["content"][1] == {"type": "image", "data": "AA==", "mimeType": "image/png"}


def test_non_verbatim_compaction_is_inert_and_null_tail():
    session = make(msg(user("a")), msg(assistant("b")))
    session.append("compaction", summary="legacy", firstKeptEntryId=None, tokensBefore=1, details={})
    assert [m["role"] for m in build_session_context(session.branch()).messages] == ["user", "assistant"]
    session.append(
        "compaction",
        summary="S",
        firstKeptEntryId=None,
        tokensBefore=1,
        details={"strategy": "verbatim-lines"},
    )
    ctx = build_session_context(session.branch())
    assert ctx.messages[0]["content"] == [{"type": "text", "text": VERBATIM_COMPACTION_PREFIX + "S"}]
