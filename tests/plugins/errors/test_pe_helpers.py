"""A local extension imports helper modules beside it (``from _helper import X``), a module or a
package, each extension its own (two directories with a ``_helper.py`` each do not mix), none left
in ``sys.modules`` after the import, and after a hot reload (``--watch``) the helper's new code runs,
also when only the helper changed. Before: ``ModuleNotFoundError: No module named '_helper'``."""

from __future__ import annotations

from pathlib import Path

import pytest
from host_helpers import errors_of, poll

from atomic_host.testing import start_host

pytestmark = pytest.mark.slow  # waits for file-watch reloads

EXTENSION = """\
import sys

from _helper import VALUE
from _pkg.deep import DEEP

from atomic_host import SlashCommand, hookimpl


def _report(args, api):
    leaked = sorted(n for n in ("_helper", "_pkg", "_pkg.deep") if n in sys.modules)
    api.ui.notify(f"{NAME}: {VALUE} {DEEP} leaked={leaked}")


@hookimpl
def register_commands(register):
    register(SlashCommand(NAME, _report))
"""


def _write(directory: Path, name: str, value: str, deep: str = "deep-1") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "_helper.py").write_text(f"VALUE = {value!r}\n")
    (directory / "_pkg").mkdir(exist_ok=True)
    (directory / "_pkg" / "__init__.py").write_text("")
    (directory / "_pkg" / "deep.py").write_text(f"DEEP = {deep!r}\n")
    ext = directory / f"{name}.py"
    ext.write_text(f"NAME = {name!r}\n" + EXTENSION)
    return ext


async def _says(host, command: str) -> str:
    n0 = len(host.client.events)
    assert (await host.client.call("prompt", message=f"/{command}"))["disposition"] == "handled"
    notes = [
        e["message"]
        for e in host.client.events[n0:]
        if e.get("type") == "extension_ui_request" and e.get("method") == "notify"
    ]
    return notes[-1]


async def test_helpers_beside_each_extension_are_its_own(tmp_path: Path) -> None:
    one = _write(tmp_path / "a", "one", "from a")
    two = _write(tmp_path / "b", "two", "from b", "deep-b")
    async with start_host("-e", str(one), "-e", str(two)) as host:
        assert errors_of(host) == []
        assert await _says(host, "one") == "one: from a deep-1 leaked=[]"
        assert await _says(host, "two") == "two: from b deep-b leaked=[]"


async def test_a_helper_edit_reloads_the_extensions_that_use_it(tmp_path: Path) -> None:
    ext_dir = tmp_path / "agent" / "extensions"
    _write(ext_dir, "live", "v1")
    async with start_host("--watch", base=tmp_path) as host:
        assert await _says(host, "live") == "live: v1 deep-1 leaked=[]"
        (ext_dir / "_helper.py").write_text("VALUE = 'v2 from the helper'\n")  # only the helper changes

        async def reloaded() -> bool:
            return await _says(host, "live") == "live: v2 from the helper deep-1 leaked=[]"

        await poll(reloaded, timeout=10)
        (ext_dir / "_pkg" / "deep.py").write_text("DEEP = 'deep-2'\n")  # a module of a helper package

        async def deep_reloaded() -> bool:
            return (await _says(host, "live")).endswith("deep-2 leaked=[]")

        await poll(deep_reloaded, timeout=10)
        assert errors_of(host) == []
