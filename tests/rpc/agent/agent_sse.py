"""The scripted SSE server for the agent tests (:mod:`atomic_host.testing_sse`)."""

from __future__ import annotations

from atomic_host import testing_sse as sse

__all__ = ["sse"]
