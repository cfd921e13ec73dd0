"""Plugin faults other than exceptions: code that never returns (abort still ends the run at once;
async hooks get a time bound) and code that blocks the event loop (the watchdog names it on
stderr). The host keeps serving throughout."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import of_type, text_of
from runf_helpers import ext, extension_errors, session_records, tool_step

from atomic_host.testing import start_host

pytestmark = pytest.mark.slow  # plugins that never return: each test waits out a time bound


async def _abort_at_tool(host: Any, tool: str) -> tuple[int, float]:
    c = host.client
    host.faux.push(tool_step(tool))
    n0 = len(c.events)
    await c.prompt("go")
    await c.wait_for_event("tool_execution_start", after=n0)
    await asyncio.sleep(0.1)
    t0 = time.monotonic()
    assert await c.abort() is None
    return n0, time.monotonic() - t0


async def _still_serving(host: Any) -> None:
    state = await host.client.get_state()
    assert not state["isStreaming"]
    host.faux.push("still here")
    events = await host.client.prompt_and_wait("are you there?")
    assert text_of(of_type(events, "message_end")[-1]["message"]) == "still here"


def _stderr(path: Path) -> str:
    return path.read_text(errors="replace")


async def test_abort_ends_a_tool_that_never_returns(tmp_path: Path) -> None:
    log = tmp_path / "stderr.txt"
    with log.open("wb") as err:
        async with start_host("-e", ext("runf_hang"), stderr=err.fileno()) as host:
            n0, took = await _abort_at_tool(host, "runf_hang")
            assert took < 3.0
            events = host.client.events[n0:]
            end = of_type(events, "tool_execution_end")[0]
            assert end["isError"] is True and end["result"]["content"][0]["text"] == "Tool execution was aborted"
            assert [e["type"] for e in events][-3:] == ["turn_end", "agent_end", "agent_settled"]
            assert await session_records(host) == ["user:go", "assistant:", "toolResult:runf_hang"]
            await _still_serving(host)
    assert f"tool runf_hang ({ext('runf_hang')}) did not stop on abort" in _stderr(log)


async def test_abort_ends_a_tool_that_swallows_cancellation_and_the_host_still_exits() -> None:
    async with start_host("-e", ext("runf_hang")) as host:
        n0, took = await _abort_at_tool(host, "runf_stubborn")
        assert took < 4.0
        end = of_type(host.client.events[n0:], "tool_execution_end")[0]
        assert end["result"]["content"][0]["text"] == "Tool execution was aborted"
        await _still_serving(host)
        t0 = time.monotonic()
        assert await host.client.close() == 0  # the abandoned task cannot hold the exit
        assert time.monotonic() - t0 < 6.0


async def test_abort_ends_a_tool_call_hook_that_never_returns() -> None:
    async with start_host("-e", ext("runf_hook_hangs")) as host:  # default time bound: 30 s
        n0, took = await _abort_at_tool(host, "runf_ping")
        assert took < 3.0
        end = of_type(host.client.events[n0:], "tool_execution_end")[0]
        assert end["isError"] and end["result"]["content"][0]["text"] == "Tool execution was aborted"
        await _still_serving(host)


async def test_abort_ends_a_provider_stream_that_ignores_the_signal(tmp_path: Path) -> None:
    log = tmp_path / "stderr.txt"
    with log.open("wb") as err:
        async with start_host("-e", ext("runf_hang"), "--model", "runfstuck/stuck-1", stderr=err.fileno()) as host:
            c = host.client
            n0 = len(c.events)
            await c.prompt("hello")
            await c.wait_for_event(
                lambda e: e["type"] == "message_start" and e["message"]["role"] == "assistant", after=n0
            )
            assert (await c.get_state())["isStreaming"]
            t0 = time.monotonic()
            await c.abort()
            assert time.monotonic() - t0 < 3.0
            final = of_type(c.events[n0:], "message_end")[-1]["message"]
            assert final["role"] == "assistant" and final["stopReason"] == "aborted"
            assert final["errorMessage"] == "Request was aborted"
            assert [e["type"] for e in c.events[n0:]][-3:] == ["turn_end", "agent_end", "agent_settled"]
            assert not (await c.get_state())["isStreaming"]
            assert await session_records(host) == ["user:hello", "assistant:"]
    assert "provider stream ignored abort" in _stderr(log)


async def test_async_hooks_past_the_time_bound_are_skipped_and_named() -> None:
    path = ext("runf_hook_hangs")
    async with start_host("-e", path, settings={"hookTimeoutMs": 400}) as host:
        c = host.client
        # tool_call hangs: skipped after 0.4 s, the tool runs, the run completes
        host.faux.push(tool_step("runf_ping"), "done")
        t0 = time.monotonic()
        events = await c.prompt_and_wait("ping")
        assert 0.35 < time.monotonic() - t0 < 5
        end = of_type(events, "tool_execution_end")[0]
        assert end["isError"] is False and end["result"]["content"][0]["text"] == "pong"
        assert [(e["extensionPath"], e["event"], e["error"]) for e in extension_errors(host)] == [
            (path, "tool_call", "timed out after 400 ms; skipped"),
        ]
        # input hangs (and one that swallows its cancellation): the prompt still starts
        for text in ("hang on", "stubborn one"):
            host.faux.push(f"answer to {text}")
            events = await c.prompt_and_wait(text, timeout=10)
            assert text_of(of_type(events, "message_end")[-1]["message"]) == f"answer to {text}"
        assert [(e["event"], e["error"]) for e in extension_errors(host)][1:] == [
            ("input", "timed out after 400 ms; skipped"),
            ("input", "timed out after 400 ms; skipped"),
        ]
        assert (await c.get_state())["messageCount"] == 8


async def test_time_waiting_for_the_user_does_not_count_against_the_bound() -> None:
    async with start_host("-e", ext("runf_hook_confirm"), settings={"hookTimeoutMs": 300}) as host:
        c = host.client
        for allow, expected in ((False, "the user said no"), (True, "guarded tool ran")):
            host.faux.push(tool_step("runf_guarded"), "done")
            n0 = len(c.events)
            await c.prompt("run it")
            request = await c.wait_for_event(
                lambda e: e["type"] == "extension_ui_request" and e.get("method") == "confirm", after=n0
            )
            await asyncio.sleep(0.9)  # three times the bound
            await c.extension_ui_response(request["id"], confirmed=allow)
            await c.wait_for_idle(after=n0)
            end = of_type(c.events[n0:], "tool_execution_end")[0]
            assert end["result"]["content"][0]["text"] == expected and end["isError"] is (not allow)
        assert extension_errors(host) == []


async def test_watchdog_names_a_plugin_that_blocks_the_loop(tmp_path: Path) -> None:
    path = ext("runf_blocking")
    log = tmp_path / "stderr.txt"
    with log.open("wb") as err:
        # 800 ms: far below the plugin's 1.5 s naps, far above what a loaded 2-core machine's
        # scheduling alone costs the loop (0.3-0.4 s stalls were seen there in host code)
        async with start_host("-e", path, settings={"loopStallMs": 800}, stderr=err.fileno()) as host:
            c = host.client
            # a synchronous tool that sleeps 1.5 s on the loop
            host.faux.push(tool_step("runf_sleepy"), "done")
            n0 = len(c.events)
            await c.prompt("sleep")
            await c.wait_for_event("tool_execution_start", after=n0)
            assert (await c.get_state())["messageCount"] >= 2  # answered, once the loop runs again
            await c.wait_for_idle(after=n0)
            # a synchronous on_event hook that sleeps
            assert (await c.call("prompt", message="/runf_nap turn_end"))["disposition"] == "handled"
            host.faux.push("done again")
            await c.prompt_and_wait("again")
            await asyncio.sleep(0.6)
            text = _stderr(log)
            blocked = [line for line in text.splitlines() if "event loop blocked for" in line]
            assert len(blocked) == 2, text
            assert f"by plugin {path} (sleepy_tool at {path}:" in blocked[0]
            assert f"by plugin {path} (on_event at {path}:" in blocked[1]
            assert text.count("event loop running again after a stall of") == 2
            assert (await c.get_state())["isStreaming"] is False


async def test_watchdog_leaves_out_time_the_process_was_stopped(tmp_path: Path) -> None:
    """SIGSTOP for 1.5 s (as a starved process on a loaded machine, or a suspended laptop): no
    thread ran, so the loop was not blocked; a plugin that blocks afterwards is still named."""
    path = ext("runf_blocking")
    log = tmp_path / "stderr.txt"
    with log.open("wb") as err:
        async with start_host("-e", path, settings={"loopStallMs": 500}, stderr=err.fileno()) as host:
            c = host.client
            await c.get_state()
            os.kill(c.proc.pid, signal.SIGSTOP)
            await asyncio.sleep(1.5)
            os.kill(c.proc.pid, signal.SIGCONT)
            await asyncio.sleep(0.8)
            assert (await c.get_state())["isStreaming"] is False
            assert "event loop blocked" not in _stderr(log)
            host.faux.push(tool_step("runf_sleepy"), "done")
            await c.prompt_and_wait("sleep")
            await asyncio.sleep(0.3)
            blocked = [line for line in _stderr(log).splitlines() if "event loop blocked for" in line]
            assert len(blocked) == 1 and f"by plugin {path} (sleepy_tool at {path}:" in blocked[0], blocked


async def test_watchdog_is_quiet_when_nothing_blocks(tmp_path: Path) -> None:
    log = tmp_path / "stderr.txt"
    with log.open("wb") as err:
        async with start_host("-e", ext("runf_hang"), stderr=err.fileno()) as host:
            host.faux.push({"content": "a reply " * 50, "chunkDelayMs": 5}, "two")
            await host.client.prompt_and_wait("talk")
            await host.client.prompt_and_wait("more")
    assert "event loop blocked" not in _stderr(log)


async def test_a_tool_module_is_imported_off_the_event_loop(tmp_path: Path) -> None:
    """Building a tool's schema imports its module (pydantic and all): 0.1 s and more, in a thread."""
    log = tmp_path / "imported-by.txt"
    here = str(Path(__file__).parent)
    async with start_host("-e", ext("runf_lazy_tool"), env={"PYTHONPATH": here, "RUNF_IMPORT_LOG": str(log)}) as host:
        c = host.client
        call = {"type": "toolCall", "name": "runf_lazy", "arguments": {"word": "hi"}, "id": "t1"}
        host.faux.push({"content": [call]}, "done")
        events = await c.prompt_and_wait("go")
        assert log.read_text() != "MainThread"
        results = [e for e in of_type(events, "tool_execution_end") if e["toolName"] == "runf_lazy"]
        assert text_of(results[0]["result"]) == "lazy hi"



async def test_a_provider_module_is_imported_off_the_event_loop(tmp_path: Path) -> None:
    """The first prompt imports its model's stream module (httpx, an SDK: 0.1 s to over a second
    on a loaded machine) in a thread: the loop answers meanwhile, and the watchdog sees no stall."""
    log, err_log = tmp_path / "imported-by.txt", tmp_path / "stderr.txt"
    env = {"PYTHONPATH": str(Path(__file__).parent), "RUNF_IMPORT_LOG": str(log), "RUNF_IMPORT_S": "1.0"}
    args = ("-e", ext("runf_lazy_provider"), "--provider", "runflazy", "--model", "lazy-1")
    with err_log.open("wb") as err:
        async with start_host(*args, env=env, settings={"loopStallMs": 500}, stderr=err.fileno()) as host:
            c = host.client
            await c.get_state()
            n0 = len(c.events)
            prompt = asyncio.create_task(c.prompt("go"))
            while not log.exists():  # the import has begun
                await asyncio.sleep(0.01)
            t0 = time.monotonic()
            await c.call("abort_retry")  # a concurrent-lane command (as abort): answered during the import
            assert time.monotonic() - t0 < 0.9, "the loop waited for the import"
            await prompt
            await c.wait_for_idle(after=n0)
            assert log.read_text() != "MainThread"
            assert [text_of(e["message"]) for e in of_type(c.events[n0:], "message_end")][-1] == "lazy reply"
    assert "event loop blocked" not in _stderr(err_log)
