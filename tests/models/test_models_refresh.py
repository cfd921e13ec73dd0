"""``refresh_models {timeoutMs, force, allowNetwork}``: models.json and auth.json are re-read, and a
provider with a dynamic catalog (``ProviderInfo.refresh_models``) is asked over the network; the
answer says ``aborted`` (the deadline passed) and ``errors`` (who failed), so a model picker can tell
an empty catalog from a failed refresh. The catalog server is a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import time
from pathlib import Path

from atomic_host.testing import start_host
from atomic_host.testing_sse import Reply, SSEServer

EXTENSION = '''"""A provider whose catalog is what its server lists at GET /models (OpenAI's shape)."""

import os

import httpx

from atomic_host import ProviderInfo, hookimpl


async def fetch(request):
    async with httpx.AsyncClient() as client:
        response = await client.get(request.base_url + "/models", headers={"authorization": "Bearer none"})
        response.raise_for_status()
        return [{"id": m["id"], "contextWindow": 32000} for m in response.json()["data"]]


@hookimpl
def register_providers(register):
    register(ProviderInfo(id="dyn", name="Dynamic", api="openai-completions", always_authenticated=True,
                          base_url=os.environ["DYN_BASE_URL"], refresh_models=fetch))
'''


def listing(*ids: str) -> Reply:
    body = json.dumps({"object": "list", "data": [{"id": i, "object": "model"} for i in ids]})
    return Reply(status=200, body=body, content_type="application/json")


def dyn_ids(data: dict) -> list[str]:
    return [m["id"] for m in data["models"] if m["provider"] == "dyn"]


async def test_dynamic_catalog_refresh_reports_errors_and_deadlines(tmp_path: Path) -> None:
    extension = tmp_path / "dyn_catalog.py"
    extension.write_text(EXTENSION)
    with SSEServer() as server:
        env = {"DYN_BASE_URL": server.base_url}
        async with start_host("-e", str(extension), base=tmp_path / "host", env=env) as host:
            c = host.client
            assert dyn_ids(await c.call("get_available_models")) == []  # nothing fetched at startup

            server.enqueue(listing("dyn-a", "dyn-b"))
            data = await c.call("refresh_models")
            assert dyn_ids(data) == ["dyn-a", "dyn-b"] and data["aborted"] is False and data["errors"] == []
            assert {"scopedModels", "oauthProviders", "customAuthProviders"} <= set(data)
            assert dyn_ids(await c.call("get_available_models")) == ["dyn-a", "dyn-b"]
            assert len(server.requests) == 1 and server.requests[0].path == "/models"

            # fetched moments ago: reused without force; no network at all with allowNetwork false
            assert dyn_ids(await c.call("refresh_models")) == ["dyn-a", "dyn-b"]
            data = await c.call("refresh_models", force=True, allowNetwork=False)
            assert data["errors"] == [] and len(server.requests) == 1

            # a failed fetch is reported and the last good catalog stays
            server.enqueue(Reply(status=500, body='{"error": "down"}'))
            data = await c.call("refresh_models", force=True)
            assert data["aborted"] is False and dyn_ids(data) == ["dyn-a", "dyn-b"]
            [error] = data["errors"]
            assert error["provider"] == "dyn" and "500" in error["message"]

            # a server that never answers: the deadline ends the refresh, aborted says so
            server.enqueue(Reply(stall_before_headers=True))
            started = time.monotonic()
            data = await c.call("refresh_models", force=True, timeoutMs=300)
            assert time.monotonic() - started < 5
            assert data["aborted"] is True and data["errors"] == [] and dyn_ids(data) == ["dyn-a", "dyn-b"]

            # an empty catalog is an answer, not an error
            server.enqueue(listing())
            data = await c.call("refresh_models", force=True)
            assert dyn_ids(data) == [] and data["errors"] == [] and data["aborted"] is False

            # fields of the wrong type are refused by name; the host keeps serving
            for bad in ({"timeoutMs": "soon"}, {"force": "yes"}, {"allowNetwork": [True]}):
                response = await c.request({"type": "refresh_models", **bad})
                assert response["success"] is False and next(iter(bad)) in response["error"]

            # a broken models.json is an error of that file
            (host.agent_dir / "models.json").write_text("{not json")
            data = await c.call("refresh_models", allowNetwork=False)
            assert [e["provider"] for e in data["errors"]] == ["models.json"]
            host.assert_protocol_lines()


def test_merging_a_fetched_catalog_costs_time_linear_in_its_size(tmp_path: Path) -> None:
    """A dynamic catalog of n, 10n and 100n models: reloading costs CPU time about linear in n (a
    scan per model, quadratic, would take ~100x longer at 100n than linear growth allows)."""
    from atomic_host.contract.providers import ProviderInfo
    from atomic_host.core.models.registry import ModelRegistry

    info = ProviderInfo(id="dyn", name="Dynamic", api="openai-completions", always_authenticated=True,
                        refresh_models="unused:fetch")
    registry = ModelRegistry(tmp_path, [info], {}, env={})

    def cpu(n: int) -> float:
        registry.fetched["dyn"] = (0.0, [{"id": f"m{i}"} for i in range(n)])
        best = float("inf")
        for _ in range(3):
            started = time.process_time()
            registry.reload()
            best = min(best, time.process_time() - started)
        assert len([m for m in registry.available() if m["provider"] == "dyn"]) == n
        return best

    small, large = cpu(200), cpu(20000)
    assert large < small * 100 * 4, (small, large)  # linear with slack for noise; quadratic is ~100x over
