"""Permission rules in settings (``permissions.allow`` / ``deny`` / ``ask``, Claude Code's syntax):
deny beats ask beats allow, compound commands are judged by every part, and a project's rules count
only when the project is trusted. Before: settings had no rules; every tool ran."""

from __future__ import annotations

import json
from pathlib import Path

from appr_helpers import Dialogs, call, seen_by_model, text, turn, ui_selects

from atomic_host.testing import start_host

RULES = {
    "permissions": {
        "defaultMode": "default",
        "allow": ["Bash(echo ok:*)", "Bash(git:*)", "Edit(src/**)", "Bash(curl *)"],
        "deny": ["Read(.env)", "Bash(curl *)"],
        "ask": ["Bash(git push:*)"],
    }
}


async def test_allow_deny_and_ask_rules_decide_before_the_mode() -> None:
    async with start_host(settings=RULES) as host:
        (host.cwd / ".env").write_text("SECRET=1\n")
        (host.cwd / "deep").mkdir()
        (host.cwd / "deep" / ".env").write_text("SECRET=2\n")
        dialogs = Dialogs(host, *[{"value": "Deny"}] * 4)
        ends = await turn(
            host,
            call("bash", {"command": "echo ok there"}, "allowed"),
            call("bash", {"command": "echo ok && curl -s http://127.0.0.1:9"}, "denied"),
            call("write", {"path": "src/pkg/mod.py", "content": "x = 1\n"}, "edit-rule"),
            call("write", {"path": "other.py", "content": "y\n"}, "asked-write"),
            call("read", {"path": ".env"}, "env"),
            call("read", {"path": "deep/.env"}, "deep-env"),
            call("bash", {"command": "git push origin main"}, "push"),
            call("bash", {"command": "git --version"}, "git"),
            call("bash", {"command": "echo ok; rm -f other"}, "partly"),
            call("bash", {"command": "echo ok $(touch sneaky)"}, "substituted"),
        )
        assert dialogs.asked() == ["asked-write", "push", "partly", "substituted"]
        assert text(ends["allowed"]).strip() == "ok there"
        assert (host.cwd / "src" / "pkg" / "mod.py").read_text() == "x = 1\n"
        assert text(ends["git"]).startswith("git version")
        deny = "Permission to use {} was denied by the rule {} (user settings)"
        assert text(ends["denied"]) == deny.format("bash", "Bash(curl *)")  # deny beats allow
        assert seen_by_model(host, "env") == deny.format("read", "Read(.env)")
        assert text(ends["deep-env"]) == deny.format("read", "Read(.env)")  # a bare name: any depth
        assert not (host.cwd / "sneaky").exists() and not (host.cwd / "other.py").exists()


async def test_without_a_mode_rules_still_deny_and_ask() -> None:
    settings = {"permissions": {"deny": ["Write"], "ask": ["Bash(rm:*)"]}}
    async with start_host(settings=settings) as host:
        (host.cwd / "f").write_text("x")
        dialogs = Dialogs(host, {"value": "Deny", "message": "keep f"})
        ends = await turn(
            host,
            call("write", {"path": "w.txt", "content": "w"}, "w1"),
            call("bash", {"command": "rm f"}, "b1"),
            call("edit", {"path": "f", "edits": [{"oldText": "x", "newText": "y"}]}, "e1"),
        )
        assert dialogs.asked() == ["b1"]
        assert text(ends["w1"]) == "Permission to use write was denied by the rule Write (user settings)"
        assert text(ends["b1"]) == "keep f"
        assert not ends["e1"]["isError"] and (host.cwd / "f").read_text() == "y"


async def test_project_rules_count_only_in_a_trusted_project(tmp_path: Path) -> None:
    project = tmp_path / "work"
    (project / ".atomic").mkdir(parents=True)
    rules = {"permissions": {"allow": ["Bash"], "deny": ["Edit"], "defaultMode": "bypassPermissions"}}
    (project / ".atomic" / "settings.json").write_text(json.dumps(rules))
    user = {"permissions": {"defaultMode": "default", "deny": ["Bash(rm:*)"]}}
    async with start_host(base=tmp_path, settings=user) as host:  # untrusted: ignored
        dialogs = Dialogs(host, {"value": "Allow once"}, {"value": "Allow once"})
        ends = await turn(
            host,
            call("bash", {"command": "echo hi"}, "b1"),
            call("write", {"path": "a.txt", "content": "a"}, "w1"),
        )
        assert dialogs.asked() == ["b1", "w1"] and not ends["w1"]["isError"]
    (tmp_path / "faux.jsonl").write_text("")  # the second host reads its script from the start
    async with start_host("--approve", base=tmp_path, settings=user) as host:  # trusted: they count
        ends = await turn(
            host,
            call("bash", {"command": "echo hi"}, "b1"),
            call("write", {"path": "a.txt", "content": "b"}, "w1"),
            call("bash", {"command": "rm a.txt"}, "b2"),
        )
        assert ui_selects(host) == []
        assert text(ends["b1"]).strip() == "hi"
        assert text(ends["w1"]) == "Permission to use write was denied by the rule Edit (project settings)"
        assert text(ends["b2"]) == "Permission to use bash was denied by the rule Bash(rm:*) (user settings)"
        assert (project / "a.txt").read_text() == "a"


async def test_a_rule_that_cannot_be_read_is_reported_and_skipped(tmp_path: Path) -> None:
    settings = {"permissions": {"defaultMode": "bypassPermissions", "deny": ["Bash(", 42, "Write"]}}
    with (tmp_path / "stderr.txt").open("w") as err:
        async with start_host(settings=settings, stderr=err.fileno()) as host:
            ends = await turn(host, call("write", {"path": "a", "content": "a"}, "w1"))
            assert text(ends["w1"]).endswith("denied by the rule Write (user settings)")
    stderr = (tmp_path / "stderr.txt").read_text()
    assert "permission rule user settings permissions.deny[0]: 'Bash(' has no closing parenthesis; ignored" in stderr
    assert "permissions.deny[1]: a rule is a string, not int; ignored" in stderr


async def test_a_read_deny_rule_holds_for_every_way_read_names_a_file() -> None:
    """read names a file many ways since it reads archives, databases and URLs (``@.env``,
    ``.env:raw``, ``file://…``, ``a.zip:member``, ``db.sqlite?q=…``): a deny rule on the file holds
    for each. Before: only ``.env`` and ``.env:N`` were refused; the rest read the secret."""
    import sqlite3
    import zipfile

    settings = {"permissions": {"deny": ["Read(.env)", "Read(secrets.zip)", "Read(vault.db)"]}}
    async with start_host(settings=settings) as host:
        (host.cwd / ".env").write_text("SECRET=1\n")
        with zipfile.ZipFile(host.cwd / "secrets.zip", "w") as z:
            z.writestr("inner/key.txt", "SECRET=2\n")
        db = sqlite3.connect(host.cwd / "vault.db")
        db.execute("create table t (v text)")
        db.execute("insert into t values ('SECRET=3')")
        db.commit()
        db.close()
        (host.cwd / "open.txt").write_text("public\n")
        ends = await turn(
            host,
            call("read", {"path": "@.env"}, "at"),
            call("read", {"path": ".env:raw"}, "raw"),
            call("read", {"path": ".env:1-1"}, "range"),
            call("read", {"path": f"file://{host.cwd}/.env"}, "file-url"),
            call("read", {"path": "secrets.zip:inner/key.txt"}, "member"),
            call("read", {"path": "secrets.zip/inner/key.txt"}, "member-slash"),
            call("read", {"path": "vault.db?q=SELECT v FROM t"}, "query"),
            call("read", {"path": "vault.db:t"}, "table"),
            call("read", {"path": "open.txt:1"}, "open"),
        )
        for call_id, rule in [("at", ".env"), ("raw", ".env"), ("range", ".env"), ("file-url", ".env"),
                              ("member", "secrets.zip"), ("member-slash", "secrets.zip"),
                              ("query", "vault.db"), ("table", "vault.db")]:
            assert ends[call_id]["isError"], call_id
            assert text(ends[call_id]) == f"Permission to use read was denied by the rule Read({rule}) (user settings)"
        assert "SECRET" not in json.dumps([e["result"] for e in ends.values()])
        assert "public" in text(ends["open"])


async def test_reload_reads_the_mode_and_the_rules_again() -> None:
    """``reload`` reads settings again: a deny rule added since start refuses, one removed lets the
    call run, and a mode set in settings since start applies. Before: the rules and the mode read at
    start held until the host exited."""
    async with start_host(settings={"permissions": {"deny": ["Bash(touch gone:*)"]}}) as host:
        ends = await turn(host, call("bash", {"command": "touch gone"}, "first"))
        assert text(ends["first"]).startswith("Permission to use bash was denied")
        settings = {"permissions": {"defaultMode": "plan", "deny": ["Bash(touch kept:*)"]}}
        (host.agent_dir / "settings.json").write_text(json.dumps(settings))
        await host.client.call("reload")
        ends = await turn(
            host,
            call("bash", {"command": "touch kept"}, "denied"),
            call("write", {"path": "w.txt", "content": "w"}, "planned"),
            call("read", {"path": "."}, "read"),
        )
        denied = "Permission to use bash was denied by the rule Bash(touch kept:*) (user settings)"
        assert text(ends["denied"]) == denied
        assert text(ends["planned"]).startswith("write is not allowed in plan mode")
        assert not ends["read"]["isError"]
        (host.agent_dir / "settings.json").write_text("{}")
        await host.client.call("reload")
        ends = await turn(host, call("bash", {"command": "touch kept"}, "again"))
        assert not ends["again"]["isError"] and (host.cwd / "kept").exists()
        assert not (host.cwd / "gone").exists() and not (host.cwd / "w.txt").exists()
