"""The Model object (rpc-protocol.md "Model", semantics.md §6.1)."""

from typing import Any, Literal

from atomic_host.core.protocol._base import WireModel


class ModelCost(WireModel):
    """Dollars per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float
    tiers: list[dict[str, Any]] | None = None


class Model(WireModel):
    """A model as the wire reports it (``get_state.model``, ``set_model`` data, ...)."""

    id: str
    name: str
    api: str
    provider: str
    base_url: str
    reasoning: bool
    thinking_level_map: dict[str, Any] | None = None
    input: list[Literal["text", "image"]]
    cost: ModelCost
    context_window: int
    max_tokens: int
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None
    sampling_params: dict[str, Any] | None = None
