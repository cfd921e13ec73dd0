"""A tool whose parameters model is named by a ``"module:Class"`` string, as the built-in tools do:
its module (runf_lazy_params) is imported the first time the host needs the schema."""

from atomic_host import Tool, ToolResult, hookimpl


def run(params, ctx) -> ToolResult:
    return ToolResult.text(f"lazy {params.word}")


@hookimpl
def register_tools(register) -> None:
    register(Tool("runf_lazy", "Echoes a word.", "runf_lazy_params:Params", run))
