"""Dev script: replay streams recorded from the real vendor APIs through a real ``atomic --mode rpc``.

    python bench/replay_vendor_streams.py [DIR] [--chunk 5] [--only SUBSTRING]

``DIR`` (default ``../shared/vendor-streams``) holds ``anthropic/``, ``openai_chat/`` and
``openai_responses/`` with ``*.sse`` streams and ``http_<status>_*.json`` error bodies recorded by
people outside the project (see its README.md and SOURCES.md). It lives outside the repository and
is absent in CI, so this is a script, not a test; the project's own fixtures under
``tests/conformance/vendor/`` show the same shapes.

For each recording a fresh host starts with a models.json provider pointing at a local HTTP server
that serves the recorded bytes exactly, in ``--chunk``-byte pieces (5 by default, so UTF-8
characters and SSE frames are split across reads). Error bodies are served with their status (the
429 cases get a ``retry-after`` header, as the real services send one). After the recording the
server serves the API's plain text recording (the "fallback reply"), so a retry or a compaction has
something to talk to; ``*_answer.sse`` and ``*_turnN.sse`` files are served in order after their
first file. A small extension registers the tools the recordings call; each one answers with the
arguments it received, so a tool run with half-parsed arguments is visible.

Printed per recording: text, thinking, tool calls, usage, stop reason, error message, tool
results, and what the host decided (auto-retry with its delay, overflow compaction, or nothing).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from atomic_host import testing_sse as sse  # noqa: E402
from atomic_host.testing import start_host  # noqa: E402

APIS = {"anthropic": "anthropic-messages", "openai_chat": "openai-completions", "openai_responses": "openai-responses"}
FALLBACK = {"anthropic": "llm_text.sse", "openai_chat": "oai_text_foo.sse", "openai_responses": "vercel_text.sse"}
RETRY_AFTER = {
    # Headers the real services send with these bodies (SOURCES.md, http_429_rate_limit.json).
    "anthropic/http_429_rate_limit.json": {"retry-after": "2"},
    "openai_chat/http_429_rate_limit_exceeded.json": {"retry-after-ms": "1574"},
}
SETTINGS = {
    "retry": {"enabled": True, "maxRetries": 1, "baseDelayMs": 200, "provider": {"maxRetryDelayMs": 60000}},
    "sessionSummary": {"enabled": False},  # no background summary request between the replies
}
TOOLS_EXTENSION = '''
"""Tools the recordings call; each answers with the arguments it got."""
import json
from atomic_host import hookimpl
from atomic_host.contract.tools import Tool

NAMES = ["get_weather", "make_file", "pelican_name_generator", "fixed_version", "calculator",
         "GetWeatherArgs", "get_stock_price"]


def _echo(name):
    async def handler(params, ctx):
        return f"{name} ran with " + json.dumps(params, sort_keys=True)
    return handler


@hookimpl
def register_tools(register):
    for name in NAMES:
        register(Tool(name, f"Replay tool {name}.", {"type": "object"}, _echo(name)))
'''


@dataclass
class Case:
    name: str
    folder: str
    files: list[Path]
    """The recording, then its follow-up turns."""
    fallback: Path


@dataclass
class Served:
    path: str
    at: float


class TimedServer(sse.SSEServer):  # type: ignore[misc, name-defined]
    """The tests' SSE server, noting when each request arrived."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[float] = []

    def _handle(self, h: Any) -> None:
        self.arrivals.append(time.monotonic())
        super()._handle(h)


def pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def reply_for(path: Path, folder: str, chunk: int) -> Any:
    data = path.read_bytes()
    m = re.match(r"http_(\d{3})_", path.name)
    if m:
        headers = RETRY_AFTER.get(f"{folder}/{path.name}", {})
        return sse.Reply(status=int(m.group(1)), body=data.decode("utf-8"), headers=dict(headers))
    return sse.Reply(chunks=pieces(data, chunk))


def build_cases(root: Path) -> list[Case]:
    cases: list[Case] = []
    for folder in APIS:
        files = sorted(p for p in (root / folder).iterdir() if p.suffix in (".sse", ".json"))
        names = {p.name for p in files}
        for p in files:
            if p.stem.endswith("_answer") or re.search(r"_turn[2-9]$", p.stem):
                continue  # served as a follow-up of its first file
            chain = [p]
            answer = p.with_name(p.stem + "_answer.sse")
            if answer.name in names:
                chain.append(answer)
            if p.stem.endswith("_turn1"):
                n = 2
                while (nxt := p.with_name(p.stem[:-1] + f"{n}.sse")).name in names:
                    chain.append(nxt)
                    n += 1
            cases.append(Case(p.stem, folder, chain, root / folder / FALLBACK[folder]))
    return cases


def models_json(base_url: str, api: str) -> str:
    model = {
        "id": "replay",
        "reasoning": True,
        "contextWindow": 200000,
        "maxTokens": 32000,
        "cost": {"input": 1, "output": 2},
    }
    provider = {"baseUrl": base_url, "api": api, "apiKey": "dummy", "models": [model]}
    return json.dumps({"providers": {"vendor": provider}})


def short(text: str, limit: int = 160) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} chars)"


def describe_assistant(msg: dict[str, Any]) -> list[str]:
    lines = []
    for b in msg.get("content") or []:
        kind = b.get("type")
        if kind == "text":
            lines.append(f"text: {short(b.get('text', ''))!s}")
            if b.get("textSignature"):
                lines.append(f"  textSignature: {short(b['textSignature'], 60)}")
        elif kind == "thinking":
            sig = b.get("thinkingSignature") or ""
            extra = f" [signature {len(sig)} chars]" if sig else " [no signature]"
            if b.get("redacted"):
                extra += " [redacted]"
            lines.append(f"thinking: {short(b.get('thinking', ''))}{extra}")
        elif kind == "toolCall":
            lines.append(f"toolCall: {b.get('name')} {json.dumps(b.get('arguments'))[:200]} id={b.get('id')}")
    u = msg.get("usage") or {}
    lines.append(
        f"usage: input={u.get('input')} output={u.get('output')} cacheRead={u.get('cacheRead')} "
        f"cacheWrite={u.get('cacheWrite')} total={u.get('totalTokens')} cost={u.get('cost', {}).get('total'):.6f}"
    )
    stop = f"stopReason: {msg.get('stopReason')}"
    if msg.get("rawStopReason"):
        stop += f" (raw {msg['rawStopReason']})"
    lines.append(stop)
    if msg.get("errorMessage"):
        lines.append(f"errorMessage: {short(msg['errorMessage'], 240)}")
    for key in ("responseId", "responseModel", "retryAfterMs"):
        if msg.get(key) is not None:
            lines.append(f"{key}: {msg[key]}")
    return lines


def replayed(api: str, body: Any) -> str:
    """What a follow-up request sent back of the earlier turns (thinking signatures, tool results)."""
    if not isinstance(body, dict):
        return "?"
    parts: list[str] = []
    if api == "anthropic-messages":
        for m in body.get("messages") or []:
            kinds = []
            for b in m["content"] if isinstance(m["content"], list) else []:
                kind = b.get("type")
                if kind == "thinking":
                    kind += f"(signature {len(b.get('signature') or '')})"
                elif kind == "redacted_thinking":
                    kind += f"(data {len(b.get('data') or '')})"
                elif kind == "tool_result":
                    kind += "(error)" if b.get("is_error") else ""
                kinds.append(kind)
            parts.append(f"{m['role']}[{', '.join(kinds)}]")
    elif api == "openai-completions":
        for m in body.get("messages") or []:
            extra = f" tool_calls={len(m['tool_calls'])}" if m.get("tool_calls") else ""
            parts.append(f"{m['role']}{extra}")
    else:
        for item in body.get("input") or []:
            kind = item.get("type") or item.get("role")
            if kind == "reasoning":
                kind += "(encrypted)" if item.get("encrypted_content") else "(no encrypted_content)"
            parts.append(kind)
    return " ".join(parts)


def decisions(events: list[dict[str, Any]], arrivals: list[float], event_times: list[float]) -> list[str]:
    out = []
    for i, e in enumerate(events):
        t = e["type"]
        if t == "auto_retry_start":
            waited = ""
            later = [a for a in arrivals if a > event_times[i]]
            if later:
                waited = f", next request {1000 * (later[0] - event_times[i]):.0f} ms later"
            out.append(f"auto_retry_start attempt={e['attempt']} delayMs={e['delayMs']}{waited}")
        elif t == "auto_retry_end":
            out.append(
                f"auto_retry_end success={e['success']}"
                + (f" finalError={short(e.get('finalError') or '', 80)}" if not e["success"] else "")
            )
        elif t == "compaction_start":
            out.append(f"compaction_start reason={e.get('reason')}")
        elif t == "compaction_end":
            extra = " unresolvedOverflow" if e.get("unresolvedOverflow") else ""
            err = f" error={short(e['errorMessage'], 80)}" if e.get("errorMessage") else ""
            out.append(f"compaction_end willRetry={e.get('willRetry')}{extra}{err}")
    return out or ["no retry, no compaction"]


async def run_case(case: Case, chunk: int, tools_ext: Path) -> str:
    api = APIS[case.folder]
    follow = f" (+{len(case.files) - 1} follow-up)" if len(case.files) > 1 else ""
    report = [f"=== {case.folder}/{case.name}{follow}"]
    with tempfile.TemporaryDirectory(prefix="replay-") as tmp, TimedServer() as server:
        base = Path(tmp)
        (base / "agent").mkdir()
        (base / "agent" / "models.json").write_text(models_json(server.base_url, api))
        for path in case.files:
            server.enqueue(reply_for(path, case.folder, chunk))
        for _ in range(4):
            server.enqueue(reply_for(case.fallback, case.folder, chunk))
        async with start_host("--model", "vendor/replay", "-e", str(tools_ext), base=base, settings=SETTINGS) as host:
            times: list[float] = []
            host.client.on_event(lambda _e: times.append(time.monotonic()))
            start = len(host.client.events)
            await host.client.prompt_and_wait("Replay the recording.", timeout=90)
            events = host.client.events[start:]
            event_times = times[-len(events) :] if len(times) >= len(events) else [0.0] * len(events)
        ends = [e["message"] for e in events if e["type"] == "message_end"]
        assistants = [m for m in ends if m["role"] == "assistant"]
        served = min(len(server.requests), len(case.files))
        for n, msg in enumerate(assistants):
            label = "recording" if n < served else "fallback"
            if n < len(case.files) and n < served:
                label = case.files[n].name
            report.append(f"  [assistant {n + 1}: {label}]")
            report += [f"    {line}" for line in describe_assistant(msg)]
            if n >= len(case.files):
                break  # the fallback reply after a retry: enough to show the retry worked
        for e in events:
            if e["type"] == "tool_execution_end":
                text = "".join(c.get("text", "") for c in e["result"].get("content") or [])
                report.append(f"  tool {e['toolName']} isError={e['isError']}: {short(text, 200)}")
        for n, request in enumerate(server.requests[1 : len(case.files)], start=2):
            report.append(f"  request {n} replayed: {replayed(api, request.body)}")
        report.append("  decision: " + "; ".join(decisions(events, server.arrivals, event_times)))
        report.append(f"  requests served: {len(server.requests)}")
    return "\n".join(report)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", default="../shared/vendor-streams", help="the recordings")
    parser.add_argument("--chunk", type=int, default=5, help="bytes per write (default 5)")
    parser.add_argument("--only", default="", help="only recordings whose folder/name contains this")
    args = parser.parse_args()
    root = Path(args.dir)
    if not (root / "anthropic").is_dir():
        print(f"no recordings under {root.resolve()} (pass the vendor-streams directory)", file=sys.stderr)
        return 2
    cases = [c for c in build_cases(root) if args.only in f"{c.folder}/{c.name}"]
    with tempfile.TemporaryDirectory(prefix="replay-ext-") as ext_dir:
        tools_ext = Path(ext_dir) / "replay_tools.py"
        tools_ext.write_text(textwrap.dedent(TOOLS_EXTENSION))
        for case in cases:
            try:
                print(await run_case(case, args.chunk, tools_ext), flush=True)
            except Exception as exc:  # one broken case must not hide the others
                print(f"=== {case.folder}/{case.name}\n  REPLAY FAILED: {type(exc).__name__}: {exc}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
