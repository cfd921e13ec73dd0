"""Built-in extension "codemode": model-written JavaScript that composes tool calls.

Registration only; the handler (:mod:`builtin_plugins.codemode.tool`) and the sandbox worker
(:mod:`builtin_plugins.codemode.worker`) load on first use so host startup stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable

from atomic_host import hookimpl
from atomic_host.contract.tools import Tool

DESCRIPTION = """\
Run a JavaScript program in a fresh QuickJS sandbox that can call your other tools, to compose \
several tool calls (loops, filtering, aggregation) in one step.

- `await tools.<name>({...args})` calls a tool with the same name and parameters as in your tool \
list and resolves to `{text, content, isError, details}`; a failing tool gives `isError: true` \
(it does not throw). `Object.keys(tools)` lists the callable tools. Calls made together \
(`Promise.all`) run concurrently.
- Top-level `await` works. The value of the final expression (or a top-level `return`) is the \
result: strings as is, anything else as JSON.
- `console.log/info/warn/error` output is captured and shown before the result.
- No filesystem, network, process, timers or modules: use tools for I/O. \
codemode and tool_search cannot be called from inside.
- `timeout` (seconds, default 30, max 300) bounds the whole program including its tool calls; \
memory is limited to 64 MiB."""


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    register(
        Tool(
            name="codemode",
            label="Code mode",
            description=DESCRIPTION,
            params="builtin_plugins.codemode.tool:CodemodeParams",
            handler="builtin_plugins.codemode.tool:run",
            summary="Run JavaScript that composes tool calls in a fresh QuickJS worker sandbox.",
            opt_in=True,
            read_only=True,  # the sandbox has no I/O of its own; each tool it calls is gated as a call
            exposure="model-only",
            source='built-in extension "codemode"',
            source_path="builtin:codemode",
        )
    )
