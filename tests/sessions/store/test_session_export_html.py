"""export_html: self-contained, escaped, every message type rendered."""

from __future__ import annotations

import os
from pathlib import Path

from session_helpers import assistant, tool_result, user

from atomic_host.kit.sessions.tree import Session
from builtin_plugins.export_html.page import default_export_path, export_session, render_html


def build() -> Session:
    s = Session(
        {
            "type": "session",
            "version": 3,
            "id": "sid-1",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": "/p",
        },
        location="/x/2026_sid-1.jsonl",
    )
    s.append_model_change("faux", "m<1>")
    s.append_thinking_level_change("high")
    s.append_message(user("<script>alert(1)</script>"))
    a = assistant("answer & </pre>", tool_calls=[("c1", "read")])
    a["content"].insert(0, {"type": "thinking", "thinking": "<b>hmm</b>"})
    s.append_message(a)
    s.append_message(tool_result("c1", "<img src=x onerror=alert(2)>"))
    s.append_message(
        {
            "role": "user",
            "content": [
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "image", "data": "AA==", "mimeType": "text/html"},
            ],
            "timestamp": 3,
        }
    )
    s.append_message(
        {
            "role": "bashExecution",
            "command": "echo '<x>'",
            "output": "<x>",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "timestamp": 4,
        }
    )
    s.append("custom_message", customType="note", content="<i>custom</i>", display=True)
    s.append("compaction", summary="<summary>", firstKeptEntryId=None, tokensBefore=1, details={})
    s.append("branch_summary", fromId="root", summary="<branch>")
    return s


def test_render_escapes_and_is_self_contained():
    s = build()
    page = render_html(s.header, s.entries, s.leaf_id)
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(2)&gt;" in page
    assert "&lt;b&gt;hmm&lt;/b&gt;" in page and "&lt;i&gt;custom&lt;/i&gt;" in page
    assert "answer &amp; &lt;/pre&gt;" in page
    assert 'src="data:image/png;base64,iVBORw0KGgo="' in page and "data:text/html" not in page
    assert page.count("<details>") >= 4  # thinking, tool call, tool result, bash output
    assert "http://" not in page and "https://" not in page and "<link" not in page
    for marker in ("m&lt;1&gt;", "high", "echo &#x27;&lt;x&gt;&#x27;", "&lt;summary&gt;", "&lt;branch&gt;"):
        assert marker in page


def test_only_active_branch_rendered():
    s = build()
    first = s.entries[2]["id"]
    s.set_leaf(first)
    s.append_message(user("other branch"))
    page = render_html(s.header, s.entries, s.leaf_id)
    assert "other branch" in page and "answer &amp;" not in page


def test_default_path_and_export(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = build()
    assert default_export_path(s) == str(tmp_path / "atomic-session-2026_sid-1.html")
    path = export_session(s)
    assert Path(path).read_text().startswith("<!DOCTYPE html>")
    assert os.stat(path).st_mode & 0o077 == 0
