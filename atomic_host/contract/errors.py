"""Errors the host's domain code raises for a client to see."""

from __future__ import annotations

from typing import Any


class HostError(Exception):
    """A command failed for a reason the client should read: the RPC frontend answers it as
    ``success:false`` with this message as ``error``, plus the ``extra`` keys (``errorCode``, …)."""

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.extra = extra
