"""``ATOMIC_PLAIN=1`` runs the host on the libraries' own paths (docs/performance.md): argparse reads
the command line, pluggy registers the plugins and importlib_metadata scans the entry points, the
collector is never paused, the protocol and event JSON is the standard library's, provider
requests go through httpx's transport and ``httpx._main`` is httpx's own. Without it (or with
``ATOMIC_PLAIN=0``) every tactic is on. Seen from a plugin inside a real ``atomic --mode rpc``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from atomic_host.testing import read_json_when_written, start_host

PROBE = '''
import gc, json, os, sys
from pathlib import Path

from atomic_host import hookimpl
from atomic_host.contract.commands import SlashCommand

OUT = Path(os.environ["PLAIN_PROBE_DIR"])


def _write(name, state):
    (OUT / f"{name}.json").write_text(json.dumps(state))


@hookimpl
def host_start():
    _write("host_start", {"collecting": gc.isenabled()})


async def _probe(args, api):
    import json as stdlib_json

    from atomic_host.core import jsonfast
    from atomic_host.kit.copies import json_copy
    from atomic_host.kit.llm import event_json
    from atomic_host.kit.llm.http_client import new_http_client

    client = new_http_client()
    manager = api._rt.plugins.pm  # the host's own manager (a test may look inside)
    cli = sys.modules.get("httpx._main")
    _write("command", {
        "argparse": "argparse" in sys.modules,
        "importlib_metadata": "importlib_metadata" in sys.modules,
        "manager": type(manager).__name__,
        "frozen": gc.get_freeze_count(),
        "fast_encoder": jsonfast.fast_encoder_loaded(),
        "event_json": event_json.loads is stdlib_json.loads,
        "json_copy": json_copy.__module__,
        "direct_pool": client.direct is not None,
        "httpx_cli": getattr(getattr(cli, "__spec__", None), "origin", None),
    })
    await client.aclose()


@hookimpl
def register_commands(register):
    register(SlashCommand("plainprobe", _probe, description="which path the host is on"))
'''


async def _probe(tmp_path: Path, plain: str) -> tuple[dict[str, object], dict[str, object]]:
    ext = tmp_path / "plain_probe.py"
    ext.write_text(PROBE)
    out = tmp_path / "probe"
    out.mkdir()
    env = {"PLAIN_PROBE_DIR": str(out), "ATOMIC_PLAIN": plain}
    async with start_host("-e", str(ext), base=tmp_path / "host", env=env) as host:
        await host.client.get_state()
        for _ in range(100):  # the warm-up thread loads the protocol encoder's engine after the first response
            await host.client.call("prompt", message="/plainprobe")
            seen = await read_json_when_written(out / "command.json")
            if seen["fast_encoder"] or plain == "1":
                break
            (out / "command.json").unlink()
            await asyncio.sleep(0.05)
        return await read_json_when_written(out / "host_start.json"), seen


async def test_atomic_plain_runs_every_library_path(tmp_path: Path) -> None:
    start, seen = await _probe(tmp_path, "1")
    assert start == {"collecting": True}
    assert seen["argparse"] is True
    assert seen["importlib_metadata"] is True
    assert seen["manager"] == "PluginManager"
    assert seen["frozen"] == 0
    assert seen["fast_encoder"] is False
    assert seen["event_json"] is True
    assert seen["json_copy"] == "copy"
    assert seen["direct_pool"] is False
    assert seen["httpx_cli"] is not None and str(seen["httpx_cli"]).endswith("_main.py")


@pytest.mark.parametrize("plain", ["", "0"])
async def test_without_it_every_tactic_is_on(tmp_path: Path, plain: str) -> None:
    start, seen = await _probe(tmp_path, plain)
    assert start == {"collecting": False}
    assert seen["argparse"] is False
    assert seen["manager"] == "QuickPluginManager"
    assert isinstance(seen["frozen"], int) and seen["frozen"] > 10_000
    assert seen["fast_encoder"] is True
    assert seen["event_json"] is False
    assert seen["json_copy"] == "atomic_host.kit._fast.json_copy"
    assert seen["direct_pool"] is True
    assert seen["httpx_cli"] is None
