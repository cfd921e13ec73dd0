"""A plugin shipped as an installed distribution, found through its ``atomic_host`` entry point."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from atomic_host.client import RpcClient
from atomic_host.testing import FauxScript, Host, host_env

PYPROJECT = """\
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "atomic-ep-demo"
version = "1.2.3"

[project.entry-points.atomic_host]
ep_demo = "atomic_ep_demo"
"""

MODULE = """\
from atomic_host import hookimpl
from atomic_host.contract.commands import SlashCommand


def _run(args, api):
    api.append_entry("ep_demo", {"args": args})


@hookimpl
def register_commands(register):
    register(SlashCommand("epcmd", _run, description="from an installed package"))
"""

QUEUE_ERROR = 'Extension command "/epcmd" cannot be queued. Use prompt() or execute the command when not streaming.'


def _make_venv(tmp: Path) -> Path:
    """A venv that sees this environment's packages, with the demo distribution pip-installed."""
    pkg = tmp / "pkg"
    (pkg / "atomic_ep_demo").mkdir(parents=True)
    (pkg / "pyproject.toml").write_text(PYPROJECT)
    (pkg / "atomic_ep_demo" / "__init__.py").write_text(MODULE)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    # The test runner's own site-packages is a venv too (not "system"): chain it in with a .pth,
    # processed with addsitedir so the editable atomic_host install is seen as well.
    site = Path(
        subprocess.check_output(
            [str(python), "-c", "import sysconfig;print(sysconfig.get_path('purelib'))"], text=True
        ).strip()
    )
    parent = sysconfig.get_path("purelib")
    (site / "_atomic_parent.pth").write_text(f"import site; site.addsitedir({parent!r})\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            str(pkg),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return python


@pytest.mark.slow  # building and installing a wheel costs ~4 s here
async def test_entry_point_plugin_command(tmp_path: Path) -> None:
    python = _make_venv(tmp_path)
    agent, work = tmp_path / "agent", tmp_path / "work"
    agent.mkdir()
    work.mkdir()
    faux = FauxScript(tmp_path / "faux.jsonl")
    client = RpcClient(
        ["--provider", "faux"],
        command=[str(python), "-m", "atomic_host", "--mode", "rpc"],
        cwd=str(work),
        env=host_env(agent, faux.path, tmp_path / "faux-log.jsonl", {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}),
    )
    await client.start()
    host = Host(client, agent, work, faux, tmp_path / "faux-log.jsonl")
    try:
        commands = (await client.get_commands()).commands
        ep = next(c for c in commands if c["name"] == "epcmd")
        assert ep["source"] == "extension" and ep["path"].startswith("entrypoint:ep_demo")
        assert ep["description"] == "from an installed package"
        assert (await client.call("prompt", message="/epcmd idle"))["disposition"] == "handled"

        # While the agent streams, the command still runs at once; steer/follow_up refuse it.
        faux.push({"content": [{"type": "text", "text": "slow reply"}], "delayMs": 1500})
        start = len(client.events)
        assert (await client.call("prompt", message="go"))["disposition"] == "started"
        await client.wait_for_event("agent_start", after=start)
        assert (await client.call("prompt", message="/epcmd busy"))["disposition"] == "handled"
        assert not any(e["type"] == "agent_end" for e in client.events[start:])
        for kind in ("steer", "follow_up"):
            refused = await client.request({"type": kind, "message": "/epcmd x"})
            assert refused["success"] is False and refused["error"] == QUEUE_ERROR
        await client.wait_for_idle(after=start)
        entries = (await client.call("get_entries"))["entries"]
        customs = [e["data"]["args"] for e in entries if e.get("customType") == "ep_demo"]
        assert customs == ["idle", "busy"]
    finally:
        assert await client.close() == 0
    host.assert_protocol_lines()
