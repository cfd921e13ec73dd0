"""A Python client for ``atomic --mode rpc``: typed events and results, options instead of argv, a
host whose death or a run left early never leaves you waiting, approvals, and a synchronous wrapper.

    from atomic_host.client import AtomicOptions, RpcClient

    async with RpcClient(AtomicOptions(model="anthropic/claude-sonnet-4-5")) as client:
        result = await client.run("Summarise README.md")
        print(result.text, result.usage.output, result.total_cost_usd)

See docs/client.md. Importing this package loads no host module and no pydantic.
"""

from __future__ import annotations

from atomic_host.client import types
from atomic_host.client.approvals import Allow, Deny
from atomic_host.client.errors import ClientError, ClientTimeout, HostExited, RpcError, RunFailed
from atomic_host.client.options import AtomicOptions, default_command
from atomic_host.client.query import query
from atomic_host.client.records import EventLog, loads_deep
from atomic_host.client.rpc import RpcClient
from atomic_host.client.run import RunResult
from atomic_host.client.sync import SyncClient
from atomic_host.client.types import Event, parse_event

__all__ = [
    "Allow",
    "AtomicOptions",
    "ClientError",
    "ClientTimeout",
    "Deny",
    "Event",
    "EventLog",
    "HostExited",
    "RpcClient",
    "RpcError",
    "RunFailed",
    "RunResult",
    "SyncClient",
    "default_command",
    "loads_deep",
    "parse_event",
    "query",
    "types",
]
