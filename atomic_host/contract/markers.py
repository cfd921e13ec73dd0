"""The pluggy markers of atomic-host: ``@hookspec`` for the host, ``@hookimpl`` for plugins."""

from __future__ import annotations

import pluggy

PROJECT_NAME = "atomic_host"
"""pluggy project name, marker name and entry-point group."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
