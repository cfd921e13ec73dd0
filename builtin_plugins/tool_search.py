"""Built-in extension "tool-search": BM25 over deferred tools, loading the matches.

Deferred tools are registered but hidden from the model; ``tool_search`` ranks their name,
description and parameter names against a query and makes the best matches visible from
the next model call on (additive). The parameters model is built on first use (module
``__getattr__``) so registering this plugin does not import pydantic.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from atomic_host import hookimpl
from atomic_host.contract.tools import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from pydantic import BaseModel

K1 = 1.2
B = 0.75
NAME_WEIGHT = 3
"""Name tokens count this many times, so a tool named for the query beats a passing mention."""
DEFAULT_LIMIT = 5

DESCRIPTION = """\
Search the deferred tools (registered but not yet in your tool list) by keywords and load the \
best matches. Loaded tools become callable from your next step on; the result lists each loaded \
tool with its parameters. Use it when you need a capability none of your current tools has."""

SUMMARY = (
    "Search deferred tool metadata with BM25 and load matching tools for the next model call. "
    "Some tools may not have been provided upfront; use tool_search to discover currently registered tools."
)

_WORD = r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+"
"""A word; compiled by the first search (``re`` caches it), not by every host start."""


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens, split on non-alphanumerics and camelCase/snake_case boundaries."""
    return [w.lower() for w in re.findall(_WORD, text)]


def tool_document(tool: Tool) -> list[str]:
    """The tokens BM25 indexes for a tool: name (weighted), description, parameter names."""
    try:
        params = list(tool.json_schema().get("properties", {}))
    except Exception:  # a broken schema must not hide the tool from search
        params = []
    return tokenize(tool.name) * NAME_WEIGHT + tokenize(tool.description) + tokenize(" ".join(params))


def bm25_rank(query: str, docs: dict[str, list[str]]) -> list[tuple[str, float]]:
    """Okapi BM25 scores (> 0 only) of ``docs`` (name -> tokens), best first, ties by name."""
    terms = set(tokenize(query))
    if not terms or not docs:
        return []
    n = len(docs)
    avgdl = sum(len(d) for d in docs.values()) / n or 1.0
    df = Counter(t for d in docs.values() for t in set(d) & terms)
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
    scored = []
    for name, doc in docs.items():
        tf = Counter(doc)
        norm = K1 * (1 - B + B * len(doc) / avgdl)
        score = sum(idf[t] * tf[t] * (K1 + 1) / (tf[t] + norm) for t in terms if tf[t])
        if score > 0:
            scored.append((name, score))
    scored.sort(key=lambda item: (-item[1], item[0]))
    return scored


def _signature(tool: Tool) -> str:
    schema = tool.json_schema()
    required = set(schema.get("required", []))
    args = ", ".join(p if p in required else f"{p}?" for p in schema.get("properties", {}))
    return f"{tool.name}({args})"


async def run(params: Any, ctx: ToolContext) -> ToolResult:
    """Rank deferred tools against ``params.query`` and load the top ``params.limit``."""
    deferred = {t.name: t for t in (ctx.deferred_tools() if ctx.deferred_tools else [])}
    if not deferred:
        return ToolResult.text(
            "No deferred tools are registered; every available tool is already loaded.",
            {"query": params.query, "loaded": [], "matches": []},
        )
    ranked = bm25_rank(params.query, {name: tool_document(t) for name, t in deferred.items()})
    top = ranked[: params.limit]
    matches = [{"name": name, "score": round(score, 4)} for name, score in top]
    if not top:
        return ToolResult.text(
            f'No deferred tools match "{params.query}".', {"query": params.query, "loaded": [], "matches": []}
        )
    names = [name for name, _ in top]
    loaded = ctx.load_tools(names) if ctx.load_tools else []
    lines = [f"Loaded {len(loaded)} tool{'s' if len(loaded) != 1 else ''} (callable from the next step on):"]
    for name in loaded:
        tool = deferred.get(name)
        if tool is not None:
            lines.append(f"- {_signature(tool)} - {tool.one_line_summary()}")
    details = {
        "query": params.query,
        "loaded": loaded,
        "matches": matches,
        "tools": [
            {"name": n, "summary": deferred[n].one_line_summary(), "parameters": deferred[n].json_schema()}
            for n in loaded
            if n in deferred
        ],
    }
    return ToolResult.text("\n".join(lines), details)


_params_model: type[BaseModel] | None = None


def __getattr__(name: str) -> Any:
    """Build ``ToolSearchParams`` on first use so importing this plugin does not import pydantic."""
    global _params_model
    if name != "ToolSearchParams":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _params_model is None:
        # lazy: pydantic (~50 ms) is off startup's path; the model is built on first use
        from pydantic import BaseModel, Field

        class ToolSearchParams(BaseModel):
            """Parameters of the tool_search tool."""

            query: str = Field(description="Keywords describing the capability you need.")
            limit: int = Field(DEFAULT_LIMIT, ge=1, le=50, description="Most tools to load (default 5).")

        ToolSearchParams.__module__ = __name__
        ToolSearchParams.__qualname__ = "ToolSearchParams"
        _params_model = ToolSearchParams
    return _params_model


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    register(
        Tool(
            name="tool_search",
            label="Tool search",
            description=DESCRIPTION,
            params="builtin_plugins.tool_search:ToolSearchParams",
            handler="builtin_plugins.tool_search:run",
            summary=SUMMARY,
            opt_in=True,
            read_only=True,  # it only makes tools visible; running them is gated as usual
            loads_deferred=True,
            exposure="model-only",
            source='built-in extension "tool-search"',
            source_path="builtin:tool-search",
        )
    )
