"""Messages and content blocks (rpc-protocol.md "Types", semantics.md §2.2).

The host keeps messages as plain camelCase dicts; these models describe and validate them.
"""

from typing import Annotated, Any, Literal

from pydantic import Field

from atomic_host.core.protocol._base import WireModel

StopReason = Literal["stop", "length", "toolUse", "error", "aborted", "pending"]
"""``pending`` only on a streaming message (``message_start``); never on a completed one."""


class TextContent(WireModel):
    """``{"type": "text", "text": ...}``."""

    type: Literal["text"] = "text"
    text: str
    text_signature: str | None = None


class ImageContent(WireModel):
    """``{"type": "image", "data": <base64>, "mimeType": ...}``."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str


class ThinkingContent(WireModel):
    """A reasoning block; ``redacted`` blocks carry opaque provider data in the signature."""

    type: Literal["thinking"] = "thinking"
    thinking: str
    thinking_signature: str | None = None
    redacted: bool | None = None


class ToolCall(WireModel):
    """A tool call requested by the assistant."""

    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: dict[str, Any]


UserBlock = Annotated[TextContent | ImageContent, Field(discriminator="type")]
AssistantBlock = Annotated[TextContent | ThinkingContent | ToolCall, Field(discriminator="type")]


class Cost(WireModel):
    """Dollar cost of one message's usage."""

    input: float
    output: float
    cache_read: float
    cache_write: float
    total: float


class Usage(WireModel):
    """Token usage as reported by the provider (cumulative while streaming)."""

    input: int
    output: int
    cache_read: int
    cache_write: int
    total_tokens: int | None = None
    cost: Cost


class UserMessage(WireModel):
    """``{"role": "user", "content": str | blocks, "timestamp": <ms>}``."""

    role: Literal["user"] = "user"
    content: str | list[UserBlock]
    timestamp: int


class AssistantMessage(WireModel):
    """A model reply; ``stopReason`` ``pending`` while it streams."""

    role: Literal["assistant"] = "assistant"
    content: list[AssistantBlock]
    api: str
    provider: str
    model: str
    usage: Usage
    stop_reason: StopReason
    error_message: str | None = None
    end_turn: bool | None = None
    timestamp: int


class ToolResultMessage(WireModel):
    """The result of one tool call."""

    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[UserBlock]
    details: Any = None
    is_error: bool
    timestamp: int


class BashExecutionMessage(WireModel):
    """Recorded by the ``bash`` RPC command; reaches the LLM with the next prompt."""

    role: Literal["bashExecution"] = "bashExecution"
    command: str
    output: str
    exit_code: int | None = None
    cancelled: bool
    truncated: bool
    full_output_path: str | None = None
    exclude_from_context: bool | None = None
    timestamp: int


class CustomMessage(WireModel):
    """An extension message (also the synthesized ``customType: "compaction"`` message)."""

    role: Literal["custom"] = "custom"
    custom_type: str
    content: str | list[UserBlock]
    display: bool
    details: Any = None
    exclude_from_context: bool | None = None
    timestamp: int


class BranchSummaryMessage(WireModel):
    """Summary of an abandoned branch, shown to the LLM as user context."""

    role: Literal["branchSummary"] = "branchSummary"
    summary: str
    from_id: str
    timestamp: int


AgentMessage = Annotated[
    UserMessage
    | AssistantMessage
    | ToolResultMessage
    | BashExecutionMessage
    | CustomMessage
    | BranchSummaryMessage,
    Field(discriminator="role"),
]
"""Any message of the conversation, discriminated on ``role``."""
