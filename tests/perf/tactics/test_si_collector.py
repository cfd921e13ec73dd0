"""The garbage collector pauses while ``atomic --mode rpc`` starts, and runs again once it has.

The start (imports, plugin loading, the startup session) allocates tens of thousands of long-lived
objects; the host keeps the collector from traversing them while it builds them and freezes them
afterwards (``gc.freeze``). Seen from a plugin: paused in ``host_start``, collecting again (with
the startup objects frozen) when a command runs after the first response.
"""

from __future__ import annotations

from pathlib import Path

from atomic_host.testing import read_json_when_written, start_host

PROBE = '''
import gc, json, os
from pathlib import Path

from atomic_host import hookimpl
from atomic_host.contract.commands import SlashCommand

OUT = Path(os.environ["GC_PROBE_DIR"])


def _write(name):
    state = {"enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}
    (OUT / f"{name}.json").write_text(json.dumps(state))


@hookimpl
def host_start():
    _write("host_start")


@hookimpl
def register_commands(register):
    register(SlashCommand("gcprobe", lambda args, api: _write("command"), description="gc state"))
'''


async def test_collector_paused_during_start_and_running_after(tmp_path: Path) -> None:
    ext = tmp_path / "gc_probe.py"
    ext.write_text(PROBE)
    out = tmp_path / "probe"
    out.mkdir()
    async with start_host("-e", str(ext), base=tmp_path / "host", env={"GC_PROBE_DIR": str(out)}) as host:
        await host.client.get_state()
        await host.client.call("prompt", message="/gcprobe")
        during = await read_json_when_written(out / "host_start.json")
        after = await read_json_when_written(out / "command.json")
    assert during == {"enabled": False, "frozen": 0}
    assert after["enabled"] is True
    assert isinstance(after["frozen"], int) and after["frozen"] > 10_000  # the startup objects
