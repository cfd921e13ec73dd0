"""Where a plugin failed: ``path:line`` in every extension_error, the traceback at DEBUG, and one
line for an ``-e`` path that does not exist. Before: the error was the bare message (``boom``),
DEBUG printed no traceback, and ``-e nope.py`` printed a 12-line traceback of the import machinery,
then ran (exit 0)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from host_helpers import errors_of, plugin
from suite_paths import ROOT as ROOT_DIR

from atomic_host.testing import start_host

BASH = {"content": [{"type": "toolCall", "name": "bash", "arguments": {"command": "echo hi"}, "id": "b1"}]}


@pytest.mark.parametrize("level", ["DEBUG", "INFO"])
async def test_a_raising_hook_is_named_with_its_line_and_at_debug_its_traceback(level: str, tmp_path: Path) -> None:
    path = plugin("boom_tool_call")
    log = tmp_path / "stderr.txt"
    with log.open("wb") as err:
        async with start_host("-e", path, env={"ATOMIC_LOG_LEVEL": level}, stderr=err.fileno()) as host:
            host.faux.push(BASH, "done")
            await host.client.prompt_and_wait("go", timeout=20)
            [error] = errors_of(host)
    assert (error["extensionPath"], error["event"]) == (path, "tool_call")
    assert error["error"] == f"{path}:8: RuntimeError: boom in tool_call"
    stderr = log.read_text()
    assert f"failed in tool_call: {path}:8: RuntimeError: boom in tool_call" in stderr
    traceback = f'Traceback (most recent call last):\n  File "{ROOT_DIR / "atomic_host"}'
    frame = f'  File "{path}", line 8, in tool_call\n    raise RuntimeError("boom in tool_call")\n'
    frame += "RuntimeError: boom in tool_call"
    if level == "DEBUG":
        assert traceback in stderr and frame in stderr
    else:
        assert "Traceback" not in stderr


def _atomic(tmp_path: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_")}
    env["ATOMIC_CODING_AGENT_DIR"] = str(tmp_path)
    command = [sys.executable, "-m", "atomic_host", *args]
    return subprocess.run(command, input=stdin, capture_output=True, env=env, cwd=tmp_path, timeout=60)


@pytest.mark.parametrize(
    "args",
    [
        ("--provider", "faux", "-e", "nope.py", "-p", "hi"),
        ("--provider", "faux", "-e", "nope.py"),  # rpc
        ("plugins", "-e", "nope.py"),
        ("--provider", "faux", "-e", "~/no/such/dir"),
    ],
)
def test_a_missing_extension_path_is_one_line_and_runs_nothing(args: tuple[str, ...], tmp_path: Path) -> None:
    proc = _atomic(tmp_path, *args, stdin=b'{"type":"get_state"}\n')
    missing = args[args.index("-e") + 1]
    assert proc.returncode == 2
    assert proc.stderr.decode() == f"atomic: no such extension file or directory: {missing} (-e/--extension)\n"
    assert proc.stdout == b""  # no run, no get_state answer
    assert not (tmp_path / "sessions").exists()


async def test_a_missing_file_in_the_extensions_setting_is_one_error_and_the_host_serves(tmp_path: Path) -> None:
    missing = tmp_path / "gone.py"
    log = tmp_path / "stderr.txt"
    with log.open("wb") as err:
        async with start_host(settings={"extensions": [str(missing)]}, stderr=err.fileno()) as host:
            assert (await host.client.get_state())["isStreaming"] is False
            [error] = errors_of(host)
    assert (error["extensionPath"], error["event"]) == (str(missing), "import")
    assert error["error"] == f"no such file: {missing}"
    assert "Traceback" not in log.read_text()
