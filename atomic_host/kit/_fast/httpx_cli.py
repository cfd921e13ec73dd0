"""A stand-in for ``httpx._main`` until something calls it: a host's first model request (agent-latency bar).

httpx's package imports its command-line client (``httpx._main``: click, pygments and rich's
console, progress, syntax and table) whenever click is installed, as the mcp and workflows extras
install it: tens of ms of CPU on the way to a host's first model request and a few MB, for a CLI
the host never runs (figures: docs/performance.md). :func:`install`, run before any kit module
imports httpx, makes ``httpx._main`` a stand-in whose ``main`` loads the real module when called,
so ``httpx.main()`` still works in this process (the ``httpx`` command runs in its own). A
report upstream (httpx importing its CLI lazily) would make it unneeded.
"""

from __future__ import annotations

import sys
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

_CLI = "httpx._main"


def _real_cli_main(*args: Any, **kwargs: Any) -> Any:
    """httpx's own ``main``, its module imported now (the stand-in makes way for it)."""
    import importlib  # only when the CLI is called, which a host never does

    if getattr(sys.modules.get(_CLI), "__spec__", None) is _STAND_IN_SPEC:
        del sys.modules[_CLI]
    try:
        real = importlib.import_module(_CLI).main
    except ImportError:  # no click or rich: what httpx's own stand-in says then
        print(
            "The httpx command line client could not run because the required dependencies were not "
            "installed.\nMake sure you've installed everything with: pip install 'httpx[cli]'"
        )
        sys.exit(1)
    return real(*args, **kwargs)


_STAND_IN_SPEC = ModuleSpec(_CLI, None)


def install() -> None:
    """Put the stand-in in ``sys.modules`` unless httpx (or its CLI) is imported already."""
    if "httpx" in sys.modules or _CLI in sys.modules:
        return
    stand_in = ModuleType(_CLI, "A stand-in for httpx's command-line client (see atomic_host.kit._fast.httpx_cli).")
    stand_in.__spec__ = _STAND_IN_SPEC
    stand_in.main = _real_cli_main  # type: ignore[attr-defined]
    sys.modules[_CLI] = stand_in
