"""Provider hooks and run-time providers, through the real host and a real local SSE server that
records every request: what ``before_provider_request`` / ``before_provider_headers`` change is read
off the wire, what ``after_provider_response`` saw is logged by the plugin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from extapi_helpers import QUIET, chat_reply, errors, plugin, read_log, write_models

from atomic_host import testing_sse as sse
from atomic_host.testing import start_host

LOGGING = """
import json, os
from atomic_host import hookimpl
from atomic_host.contract.results import ProviderPayload

def _log(**fields):
    with open(os.environ["HOOK_LOG"], "a") as f:
        f.write(json.dumps(fields) + "\\n")
"""

HOOKS = LOGGING + """
@hookimpl
def before_provider_request(event, api):
    event.payload["max_tokens"] = min(event.payload.get("max_tokens") or 10**9, 256)
    _log(hook="request", url=event.url, model=event.model["id"], keys=sorted(event.payload))

@hookimpl
def before_provider_headers(event, api):
    event.headers["x-extension"] = "on"
    event.headers["x-drop-me"] = None
    _log(hook="headers", has_auth="authorization" in event.headers)

@hookimpl
def after_provider_response(event, api):
    _log(hook="response", status=event.status, retry_after=event.headers.get("retry-after"),
         elapsed=event.elapsed_ms, attempt=event.attempt, model=event.model["id"])
"""

REPLACE = LOGGING + """
@hookimpl
async def before_provider_request(event, api):  # loaded later, called first: its result chains on
    return ProviderPayload({**event.payload, "metadata": {"seen_by": "plugin"}})
"""


async def test_payload_header_and_response_hooks_are_seen_on_the_wire(sse_server: Any, tmp_path: Path) -> None:
    write_models(tmp_path / "agent", sse_server.base_url, headers={"x-drop-me": "1", "x-keep": "2"})
    log = tmp_path / "hooks.jsonl"
    hooks, replace = plugin(tmp_path / "hooks.py", HOOKS), plugin(tmp_path / "replace.py", REPLACE)
    sse_server.enqueue(sse.Reply(status=529, body='{"error":"overloaded"}', headers={"retry-after": "0"}))
    sse_server.enqueue(chat_reply("hello back"))
    args = ("--model", "local/m1", "-e", str(hooks), "-e", str(replace))
    async with start_host(*args, base=tmp_path, settings=QUIET, env={"HOOK_LOG": str(log)}) as host:
        run = await host.client.prompt_and_wait("hi")
        assert run.text == "hello back"
        assert errors(host.client.events) == []
    # on the wire: both requests carry the capped max_tokens, the replacement's field and the header
    assert len(sse_server.requests) == 2
    for request in sse_server.requests:
        assert request.body["max_tokens"] == 256
        assert request.body["metadata"] == {"seen_by": "plugin"}
        assert request.headers["x-extension"] == "on" and request.headers["x-keep"] == "2"
        assert "x-drop-me" not in request.headers
        assert request.headers["authorization"] == "Bearer dummy-key-123"
    records = read_log(log)
    responses = [r for r in records if r["hook"] == "response"]
    assert [r["status"] for r in responses] == [529, 200]
    assert responses[0]["retry_after"] == "0" and all(r["elapsed"] >= 0 and r["model"] == "m1" for r in responses)
    requests = [r for r in records if r["hook"] == "request"]
    assert len(requests) == 2 and requests[0]["url"].startswith(sse_server.base_url)
    assert "metadata" in requests[0]["keys"]  # the replacement came first (the later plugin runs first)
    assert all(r["has_auth"] for r in records if r["hook"] == "headers")


async def test_a_failing_provider_hook_is_reported_and_the_request_still_goes(sse_server: Any, tmp_path: Path) -> None:
    write_models(tmp_path / "agent", sse_server.base_url)
    broken = plugin(
        tmp_path / "broken.py",
        """
        from atomic_host import hookimpl

        @hookimpl
        def before_provider_request(event, api):
            event.payload["temperature"] = 0.5
            raise RuntimeError("payload hook broke")

        @hookimpl
        def after_provider_response(event, api):
            raise SystemExit(3)
        """,
    )
    sse_server.enqueue(chat_reply("still here"))
    async with start_host("--model", "local/m1", "-e", str(broken), base=tmp_path, settings=QUIET) as host:
        run = await host.client.prompt_and_wait("hi")
        assert run.text == "still here"
        reported = {(e["event"], e["error"].split(": ", 1)[1]) for e in errors(host.client.events)}
    assert ("before_provider_request", "RuntimeError: payload hook broke") in reported
    assert any(hook == "after_provider_response" and "sys.exit(3)" in why for hook, why in reported)
    # what the hook did before it raised stays (a mutation in place), the request went out
    assert sse_server.requests[0].body["temperature"] == 0.5


PROVIDERS = """
from atomic_host import SlashCommand, ProviderInfo, hookimpl

async def add(args, api):
    api.register_provider(ProviderInfo(id="proxy", name="Proxy", api="openai-completions",
                                       base_url=args.strip(), always_authenticated=True,
                                       models=[{"id": "p1", "name": "Proxied"}]))

async def drop(args, api):
    api.unregister_provider("proxy")
    api.unregister_provider("never-registered")  # no effect, as upstream

@hookimpl
def register_commands(register):
    register(SlashCommand(name="add-proxy", handler=add))
    register(SlashCommand(name="drop-proxy", handler=drop))
"""


def _ids(models: dict[str, Any]) -> set[str]:
    return {f"{m['provider']}/{m['id']}" for m in models["models"]}


async def test_providers_register_and_unregister_at_run_time(sse_server: Any, tmp_path: Path) -> None:
    write_models(tmp_path / "agent", sse_server.base_url)
    ext = plugin(tmp_path / "providers.py", PROVIDERS)
    sse_server.enqueue(chat_reply("via proxy"))
    async with start_host("--model", "local/m1", "-e", str(ext), base=tmp_path, settings=QUIET) as host:
        c = host.client
        assert "proxy/p1" not in _ids(await c.call("get_available_models"))
        assert (await c.prompt(f"/add-proxy {sse_server.base_url}"))["disposition"] == "handled"
        assert "proxy/p1" in _ids(await c.call("get_available_models"))
        await c.call("set_model", provider="proxy", modelId="p1")
        run = await c.prompt_and_wait("through the proxy")
        assert run.text == "via proxy" and sse_server.requests[-1].body["model"] == "p1"
        await c.prompt("/drop-proxy")
        assert "proxy/p1" not in _ids(await c.call("get_available_models"))
        assert errors(c.events) == []
