"""The Atomic RPC protocol as pydantic models, a command parser and a JSON Schema export.

Submodules: ``messages``, ``model``, ``commands``, ``responses``, ``events``, ``validate``,
``schema``. Names below load lazily so importing this package costs almost nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from atomic_host.contract.lazy_exports import lazy_exports

_LAZY = {
    "COMMANDS": "atomic_host.core.protocol.commands",
    "Command": "atomic_host.core.protocol.commands",
    "CommandError": "atomic_host.core.protocol.validate",
    "parse_command": "atomic_host.core.protocol.validate",
    "EVENTS": "atomic_host.core.protocol.events",
    "Event": "atomic_host.core.protocol.events",
    "OutputError": "atomic_host.core.protocol.events",
    "OutputRecord": "atomic_host.core.protocol.events",
    "validate_output_line": "atomic_host.core.protocol.events",
    "RESPONSE_DATA": "atomic_host.core.protocol.responses",
    "Response": "atomic_host.core.protocol.responses",
    "AgentMessage": "atomic_host.core.protocol.messages",
    "Model": "atomic_host.core.protocol.model",
    "protocol_schema": "atomic_host.core.protocol.schema",
    "write_schema": "atomic_host.core.protocol.schema",
    "dumps_schema": "atomic_host.core.protocol.schema",
}

__all__ = list(_LAZY)

if TYPE_CHECKING:
    from atomic_host.core.protocol.commands import COMMANDS, Command
    from atomic_host.core.protocol.events import EVENTS, Event, OutputError, OutputRecord, validate_output_line
    from atomic_host.core.protocol.messages import AgentMessage
    from atomic_host.core.protocol.model import Model
    from atomic_host.core.protocol.responses import RESPONSE_DATA, Response
    from atomic_host.core.protocol.schema import dumps_schema, protocol_schema, write_schema
    from atomic_host.core.protocol.validate import CommandError, parse_command

__getattr__ = lazy_exports(__name__, _LAZY)
