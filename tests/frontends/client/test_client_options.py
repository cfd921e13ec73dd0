"""``AtomicOptions`` instead of argv: each field becomes the host's flag or environment, and a
host started from options (with the default command: the ``atomic`` script installed beside the
interpreter) runs with them."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

from atomic_host.client import AtomicOptions, RpcClient, default_command
from atomic_host.testing import FauxScript

EXT = str(Path(__file__).with_name("client_stderr_ext.py"))


def test_each_option_becomes_its_flag() -> None:
    opts = AtomicOptions(
        model="anthropic/claude-sonnet-4-5:high", provider="anthropic", thinking="low", system_prompt="S",
        append_system_prompt="A", tools=["read", "+ls"], exclude_tools=["bash"], extensions=[Path("/e.py")],
        skills=["/s"], prompt_templates=["/p"], session="abc", continue_session=True, persist_session=False,
        session_name="n", permission_mode="plan", trust_project=False, args=["--watch"],
    )  # fmt: skip
    assert opts.argv() == [
        "--model", "anthropic/claude-sonnet-4-5:high", "--provider", "anthropic", "--thinking", "low",
        "--system-prompt", "S", "--append-system-prompt", "A", "--session", "abc", "--name", "n",
        "--permission-mode", "plan", "--tools", "read,+ls", "--exclude-tools", "bash", "-e", "/e.py",
        "--skill", "/s", "--prompt-template", "/p", "--continue", "--no-session", "--no-approve", "--watch",
    ]  # fmt: skip
    assert AtomicOptions(tools=[]).argv() == ["--no-tools"]
    assert AtomicOptions().argv() == []
    env = AtomicOptions(agent_dir="/agent", env={"X_OPT": "1"}).environment()
    assert env["ATOMIC_CODING_AGENT_DIR"] == "/agent" and env["X_OPT"] == "1" and env["PATH"] == os.environ["PATH"]


def test_the_default_command_is_the_installed_script_not_a_guess() -> None:
    command = default_command()
    script = Path(sysconfig.get_path("scripts")) / "atomic"
    assert command == [str(script)] if script.exists() else command == [sys.executable, "-m", "atomic_host"]


async def test_a_host_started_from_options_runs_with_them(tmp_path: Path) -> None:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    faux, log = FauxScript(tmp_path / "faux.jsonl"), tmp_path / "faux-log.jsonl"
    faux.push("from options")
    opts = AtomicOptions(
        cwd=work,
        agent_dir=agent,
        provider="faux",
        system_prompt="You are a terse test assistant.",
        tools=["read", "bash"],
        extensions=[EXT],
        session_name="from-options",
        env={"ATOMIC_FAUX_SCRIPT": str(faux.path), "ATOMIC_FAUX_LOG": str(log)},
    )
    async with RpcClient(opts) as client:
        assert client.command == [*default_command(), "--mode", "rpc"]
        result = await client.run("hello")
        assert result.text == "from options"
        state = await client.get_state()
        assert state.session_name == "from-options" and state.model.provider == "faux"
        tools = await client.get_tools()
        assert sorted(t.name for t in tools.tools if t.active) == ["bash", "read"]
        assert "client-stderr-marker: loaded" in client.get_stderr()
        assert result.session_id == state.session_id
        (session_file,) = (agent / "sessions").rglob("*.jsonl")
        assert str(work) in session_file.read_text().split("\n", 1)[0]  # the session's cwd is the option's
    calls = [line for line in log.read_text().split("\n") if line]
    assert "You are a terse test assistant." in calls[-1]
    assert client.exit_code == 0
