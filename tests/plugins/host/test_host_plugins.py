"""Plugin isolation, discovery, trust and stdout hygiene, against the real host subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from host_helpers import errors_of, plugin

from atomic_host.testing import start_host


async def test_broken_plugins_are_isolated(rpc_host) -> None:
    broken = ["boom_import", "boom_register", "boom_tool_call", "boom_on_event"]
    args = [a for name in [*broken, "hello_cmd"] for a in ("-e", plugin(name))]
    async with rpc_host(*args) as host:
        c = host.client
        await c.get_state()
        errs = errors_of(host)
        by_path = {e["extensionPath"]: e for e in errs}
        assert by_path[plugin("boom_import")]["event"] == "import"
        assert "boom at import" in by_path[plugin("boom_import")]["error"]
        assert by_path[plugin("boom_register")]["event"] == "register_tools"
        assert "boom in register_tools" in by_path[plugin("boom_register")]["error"]

        # The healthy plugin's command and tool work.
        names = [x["name"] for x in (await c.get_commands()).commands]
        assert names == ["workflow", "permissions", "hello"]  # the built-ins, then the healthy plugin
        assert (await c.call("prompt", message="/hello there"))["disposition"] == "handled"

        host.faux.tool_call("hello_tool", {}, call_id="t1")
        host.faux.push("done")
        events = await c.prompt_and_wait("use the tool")
        end = next(e for e in events if e["type"] == "tool_execution_end")
        assert end["isError"] is False, end
        assert end["result"]["content"][0]["text"] == "hello from tool"
        assert (await c.get_last_assistant_text()).text == "done"

        hooks = {(e["extensionPath"], e["event"]) for e in errors_of(host)}
        assert (plugin("boom_tool_call"), "tool_call") in hooks
        assert (plugin("boom_on_event"), "on_event") in hooks
        on_event = next(e for e in errors_of(host) if e["event"] == "on_event")
        assert on_event["error"] == f"{plugin('boom_on_event')}:8: RuntimeError: boom in on_event"
        assert (await c.request({"type": "get_state"}))["success"]


async def test_plugin_stdout_goes_to_stderr_and_secrets_never_echo(tmp_path: Path) -> None:
    secret = "sk-test-SECRET-9f8e7d"
    log = tmp_path / "stderr.txt"
    with log.open("wb") as err:
        async with start_host("-e", plugin("noisy_stdout"), "--api-key", secret, stderr=err.fileno()) as host:
            c = host.client
            await c.get_state()
            assert (await c.call("prompt", message="/noisy"))["disposition"] == "handled"
            await c.call("bash", command="echo from-bash; echo from-bash-err >&2")
            host.faux.push("hi")
            await c.prompt_and_wait("hello")

    host.assert_protocol_lines()  # no NOISE line on stdout
    stderr = log.read_text()
    for noise in ("NOISE-AT-IMPORT", "NOISE-WRITE", "NOISE-IN-REGISTER", "NOISE-IN-COMMAND"):
        assert noise in stderr
        assert not any(noise in line for line in c.lines)
    assert secret not in stderr
    assert not any(secret in line for line in c.lines)


async def test_no_extensions_skips_global_dir_but_keeps_e(rpc_host, tmp_path: Path) -> None:
    ext = tmp_path / "agent" / "extensions"
    ext.mkdir(parents=True)
    shutil.copy(plugin("marker"), ext / "marker.py")
    async with rpc_host("--no-extensions", "-e", plugin("hello_cmd")) as host:
        assert [x["name"] for x in (await host.client.get_commands()).commands] == ["workflow", "permissions", "hello"]
    assert not (ext / "ran.marker").exists()
    async with rpc_host() as host:
        await host.client.get_state()
    assert (ext / "ran.marker").exists()  # without the flag the global dir loads


def _project(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A project dir with ``.atomic/extensions/marker.py``; returns (cwd, marker file)."""
    cwd = tmp_path / name
    ext = cwd / ".atomic" / "extensions"
    ext.mkdir(parents=True)
    shutil.copy(plugin("marker"), ext / "marker.py")
    return cwd, ext / "ran.marker"


async def test_project_extensions_need_trust(rpc_host, tmp_path: Path) -> None:
    cwd, marker = _project(tmp_path, "untrusted")
    async with rpc_host(cwd=cwd) as host:
        await host.client.get_state()
    assert not marker.exists()
    async with rpc_host("--approve", cwd=cwd) as host:
        await host.client.get_state()
    assert marker.exists()

    cwd, marker = _project(tmp_path, "saved")
    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "trust.json").write_text(json.dumps({os.path.realpath(cwd): True}))
    async with rpc_host(cwd=cwd) as host:
        await host.client.get_state()
    assert marker.exists()
    marker.unlink()
    async with rpc_host("--no-approve", cwd=cwd) as host:  # the flag beats the saved decision
        await host.client.get_state()
    assert not marker.exists()

    cwd, marker = _project(tmp_path, "always")
    (tmp_path / "agent" / "trust.json").unlink()
    async with rpc_host(cwd=cwd, settings={"defaultProjectTrust": "always"}) as host:
        await host.client.get_state()
    assert marker.exists()


def test_plugins_json_lists_source_version_status_hooks_order(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_") or k == "ATOMIC_PLAIN"}
    env["ATOMIC_CODING_AGENT_DIR"] = str(tmp_path)
    out = subprocess.run(
        [
            shutil.which("python", path=str(Path(os.sys.executable).parent)) or os.sys.executable,
            "-m",
            "atomic_host",
            "plugins",
            "--json",
            "-e",
            plugin("hello_cmd"),
            "-e",
            plugin("boom_import"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        check=True,
    )
    report = json.loads(out.stdout)
    rows = {r["path"]: r for r in report["plugins"]}
    hello = rows[plugin("hello_cmd")]
    assert hello["source"] == "local" and hello["status"] == "loaded"
    assert hello["hooks"] == ["register_commands", "register_tools"]
    assert rows[plugin("boom_import")]["status"] == "failed"
    assert "boom at import" in rows[plugin("boom_import")]["error"]
    builtin = rows["builtin:builtin_plugins.tools"]
    assert builtin["source"] == "builtin" and builtin["status"] == "loaded" and "version" in builtin
    order = report["callOrder"]["register_tools"]
    assert hello["name"] in order and "builtin_plugins.tools" in order
    # pluggy calls later registrations first: the local file runs before the built-ins.
    assert order.index(hello["name"]) < order.index("builtin_plugins.tools")


async def test_a_hook_wrapper_is_refused_with_a_clear_error(rpc_host) -> None:
    """Each implementation is called on its own (plugins/dispatch.py), so a pluggy wrapper would load
    and never run (before: loaded, and the tool_call gate it meant to be silently did nothing)."""
    async with rpc_host("-e", plugin("wrapper_impl")) as host:
        c = host.client
        await c.get_state()
        [error] = [e for e in errors_of(host) if e["extensionPath"] == plugin("wrapper_impl")]
        assert error["event"] == "register"
        assert "hook wrappers are not supported (tool_call: wrapper=True/hookwrapper=True)" in error["error"]
        host.faux.push("still serving")
        await c.prompt_and_wait("hello")
        assert (await c.get_last_assistant_text()).text == "still serving"
