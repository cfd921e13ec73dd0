"""tool_search: tokenizer, BM25 ranking, and loading deferred tools through the context."""

from __future__ import annotations

import asyncio
import math

from pydantic import BaseModel, Field

import builtin_plugins.tool_search as ts
from atomic_host.contract.tools import Tool, ToolContext


class FetchParams(BaseModel):
    url: str
    timeout: float = 10


class QueryParams(BaseModel):
    sql: str = Field(description="SQL text")
    databasePath: str


async def _noop(params: object, ctx: ToolContext) -> str:
    return ""


def deferred() -> list[Tool]:
    return [
        Tool(
            name="web_fetch",
            description="Fetch a URL over HTTP and return the page.",
            params=FetchParams,
            handler=_noop,
        ),
        Tool(
            name="run_query",
            description="Run SQL against a database. Results can be large, so use a "
            "limit; for pages on the web use another fetch tool instead of SQL.",
            params=QueryParams,
            handler=_noop,
        ),
        Tool(
            name="imageResize",
            description="Scale an image file.",
            params={
                "type": "object",
                "properties": {"path": {"type": "string"}, "width": {"type": "integer"}},
                "required": ["path"],
            },
            handler=_noop,
        ),
        Tool(name="zeta_tool", description="Does zebra things.", params={"type": "object"}, handler=_noop),
        Tool(name="alpha_tool", description="Does zebra things.", params={"type": "object"}, handler=_noop),
    ]


class Registry:
    """Deferred tools plus a record of what load_tools was asked to load."""

    def __init__(self, tools: list[Tool]) -> None:
        self.deferred = {t.name: t for t in tools}
        self.loaded_calls: list[list[str]] = []

    def load(self, names: list[str]) -> list[str]:
        self.loaded_calls.append(list(names))
        loaded = [n for n in names if n in self.deferred]
        for n in loaded:
            del self.deferred[n]
        return loaded

    def ctx(self) -> ToolContext:
        return ToolContext(
            cwd=".",
            session_id="s",
            tool_call_id="c",
            signal=asyncio.Event(),
            deferred_tools=lambda: list(self.deferred.values()),
            load_tools=self.load,
        )


def params(query: str, limit: int = 5):
    return ts.ToolSearchParams(query=query, limit=limit)


def test_tokenize_splits_camel_snake_and_punctuation() -> None:
    assert ts.tokenize("readFile web_fetch HTTPServer utf8-x") == [
        "read",
        "file",
        "web",
        "fetch",
        "http",
        "server",
        "utf",
        "8",
        "x",
    ]


def test_bm25_formula_single_doc() -> None:
    # One doc, one term: idf = ln(1 + 0.5/1.5), tf=1, |d| = avgdl -> score = idf * (k1+1)/(1+k1).
    ((name, score),) = ts.bm25_rank("fetch", {"a": ["fetch", "url"]})
    assert name == "a"
    assert math.isclose(score, math.log(1 + 0.5 / 1.5))


def test_exact_name_beats_description_mention() -> None:
    docs = {t.name: ts.tool_document(t) for t in deferred()}
    ranked = [n for n, _ in ts.bm25_rank("fetch", docs)]
    assert ranked[:2] == ["web_fetch", "run_query"]


def test_camel_case_name_and_parameter_names_match() -> None:
    docs = {t.name: ts.tool_document(t) for t in deferred()}
    assert ts.bm25_rank("resize", docs)[0][0] == "imageResize"
    assert ts.bm25_rank("width", docs)[0][0] == "imageResize"
    assert ts.bm25_rank("database path", docs)[0][0] == "run_query"  # from parameter databasePath


def test_ties_are_ordered_by_name_and_zero_scores_dropped() -> None:
    docs = {t.name: ts.tool_document(t) for t in deferred()}
    assert [n for n, _ in ts.bm25_rank("zebra", docs)] == ["alpha_tool", "zeta_tool"]
    assert ts.bm25_rank("nothing-matches-this", docs) == []
    assert ts.bm25_rank("   ", docs) == []


async def test_search_loads_matches() -> None:
    reg = Registry(deferred())
    result = await ts.run(params("fetch a web page", limit=1), reg.ctx())
    assert reg.loaded_calls == [["web_fetch"]]
    text = result.content[0]["text"]
    assert text.splitlines() == [
        "Loaded 1 tool (callable from the next step on):",
        "- web_fetch(url, timeout?) - Fetch a URL over HTTP and return the page.",
    ]
    assert result.details["loaded"] == ["web_fetch"]
    assert result.details["tools"][0]["parameters"]["required"] == ["url"]
    # Loaded tools are no longer deferred: a second search finds the next best.
    again = await ts.run(params("fetch", limit=1), reg.ctx())
    assert again.details["loaded"] == ["run_query"]


async def test_no_match_and_no_deferred_tools() -> None:
    reg = Registry(deferred())
    result = await ts.run(params("kubernetes"), reg.ctx())
    assert result.content[0]["text"] == 'No deferred tools match "kubernetes".'
    assert reg.loaded_calls == []
    empty = await ts.run(params("fetch"), Registry([]).ctx())
    assert "No deferred tools" in empty.content[0]["text"] and not empty.is_error


def test_registration() -> None:
    seen: list[Tool] = []
    ts.register_tools(seen.append)
    (tool,) = seen
    assert (tool.name, tool.opt_in, tool.exposure, tool.source, tool.source_path) == (
        "tool_search",
        True,
        "model-only",
        'built-in extension "tool-search"',
        "builtin:tool-search",
    )
    schema = tool.json_schema()
    assert schema["required"] == ["query"] and schema["properties"]["limit"]["default"] == 5
    assert tool.one_line_summary().startswith("Search deferred tool metadata with BM25")
