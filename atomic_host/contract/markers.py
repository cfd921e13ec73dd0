"""The pluggy markers of atomic-host: ``@hookspec`` for the host, ``@hookimpl`` for plugins."""

from __future__ import annotations

from typing import Any

import pluggy

PROJECT_NAME = "atomic_host"
"""pluggy project name, marker name and entry-point group."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

FAIL_CLOSED = PROJECT_NAME + "_fail_closed"
"""The attribute :func:`fail_closed` sets on a hook implementation."""


def fail_closed(fn: Any) -> Any:
    """Declare a ``tool_call`` gate fail-closed (above or below ``@hookimpl``)::

        @hookimpl
        @fail_closed
        def tool_call(event, api): ...

    When such a gate fails (raises, calls ``sys.exit``, times out after ``hookTimeoutMs``, returns
    something that is no ``ToolCallDecision``) the tool call is blocked, with an error result that
    names the gate and what went wrong, instead of running as if the gate had no opinion. The
    setting ``"hooks": {"failClosed": true}`` makes every gate so, and also blocks tool calls while
    any extension failed to load (a gate in it could not run).
    """
    setattr(fn, FAIL_CLOSED, True)
    return fn
