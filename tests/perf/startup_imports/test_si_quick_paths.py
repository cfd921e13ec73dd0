"""The startup shortcuts give exactly what the long way gives.

- ``quick_options`` (the RPC command line read without argparse) either declines or returns the
  Options argparse would build, for any command line made of the host's own flags, their values
  and hostile tokens (hypothesis);
- ``QuickPluginManager`` (pluggy's manager with a quicker look at module attributes) registers the
  same hook specs and implementations as pluggy's own, for the built-ins and for a module with
  every kind of attribute pluggy treats specially.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import types
from typing import Any

import pluggy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_host.contract import hookspecs
from atomic_host.contract.markers import PROJECT_NAME, hookimpl
from atomic_host.frontends.cli import build_parser, parse_options, quick_options
from atomic_host.kit._fast.pluggy_register import QuickPluginManager
from atomic_host.plugins.discovery import BUILTIN_PLUGINS

FLAGS = [
    "--mode", "--provider", "--model", "--thinking", "--api-key", "--models", "--session", "-c",
    "--continue", "--no-session", "--session-dir", "--session-store", "-n", "--name", "-e",
    "--extension", "--no-extensions", "--prompt-template", "--skill", "--approve", "--no-approve",
    "--watch", "--tools", "--no-tools", "--no-builtin-tools", "--exclude-tools", "--system-prompt",
    "--append-system-prompt", "-p", "--print", "--output-format", "--hide-thinking", "-q", "--list-models",
    "--export", "--export-format", "-h", "--help", "-V", "--version", "--mod", "--model=x", "--", "-",
]  # fmt: skip
VALUES = ["rpc", "acp", "print", "json", "off", "high", "max", "bogus", "", "a,b,,c", " x , y ", "local/m1",
          "-x", "--model", "schema", "sessions", "é ✓", "p/m:high", "1", "-1"]  # fmt: skip
NS_READ = ("subcommand", "list_models", "export", "export_format", "output_format", "hide_thinking", "quiet")
"""What ``cli.main`` reads of the namespace besides the Options."""


def _argparse(argv: list[str]) -> tuple[Any, Any] | None:
    try:
        return parse_options(argv, build_parser())
    except SystemExit:  # argparse refused it (and printed why)
        return None


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(FLAGS), st.sampled_from(VALUES), st.text(max_size=6)), max_size=8))
def test_quick_options_declines_or_equals_argparse(argv: list[str]) -> None:
    quick = quick_options(argv)
    if quick is None:
        return
    slow = _argparse(argv)
    assert slow is not None, f"argparse refuses {argv!r}, the quick path accepted it"
    assert quick[0] == slow[0], argv
    for name in NS_READ:
        assert getattr(quick[1], name) == getattr(slow[1], name), (name, argv)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--mode", "rpc"],
        ["--mode", "rpc", "--model", "local/m1", "--no-session"],
        ["--provider", "faux", "--thinking", "high", "-e", "a.py", "-e", "b.py", "--tools", "read, +ls"],
        ["--mode", "acp", "--session", "abc", "-c", "--approve", "--exclude-tools", "bash,write", "-n", "x"],
        ["--models", "a/*,b", "--session-dir", "/tmp/s", "--session-store", "memory", "--watch", "--no-tools"],
        ["--system-prompt", "", "--append-system-prompt", "more", "--skill", "s", "--prompt-template", "t"],
    ],
)
def test_the_usual_rpc_command_lines_take_the_quick_path(argv: list[str]) -> None:
    quick = quick_options(argv)
    assert quick is not None, argv
    slow = _argparse(argv)
    assert slow is not None and quick[0] == slow[0]


@pytest.mark.parametrize(
    "argv",
    [
        ["-p", "hi"],
        ["--help"],
        ["--mode", "print"],
        ["--mode=rpc"],
        ["--mod", "rpc"],
        ["--thinking", "loud"],
        ["--approve", "--no-approve"],
        ["--model", "-x"],
        ["--model"],
        ["--list-models"],
        ["rpc"],
    ],
)
def test_everything_else_goes_to_argparse(argv: list[str]) -> None:
    assert quick_options(argv) is None


def test_an_rpc_start_imports_no_argparse(tmp_path: Any) -> None:
    code = (
        "import sys; sys.argv = ['atomic', '--mode', 'rpc', '--provider', 'faux', '--no-session'];"
        "from atomic_host.frontends import cli; opts, ns = cli.quick_options(sys.argv[1:]);"
        "print('argparse' in sys.modules, 'gettext' in sys.modules, opts.mode, opts.no_session)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.split() == ["False", "False", "rpc", "True"]


def test_the_command_module_imports_no_pluggy_before_its_collector_pause(tmp_path: Any) -> None:
    """``atomic`` imports ``frontends.cli`` (with the ``atomic_host`` package) before ``main`` pauses
    the garbage collector for the start: pluggy (and inspect) load later, under the pause. The
    package's markers still resolve, to pluggy's own."""
    code = (
        "import sys; from atomic_host.frontends import cli; print('pluggy' in sys.modules);"
        "import atomic_host, pluggy; print(isinstance(atomic_host.hookimpl, pluggy.HookimplMarker),"
        "isinstance(atomic_host.hookspec, pluggy.HookspecMarker), atomic_host.PROJECT_NAME)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.split() == ["False", "True", "True", "atomic_host"]


# -- plugin registration -------------------------------------------------------------------------


def _tricky_module() -> types.ModuleType:
    module = types.ModuleType("tricky_plugin")

    @hookimpl
    def register_tools(register: Any) -> None:
        pass

    class Holder:
        @staticmethod
        @hookimpl
        def register_commands(register: Any) -> None:
            pass

        @classmethod
        @hookimpl
        def host_start(cls) -> None:
            pass

    module.register_tools = register_tools  # type: ignore[attr-defined]
    module.register_commands = Holder.__dict__["register_commands"]  # a bare staticmethod object
    module.host_start = Holder.host_start  # a bound classmethod (MethodType)
    module.on_event = 42  # type: ignore[attr-defined]  # a hook name that is no function
    module.Holder = Holder  # type: ignore[attr-defined]
    module.json = importlib.import_module("json")  # type: ignore[attr-defined]
    module.CONSTANT = {"atomic_host_impl": {}}  # type: ignore[attr-defined]
    return module


def _registrations(cls: type[pluggy.PluginManager], plugins: list[tuple[str, Any]]) -> list[Any]:
    pm = cls(PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    for name, plugin in plugins:
        pm.register(plugin, name=name)
    return sorted(
        (
            name,
            repr(caller.spec.opts) if caller.spec else None,
            tuple(
                (i.plugin_name, i.function.__qualname__, tuple(sorted(i.opts.items())))
                for i in caller.get_hookimpls()
            ),
        )
        for name, caller in vars(pm.hook).items()
    )


def test_the_plugin_manager_registers_what_pluggy_registers() -> None:
    plugins = [(name, importlib.import_module(name)) for name in BUILTIN_PLUGINS]
    plugins.append(("tricky", _tricky_module()))
    ours = _registrations(QuickPluginManager, plugins)
    assert ours == _registrations(pluggy.PluginManager, plugins)
    hooks = {name: impls for name, _spec, impls in ours}
    assert [i[0] for i in hooks["register_tools"]].count("tricky") == 1
    assert "tricky" in [i[0] for i in hooks["register_commands"]] + [i[0] for i in hooks["host_start"]]


def test_implementers_in_one_pass_equal_implemented_per_plugin() -> None:
    from atomic_host.plugins.manager import PluginHost
    from atomic_host.runtime import CONTRIBUTION_HOOKS

    host = PluginHost(lambda *_: None)
    for name in BUILTIN_PLUGINS:
        host.load_module(name)
    host.pm.register(_tricky_module(), name="tricky")
    found = host.implementers(CONTRIBUTION_HOOKS)
    names = [*BUILTIN_PLUGINS, "tricky"]
    assert {n: found.get(n, set()) for n in names} == {n: host.implemented(n, CONTRIBUTION_HOOKS) for n in names}
    assert found["tricky"] == {"register_tools", "register_commands"} and "builtin_plugins.catalog" in found
