"""Each permission mode against a scripted model that calls ``write``, ``edit`` and ``bash``, through
the real ``atomic --mode rpc`` and the extension UI sub-protocol (docs/permissions.md). Before: no
mode, no flag, no dialog: every tool ran, whatever the user wanted."""

from __future__ import annotations

from pathlib import Path

from appr_helpers import OPTIONS, Dialogs, call, seen_by_model, text, turn, ui_selects

from atomic_host.testing import start_host


def _calls(cwd: Path) -> tuple[dict, dict, dict]:
    (cwd / "app.py").write_text("print('old')\n")
    return (
        call("write", {"path": "new.txt", "content": "fresh\n"}, "w1"),
        call("edit", {"path": "app.py", "edits": [{"oldText": "old", "newText": "new"}]}, "e1"),
        call("bash", {"command": "echo ran > ran.txt"}, "b1"),
    )


async def test_with_nothing_set_tools_run_without_asking_as_before() -> None:
    async with start_host() as host:
        ends = await turn(host, *_calls(host.cwd))
        assert [ends[i]["isError"] for i in ("w1", "e1", "b1")] == [False, False, False]
        assert (host.cwd / "new.txt").read_text() == "fresh\n"
        assert (host.cwd / "app.py").read_text() == "print('new')\n"
        assert (host.cwd / "ran.txt").read_text() == "ran\n"
        assert ui_selects(host) == []
        host.assert_protocol_lines()


async def test_default_mode_asks_with_the_contracted_dialog_and_allow_once_runs() -> None:
    async with start_host("--permission-mode", "default") as host:
        dialogs = Dialogs(host, {"value": "Allow once"}, {"value": "Allow once"}, {"value": "Allow once"})
        ends = await turn(host, *_calls(host.cwd))
        assert dialogs.asked() == ["w1", "e1", "b1"]
        assert [ends[i]["isError"] for i in ("w1", "e1", "b1")] == [False, False, False]
        write, edit, bash = dialogs.requests
        assert write["method"] == "select" and write["options"] == OPTIONS
        assert write["title"] == "Allow write: new.txt?"
        assert write["approval"] == {
            "toolName": "write",
            "toolCallId": "w1",
            "args": {"path": "new.txt", "content": "fresh\n"},
            "diff": "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+fresh\n",
            "scope": f"Write(/{host.cwd / 'new.txt'})",
        }
        assert edit["approval"]["diff"] == (
            "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-print('old')\n+print('new')\n"
        )
        assert bash["title"] == "Allow bash: echo ran > ran.txt?"
        assert "diff" not in bash["approval"] and bash["approval"]["scope"] == "Bash(echo ran > ran.txt)"
        assert (host.cwd / "ran.txt").read_text() == "ran\n"
        # allowed once: the next call asks again
        await turn(host, call("bash", {"command": "echo ran > ran.txt"}, "b2"))
        assert dialogs.asked()[-1] == "b2"
        host.assert_protocol_lines()


async def test_a_denial_keeps_the_files_and_its_message_reaches_the_model() -> None:
    async with start_host("--permission-mode", "default") as host:
        dialogs = Dialogs(
            host,
            {"value": "Deny", "message": "Write to a scratch file under /tmp instead."},
            {"value": "Deny"},
            {"value": "Deny", "message": "   "},
        )
        ends = await turn(host, *_calls(host.cwd))
        assert dialogs.asked() == ["w1", "e1", "b1"]
        assert all(ends[i]["isError"] for i in ("w1", "e1", "b1"))
        assert text(ends["w1"]) == "Write to a scratch file under /tmp instead."
        assert seen_by_model(host, "w1") == "Write to a scratch file under /tmp instead."
        assert seen_by_model(host, "e1") == "The user rejected this tool call"
        assert seen_by_model(host, "b1") == "The user rejected this tool call"
        assert not (host.cwd / "new.txt").exists() and not (host.cwd / "ran.txt").exists()
        assert (host.cwd / "app.py").read_text() == "print('old')\n"


async def test_no_answer_is_a_denial_that_says_why() -> None:
    settings = {"permissions": {"askTimeoutMs": 300}}
    async with start_host("--permission-mode", "default", settings=settings) as host:
        Dialogs(host, {"cancelled": True}, {"value": "Allow always"}, None)
        ends = await turn(host, *_calls(host.cwd))
        assert text(ends["w1"]) == "The write call was not approved: the approval request was cancelled"
        assert text(ends["e1"]) == 'The edit call was not approved: the answer "Allow always" is not one of the options'
        assert text(ends["b1"]) == "The bash call was not approved: the approval request timed out after 300 ms"
        assert seen_by_model(host, "b1") == text(ends["b1"])
        assert not (host.cwd / "new.txt").exists() and not (host.cwd / "ran.txt").exists()


async def test_allow_for_this_session_is_remembered_by_command_prefix_and_path() -> None:
    async with start_host("--permission-mode", "default") as host:
        dialogs = Dialogs(host, *[{"value": "Allow for this session"}] * 3)
        (host.cwd / "notes.txt").write_text("a\n")
        await turn(
            host,
            call("bash", {"command": "git init -q && git status --short"}, "b1"),
            call("write", {"path": "notes.txt", "content": "b\n"}, "w1"),
        )
        assert [r["approval"]["scope"] for r in dialogs.requests] == [
            "Bash(git init:*), Bash(git status:*)",
            f"Write(/{host.cwd / 'notes.txt'})",
        ]
        ends = await turn(
            host,
            call("bash", {"command": "git status"}, "b2"),
            call("bash", {"command": "git init -q; git status --porcelain"}, "b3"),
            call("write", {"path": "./notes.txt", "content": "c\n"}, "w2"),
        )
        assert dialogs.asked() == ["b1", "w1"]  # remembered: no new question
        assert not any(e["isError"] for e in ends.values())
        assert (host.cwd / "notes.txt").read_text() == "c\n"
        # a different command, another file, or git status writing a file: asked again
        await turn(
            host,
            call("bash", {"command": "git log -1"}, "b4"),
            call("bash", {"command": "git status > out.txt"}, "b5"),
            call("write", {"path": "other.txt", "content": "x\n"}, "w3"),
        )
        assert dialogs.asked()[2:] == ["b4", "b5", "w3"]
        # a new session forgets
        await host.client.new_session()
        await turn(host, call("bash", {"command": "git status"}, "b6"))
        assert dialogs.asked()[-1] == "b6"


async def test_accept_edits_runs_edits_in_the_project_and_asks_for_the_rest(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    async with start_host("--permission-mode", "acceptEdits") as host:
        dialogs = Dialogs(host, {"value": "Deny"}, {"value": "Deny"})
        ends = await turn(
            host, *_calls(host.cwd), call("write", {"path": str(outside), "content": "no\n"}, "w2")
        )
        assert dialogs.asked() == ["b1", "w2"]
        assert not ends["w1"]["isError"] and not ends["e1"]["isError"]
        assert (host.cwd / "app.py").read_text() == "print('new')\n"
        assert not (host.cwd / "ran.txt").exists() and not outside.exists()


async def test_plan_mode_refuses_everything_that_is_not_read_only_without_asking() -> None:
    async with start_host("--permission-mode", "plan") as host:
        (host.cwd / "notes.txt").write_text("some notes\n")
        ends = await turn(host, *_calls(host.cwd), call("read", {"path": "notes.txt"}, "r1"))
        assert ui_selects(host) == []
        for i in ("w1", "e1", "b1"):
            name = ends[i]["toolName"]
            expected = f"{name} is not allowed in plan mode: plan mode runs only read-only tools"
            assert ends[i]["isError"] and text(ends[i]).startswith(expected)
        assert seen_by_model(host, "b1").startswith("bash is not allowed in plan mode")
        assert "some notes" in text(ends["r1"]) and not ends["r1"]["isError"]
        assert not (host.cwd / "new.txt").exists() and not (host.cwd / "ran.txt").exists()


async def test_bypass_permissions_asks_nothing_but_deny_rules_still_refuse() -> None:
    settings = {"permissions": {"deny": ["Bash(rm *)"]}}
    async with start_host("--permission-mode", "bypassPermissions", settings=settings) as host:
        (host.cwd / "keep").mkdir()
        ends = await turn(host, *_calls(host.cwd), call("bash", {"command": "cd . && rm -rf keep"}, "b2"))
        assert ui_selects(host) == []
        assert not any(ends[i]["isError"] for i in ("w1", "e1", "b1"))
        assert text(ends["b2"]) == "Permission to use bash was denied by the rule Bash(rm *) (user settings)"
        assert (host.cwd / "keep").is_dir()


async def test_the_mode_comes_from_settings_and_the_flag_wins() -> None:
    settings = {"permissions": {"defaultMode": "plan"}}
    async with start_host(settings=settings) as host:
        ends = await turn(host, call("bash", {"command": "echo hi"}, "b1"))
        assert text(ends["b1"]).startswith("bash is not allowed in plan mode")
    async with start_host("--permission-mode", "bypassPermissions", settings=settings) as host:
        ends = await turn(host, call("bash", {"command": "echo hi"}, "b1"))
        assert not ends["b1"]["isError"]


async def test_the_permissions_command_shows_and_changes_the_mode() -> None:
    async with start_host("--permission-mode", "acceptEdits") as host:
        notices = []
        host.client.on_event(lambda e: e.get("method") == "notify" and notices.append(e["message"]))
        response = await host.client.prompt("/permissions")
        assert response["disposition"] == "handled"
        await host.client.prompt("/permissions plan")
        ends = await turn(host, call("write", {"path": "x.txt", "content": "x"}, "w1"))
        assert text(ends["w1"]).startswith("write is not allowed in plan mode")
        await host.client.prompt("/permissions sometimes")
        assert notices[0].startswith("Permission mode: acceptEdits")
        assert notices[1] == "Permission mode: plan"
        assert notices[2].startswith("unknown permission mode 'sometimes'")
