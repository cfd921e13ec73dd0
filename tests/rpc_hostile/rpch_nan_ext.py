"""A tool whose details hold floats that JSON cannot carry (NaN, ±infinity), as a plugin's
statistics or a library's result easily do."""

from atomic_host import hookimpl
from atomic_host.contract.tools import Tool, ToolResult


async def _stats(params, ctx) -> ToolResult:
    nan, inf = float("nan"), float("inf")
    return ToolResult.text("stats computed", details={"mean": nan, "max": inf, "min": -inf, "rows": [1.5, nan]})


@hookimpl
def register_tools(register) -> None:
    register(Tool("nan_stats", "Compute statistics.", {"type": "object", "properties": {}}, _stats))
