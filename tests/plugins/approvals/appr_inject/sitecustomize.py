"""Fault injection for the approvals fail-closed tests: on ``PYTHONPATH``, Python runs this in the
host process at start. ``APPR_FAULT=import`` makes ``builtin_plugins.approvals`` fail to import;
``raise`` / ``hang`` replace its gate (after the real module ran) with one that raises / never
returns. Nothing in the host knows about it: the faults are the real failures a broken install or
a bug would cause."""

from __future__ import annotations

import asyncio
import importlib.machinery
import os
import sys
from typing import Any

FAULT = os.environ.get("APPR_FAULT", "")


class _Inject:
    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name == "builtin_plugins.approvals" and FAULT == "import":
            raise ImportError("injected: the approvals plugin does not load")
        if name != "builtin_plugins.approvals.gate" or FAULT not in ("raise", "hang"):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        assert spec is not None and spec.loader is not None
        run = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)

            async def gate(self: Any, event: Any) -> Any:
                if FAULT == "hang":
                    await asyncio.sleep(3600)
                raise RuntimeError("injected: the approvals gate broke")

            module.Approvals.gate = gate

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if FAULT:
    sys.meta_path.insert(0, _Inject())
