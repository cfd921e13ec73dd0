"""``register_exporters`` through the real host: a third-party exporter that ``export_html`` and
``atomic --export`` use, the built-in blocked, an exporter that fails."""

from __future__ import annotations

import subprocess
from pathlib import Path

from pb_helpers import atomic, chat, exporter_plugin

from atomic_host.testing import start_host

RAISING = """
from atomic_host import hookimpl
from atomic_host.contract.registrations import Exporter


def render(header, entries, leaf_id):
    raise RuntimeError("renderer broke")


@hookimpl
def register_exporters(register):
    register(Exporter("html", render, lambda session: "out.html"))
"""


async def test_a_plugin_html_exporter_is_what_export_html_uses(base: Path) -> None:
    plugin = exporter_plugin(base, "html")
    async with start_host("-e", str(plugin), base=base, stderr=subprocess.PIPE) as host:
        await chat(host, "hello there")
        session_id = (await host.client.call("get_state"))["sessionId"]
        out = base / "work" / "page.html"
        assert await host.client.call("export_html", outputPath="page.html") == {"path": str(out)}
        default = await host.client.call("export_html")
        host.assert_protocol_lines()
    expected = f"# Session {session_id}\n\n- **user**: hello there\n- **assistant**: re: hello there\n"
    assert out.read_text() == expected
    assert default == {"path": str(base / "work" / f"{session_id}.md")}  # the plugin's default_path
    assert Path(default["path"]).read_text() == expected
    err = (await host.client.proc.stderr.read()).decode()
    assert f"atomic: exporter 'html' of builtin_plugins.export_html replaced by local:{plugin}" in err


async def test_export_html_with_the_builtin_blocked_is_a_clear_error(base: Path) -> None:
    settings = {"disabledPlugins": ["builtin_plugins.export_html"]}
    async with start_host(base=base, settings=settings) as host:
        await chat(host, "hi")
        response = await host.client.request({"type": "export_html", "id": "x"})
        host.assert_protocol_lines()
    assert response["success"] is False
    assert response["error"] == (
        'No "html" exporter is registered (known: none); disabled by disabledPlugins: builtin_plugins.export_html'
    )
    # blocked, then replaced: a plugin's html exporter serves export_html again
    plugin = exporter_plugin(base, "html")
    async with start_host("-e", str(plugin), "-c", base=base, settings=settings) as host:
        path = (await host.client.call("export_html", outputPath="again.html"))["path"]
    assert Path(path).read_text().endswith("- **assistant**: re: hi\n")


async def test_a_failing_exporter_fails_the_command_naming_its_plugin(base: Path) -> None:
    plugin = base / "raising.py"
    plugin.write_text(RAISING)
    async with start_host("-e", str(plugin), base=base) as host:
        await chat(host, "hi")
        response = await host.client.request({"type": "export_html", "id": "x"})
        assert (await host.client.call("get_state"))["messageCount"] == 2  # the host carries on
    assert response["success"] is False
    assert response["error"] == f'Exporter "html" of local:{plugin} failed: RuntimeError: renderer broke'
    assert not (base / "work" / "out.html").exists()


async def test_atomic_export_picks_an_exporter_by_format(base: Path) -> None:
    plugin = exporter_plugin(base, "markdown")
    async with start_host("-e", str(plugin), base=base) as host:
        await chat(host, "one", "two")
        state = await host.client.call("get_state")
        rpc_html = Path((await host.client.call("export_html", outputPath="rpc.html"))["path"]).read_bytes()
    session_id = state["sessionId"]
    done = atomic(base, "-e", str(plugin), "--export", session_id, "notes.md", "--export-format", "markdown")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(base / "work" / "notes.md")
    assert (base / "work" / "notes.md").read_text() == (
        f"# Session {session_id}\n\n- **user**: one\n- **assistant**: re: one\n- **user**: two\n"
        "- **assistant**: re: two\n"
    )
    # the default format is the built-in html exporter, the same bytes export_html writes
    done = atomic(base, "--export", state["sessionLocation"], "cli.html")
    assert done.returncode == 0, done.stderr
    assert (base / "work" / "cli.html").read_bytes() == rpc_html
    missing = atomic(base, "--export", session_id, "x.md", "--export-format", "markdown")
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.strip() == 'atomic: No "markdown" exporter is registered (known: html)'
    assert not (base / "work" / "x.md").exists()
