from __future__ import annotations

import subprocess
import sys

import pluggy

from atomic_host import PROJECT_NAME, hookspec
from atomic_host.contract.tools import Tool


class Specs:
    @hookspec
    def register_tools(self, register):  # type: ignore[no-untyped-def]
        """Test-local spec mirroring the host's."""


def test_register_through_pluggy() -> None:
    import builtin_plugins.tools as plugin

    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(Specs)
    pm.register(plugin)
    tools: list[Tool] = []
    pm.hook.register_tools(register=tools.append)
    names = [t.name for t in tools]
    assert names == [
        "read",
        "bash",
        "kill",
        "edit",
        "write",
        "find",
        "search",
        "ls",
        "ask_user_question",
        "todo",
    ]
    for t in tools:
        assert t.source == "built-in" and t.source_path == f"<builtin:{t.name}>"
        schema = t.json_schema()  # resolves the "module:Params" string
        assert schema["type"] == "object" and schema["properties"]
        assert callable(t.get_handler())
        for prop in schema["properties"].values():
            assert prop.get("description") or "$ref" in prop or "allOf" in prop, (t.name, prop)
    edit = next(t for t in tools if t.name == "edit")
    assert edit.json_schema()["required"] == ["path", "edits"]


def test_registration_imports_nothing_heavy() -> None:
    code = (
        "import sys, builtin_plugins.tools as p; p.make_tools(); "
        "heavy = ('pydantic', 'builtin_plugins.tools.read', 'atomic_host.kit.shell', 'sqlite3'); "
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
