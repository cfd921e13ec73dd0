"""The approvals gate fails closed while it has a policy to keep: when it raises, outlives
``hookTimeoutMs`` or cannot load while the permission mode asks for approvals, the call is blocked,
not run unasked. With nothing set it fails open, as every other gate does by default. The faults
are injected from outside the host (``appr_inject/sitecustomize.py`` on ``PYTHONPATH``)."""

from __future__ import annotations

from pathlib import Path

from appr_helpers import call, text, turn, ui_selects

from atomic_host.testing import start_host

INJECT = str(Path(__file__).with_name("appr_inject"))
GATE = "builtin:builtin_plugins.approvals"


def _env(fault: str) -> dict[str, str]:
    return {"PYTHONPATH": INJECT, "APPR_FAULT": fault}


def _blocked(why: str) -> str:
    return f"Tool call blocked: the tool_call gate of {GATE} failed and fails closed: {why}"


async def test_a_gate_that_raises_blocks_in_an_asking_mode_and_not_when_nothing_is_set() -> None:
    async with start_host("--permission-mode", "default", env=_env("raise")) as host:
        ends = await turn(host, call("bash", {"command": "touch made"}, "b1"))
        assert text(ends["b1"]).startswith(_blocked(""))
        assert text(ends["b1"]).endswith("RuntimeError: injected: the approvals gate broke")
        assert not (host.cwd / "made").exists()
    async with start_host("--permission-mode", "bypassPermissions", env=_env("raise")) as host:
        ends = await turn(host, call("bash", {"command": "touch made"}, "b1"))
        assert not ends["b1"]["isError"] and (host.cwd / "made").exists()


async def test_a_gate_that_times_out_blocks() -> None:
    settings = {"hookTimeoutMs": 300, "permissions": {"defaultMode": "acceptEdits"}}
    async with start_host(env=_env("hang"), settings=settings) as host:
        ends = await turn(host, call("write", {"path": "a.txt", "content": "a"}, "w1"))
        assert text(ends["w1"]) == _blocked("timed out after 300 ms")
        assert not (host.cwd / "a.txt").exists()


async def test_a_plugin_that_cannot_load_blocks_tool_calls_while_a_mode_asks() -> None:
    async with start_host("--permission-mode", "plan", env=_env("import")) as host:
        (host.cwd / "notes.txt").write_text("n\n")
        ends = await turn(host, call("read", {"path": "notes.txt"}, "r1"), call("bash", {"command": "touch x"}, "b1"))
        for call_id in ("r1", "b1"):
            assert text(ends[call_id]).startswith(_blocked("it did not load ("))
            assert "ImportError: injected: the approvals plugin does not load" in text(ends[call_id])
        assert not (host.cwd / "x").exists()
    async with start_host(env=_env("import")) as host:  # nothing set: nothing to keep
        ends = await turn(host, call("bash", {"command": "touch x"}, "b1"))
        assert not ends["b1"]["isError"] and (host.cwd / "x").exists()


async def test_a_disabled_plugin_is_the_users_choice(tmp_path: Path) -> None:
    settings = {"disabledPlugins": ["builtin_plugins.approvals"], "permissions": {"defaultMode": "default"}}
    with (tmp_path / "stderr.txt").open("w") as err:
        async with start_host(settings=settings, stderr=err.fileno()) as host:
            ends = await turn(host, call("bash", {"command": "touch x"}, "b1"))
            assert not ends["b1"]["isError"] and ui_selects(host) == []
    warning = "permission mode default has no effect: builtin_plugins.approvals is disabled (disabledPlugins)"
    assert warning in (tmp_path / "stderr.txt").read_text()
