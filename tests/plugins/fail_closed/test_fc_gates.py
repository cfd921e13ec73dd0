"""A ``tool_call`` gate that fails can fail closed (issue 23). Before: the guard's syntax error, its
raise, its 30 s timeout and its ``sys.exit`` each let ``rm -rf`` run, and ``-p`` exited 0."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from fc_helper import GUARD, bash_step, blocked, line_of, result_text, run_bash
from pm_helpers import Sandbox
from suite_paths import SAMPLE_PLUGINS

from atomic_host.testing import start_host

FAST = {"hookTimeoutMs": 300}


def _target(cwd: Path, name: str = "keep_me") -> Path:
    target = cwd / name
    (target / "sub").mkdir(parents=True)
    (target / "sub" / "data.txt").write_text("precious")
    return target


async def test_a_declared_fail_closed_gate_blocks_the_call_whenever_it_fails() -> None:
    async with start_host("-e", GUARD, settings=FAST) as host:
        target = _target(host.cwd)
        raised, exited = line_of(GUARD, "raise RuntimeError"), line_of(GUARD, "        sys.exit(2)")
        cases = {
            "raise": f"{GUARD}:{raised}: RuntimeError: the guard's policy file is unreadable",
            "exit": f"{GUARD}:{exited}: SystemExit: sys.exit(2) called; a plugin cannot end the host",
            "hang": "timed out after 300 ms",
            "dict": "returned dict; expected ToolCallDecision or None",
        }
        for how, why in cases.items():
            end, errors = await run_bash(host, f"rm -rf {target.name} # fail={how}")
            assert end["isError"] is True and result_text(end) == blocked(GUARD, why), how
            assert errors == [(GUARD, "tool_call", f"{why}; fails closed")], how
            assert (target / "sub" / "data.txt").read_text() == "precious", how
        # a gate that works still decides as it says, and lets the rest through
        end, errors = await run_bash(host, f"rm -rf {target.name}")
        assert (result_text(end), errors) == ("rm -rf is not allowed", [])
        end, errors = await run_bash(host, "echo fine")
        assert (end["isError"], result_text(end).strip(), errors) == (False, "fine", [])
        assert (target / "sub" / "data.txt").read_text() == "precious"


async def test_by_default_a_failing_gate_fails_open() -> None:
    """What the docs promised before, still the default: a gate that raises has no opinion."""
    async with start_host("-e", GUARD, env={"FC_OPEN": "1"}) as host:
        target = _target(host.cwd, "doomed")
        end, errors = await run_bash(host, f"rm -rf {target.name} # fail=raise")
        assert end["isError"] is False and [e[1] for e in errors] == ["tool_call"]
        assert not target.exists()


async def test_the_setting_makes_every_gate_fail_closed() -> None:
    settings = {**FAST, "hooks": {"failClosed": True}}
    async with start_host("-e", GUARD, env={"FC_OPEN": "1"}, settings=settings) as host:
        target = _target(host.cwd)
        for how in ("raise", "exit", "hang", "dict"):
            end, errors = await run_bash(host, f"rm -rf {target.name} # fail={how}")
            assert end["isError"] is True and result_text(end).startswith(blocked(GUARD, "")), how
            assert [(p, h) for p, h, _ in errors] == [(GUARD, "tool_call")], how
        assert (target / "sub" / "data.txt").read_text() == "precious"


async def test_with_the_setting_an_extension_that_did_not_load_blocks_tool_calls(tmp_path: Path) -> None:
    broken = tmp_path / "guard_broken.py"
    broken.write_text(Path(GUARD).read_text().replace("    if fail == \"raise\":", "    if fail == \"raise\"", 1))
    settings = {"hooks": {"failClosed": True}}
    async with start_host("-e", str(broken), settings=settings) as host:
        target = _target(host.cwd)
        line = line_of(str(broken), 'if fail == "raise"')
        why = f"it did not load ({broken}:{line}: SyntaxError: expected ':')"
        for command in (f"rm -rf {target.name}", "echo harmless"):
            end, errors = await run_bash(host, command)
            assert (end["isError"], result_text(end)) == (True, blocked(str(broken), why)), command
            assert [e for e in errors if e[1] == "tool_call"] == [(str(broken), "tool_call", f"{why}; fails closed")]
        assert target.exists()
    async with start_host("-e", GUARD, settings=settings) as host:
        end, _ = await run_bash(host, "echo harmless")
        assert end["isError"] is False


async def test_a_declared_gate_whose_plugin_failed_to_register_blocks_tool_calls() -> None:
    path = str(Path(GUARD).with_name("fc_register_fails.py"))
    async with start_host("-e", path) as host:
        end, _ = await run_bash(host, "echo harmless")
        raised = f"{path}:{line_of(path, 'raise ValueError')}"
        assert result_text(end) == blocked(path, f"it did not load ({raised}: ValueError: no tools today)")


def test_print_mode_keeps_the_target_and_exits_non_zero(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, bash_step("rm -rf keep_me # fail=exit"), "done")
    target = _target(box.work)
    proc = box.run("-e", GUARD, "-p", "clean up")
    assert proc.returncode == 1
    assert (target / "sub" / "data.txt").read_text() == "precious"
    assert f"extension error in {GUARD} (tool_call): " in proc.stderr
    assert "Tool call blocked: the tool_call gate of" in proc.stderr


def test_atomic_plugins_shows_a_failed_registration(tmp_path: Path) -> None:
    """Before: ``loaded``, ``error: null`` for a plugin whose ``register_tools`` raised."""
    path = str(SAMPLE_PLUGINS / "boom_register.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_")}
    env["ATOMIC_CODING_AGENT_DIR"] = str(tmp_path)
    python = shutil.which("python", path=str(Path(sys.executable).parent)) or sys.executable
    out = subprocess.run(
        [python, "-m", "atomic_host", "plugins", "--json", "-e", path],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    )  # fmt: skip
    [row] = [r for r in json.loads(out.stdout)["plugins"] if r["path"] == path]
    error = f"{path}:{line_of(path, 'raise ValueError')}: ValueError: boom in register_tools"
    assert (row["status"], row["error"], row["hooks"]) == ("failed", error, [])
    text = subprocess.run(
        [python, "-m", "atomic_host", "plugins", "-e", path], capture_output=True, text=True, env=env, timeout=60
    ).stdout
    assert f"local:{path} failed: {error}" in " ".join(text.split())
