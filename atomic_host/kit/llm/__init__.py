"""What provider adapters build on: the stream assembler, SSE and HTTP/1.1, usage, context.

httpx's package imports its command-line client (``httpx._main``: click, pygments and rich's
console, progress, syntax and table) whenever click is installed, as the mcp and workflows extras
install it: ~65 ms of CPU on the way to a host's first model request and a few MB, for a CLI the
host never runs. Before any module here imports httpx, ``httpx._main`` is a stand-in whose
``main`` loads the real module when called, so ``httpx.main()`` still works in this process (the
``httpx`` command runs in its own).
"""

from __future__ import annotations

import sys
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

_CLI = "httpx._main"


def _real_cli_main(*args: Any, **kwargs: Any) -> Any:
    """httpx's own ``main``, its module imported now (the stand-in makes way for it)."""
    # here: only httpx's own CLI calls this, to import the real httpx._main
    import importlib

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

if "httpx" not in sys.modules and _CLI not in sys.modules:
    _stand_in = ModuleType(_CLI, "A stand-in for httpx's command-line client (see atomic_host.kit.llm).")
    _stand_in.__spec__ = _STAND_IN_SPEC
    _stand_in.main = _real_cli_main  # type: ignore[attr-defined]
    sys.modules[_CLI] = _stand_in
