"""Imports kept off the start and done in a thread when a coroutine needs them: startup bar, and abort answers at once.

A deferred import (kept off the startup path) that runs on the loop stalls it for as long as the
import takes: the pydantic protocol models or the agent loop take a tenth of a second and more on
a loaded machine (docs/performance.md). Worse, when another thread (the RPC warm-up) is importing the same module
at that moment, the loop waits on that thread's import lock. :func:`loaded` does the import in a
worker thread and awaits it, so the loop keeps answering (``abort`` among the rest) meanwhile.
:func:`module` is the synchronous form for small modules. Not switched by ``ATOMIC_PLAIN``: the
plain path imports lazily too (what it keeps off the start is a startup-import test's business).
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from types import ModuleType


def is_loaded(name: str) -> bool:
    """The module is imported and done initialising (not midway through its import in a thread)."""
    module = sys.modules.get(name)
    return module is not None and not getattr(getattr(module, "__spec__", None), "_initializing", False)


def module(name: str) -> ModuleType:
    """``name``, imported on its first use: for a module that only some calls need, kept off the
    startup path (``datetime``). Synchronous: for cheap imports only."""
    return sys.modules[name] if is_loaded(name) else importlib.import_module(name)


async def loaded(*names: str) -> ModuleType:
    """Import ``names`` (in order) off the loop unless they are loaded already; the last module.

    Cheap when they are loaded (a dictionary lookup each), so call it on every use."""
    if not all(is_loaded(name) for name in names):
        await asyncio.to_thread(_import_all, names)
    return sys.modules[names[-1]]


def _import_all(names: tuple[str, ...]) -> None:
    for name in names:
        importlib.import_module(name)
