"""Usage a provider reports that is no token count does not cost the reply.

The answer fixtures of each API are served with their usage counts replaced by values a broken
gateway or proxy sends: ``1e400`` (valid JSON, infinite as a float), a string, an object, a
negative number, a float, a huge integer, and usage objects or their details of the wrong type.
Each reply must arrive whole, its usage clamped to non-negative integers (an unusable count is
absent, so 0), its cost never negative, and the host notes each bad field once on stderr.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from vendor_helpers import FIXTURES, NO_RETRY, assistants, text_of, write_models

from atomic_host import testing_sse as sse
from atomic_host.testing import Host, start_host

pytestmark = pytest.mark.slow  # hypothesis over four parsers

BAD = {
    "infinite": "1e400",
    "string": '"abc"',
    "object": '{"tokens": 5}',
    "negative": "-150000000",
    "huge": "1" + "0" * 30,
    "boolean": "true",
}
# (api, fixture, {counted field: the usage key it comes from}, where the nested details sit)
APIS = {
    "anthropic-messages": ("anthropic/answer.sse", ["input_tokens", "output_tokens"]),
    "openai-completions": ("openai_chat/answer.sse", ["prompt_tokens", "completion_tokens"]),
    "openai-responses": ("openai_responses/answer.sse", ["input_tokens", "output_tokens"]),
}
WRONG_SHAPES = {
    # usage (or its details) of the wrong type: ignored, the reply kept
    "anthropic-messages": [('"usage":{"output_tokens":4}', '"usage":"abc"'),
                           ('"output_tokens":1}', '"output_tokens":1,"cache_creation":"abc"}')],
    "openai-completions": [('"completion_tokens_details":{"reasoning_tokens":0}', '"completion_tokens_details":7'),
                           ('"usage":{', '"usage":{"prompt_tokens_details":"x",')],
    "openai-responses": [('"input_tokens_details":{"cached_tokens":0}', '"input_tokens_details":[1]'),
                         ('"output_tokens_details":{"reasoning_tokens":0}', '"output_tokens_details":"x"')],
}  # fmt: skip
NOTE = re.compile(r"usage field (\S+) was (.+), not a token count")


def _with_counts(fixture: str, keys: list[str], value: str) -> bytes:
    text = (FIXTURES / fixture).read_text()
    for key in keys:
        text, n = re.subn(rf'"{key}":\d+', f'"{key}":{value}', text)
        assert n, (fixture, key)
    return text.encode()


@asynccontextmanager
async def _host(tmp_path: Path, base_url: str, api: str) -> AsyncIterator[tuple[Host, Path]]:
    write_models(tmp_path / "agent", base_url, api)
    log = tmp_path / "stderr.txt"
    with log.open("wb") as err:
        async with start_host("--model", "vendor/m1", base=tmp_path, settings=NO_RETRY, stderr=err.fileno()) as host:
            yield host, log
    host.assert_protocol_lines()


def _check_usage(message: dict[str, Any]) -> None:
    usage = message["usage"]
    for key in ("input", "output", "cacheRead", "cacheWrite", "totalTokens"):
        assert type(usage[key]) is int and 0 <= usage[key] < 2**53, (key, usage)
    assert all(v >= 0 for v in usage["cost"].values()), usage["cost"]


@pytest.mark.parametrize("api", list(APIS))
@pytest.mark.parametrize("bad", list(BAD))
async def test_a_reply_with_bad_usage_counts_is_kept(
    sse_server: Any, tmp_path: Path, api: str, bad: str
) -> None:
    fixture, keys = APIS[api]
    for _ in range(2):
        sse_server.enqueue(sse.pieces(_with_counts(fixture, keys, BAD[bad]), 7))
    async with _host(tmp_path, sse_server.base_url, api) as (host, log):
        for _ in range(2):
            events = await host.client.prompt_and_wait("hi", timeout=60)
            (reply,) = assistants(events)
            assert reply["stopReason"] == "stop" and text_of(reply) == "All done.", reply.get("errorMessage")
            _check_usage(reply)
            if bad == "negative":
                assert reply["usage"]["input"] == 0 and reply["usage"]["cost"]["total"] >= 0
    notes = NOTE.findall(log.read_text())
    # each bad field noted once, for two replies
    assert sorted(field for field, _ in notes) == sorted(keys), log.read_text()


@pytest.mark.parametrize("api", list(APIS))
async def test_usage_of_the_wrong_shape_is_ignored(sse_server: Any, tmp_path: Path, api: str) -> None:
    fixture, _ = APIS[api]
    for old, new in WRONG_SHAPES[api]:
        text = (FIXTURES / fixture).read_text()
        assert old in text, old
        sse_server.enqueue(sse.pieces(text.replace(old, new, 1).encode(), 7))
    async with _host(tmp_path, sse_server.base_url, api) as (host, _):
        for _ in WRONG_SHAPES[api]:
            events = await host.client.prompt_and_wait("hi", timeout=60)
            (reply,) = assistants(events)
            assert reply["stopReason"] == "stop" and text_of(reply) == "All done.", reply.get("errorMessage")
            _check_usage(reply)
