"""What provider adapters build on: the stream assembler, HTTP and SSE, context shaping, usage.

Public modules (each lists its stable names in ``__all__``; docs/kit.md): ``stream``, ``http``,
``http_client``, ``sse``, ``event_json``, ``context``, ``json_parse``, ``usage``, ``errors``,
``wire_errors``, ``abort`` and ``complete``.
"""

from __future__ import annotations

from atomic_host.kit import _fast

__all__ = [
    "abort",
    "complete",
    "context",
    "errors",
    "event_json",
    "http",
    "http_client",
    "json_parse",
    "sse",
    "stream",
    "usage",
    "wire_errors",
]

if not _fast.PLAIN:
    from atomic_host.kit._fast import httpx_cli

    httpx_cli.install()
