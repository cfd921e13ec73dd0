"""``SyncClient``: the client for scripts without asyncio. Runs, commands and streams block; leaving
a stream aborts the run (the model server sees its stream cancelled); a dead host raises at once."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from client_sse import MODEL, stalled_reply, text_reply, write_models

from atomic_host.client import AtomicOptions, HostExited, SyncClient, types
from atomic_host.testing import FauxScript, host_env
from atomic_host.testing_sse import SSEServer


def _options(tmp_path: Path, **fields: object) -> AtomicOptions:
    """Options for a sandboxed host: its own agent dir (quiet settings) and faux script."""
    (tmp_path / "work").mkdir(exist_ok=True)
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    (agent / "settings.json").write_text(json.dumps({"sessionSummary": {"enabled": False}}))
    faux = FauxScript(tmp_path / "faux.jsonl")
    env = host_env(agent, faux.path, tmp_path / "faux-log.jsonl")
    return AtomicOptions(cwd=tmp_path / "work", env=env, **fields)  # type: ignore[arg-type]


def test_a_script_runs_prompts_and_commands(tmp_path: Path) -> None:
    with SSEServer() as server:
        write_models(tmp_path / "agent", server.base_url)
        server.enqueue(text_reply("synchronous answer"))
        with SyncClient(_options(tmp_path, model=MODEL)) as client:
            result = client.run("hi")
            assert result.text == "synchronous answer" and result.usage.output == 200
            state = client.get_state()
            assert isinstance(state, types.StateData) and state.session_id == result.session_id
            assert threading.current_thread() is threading.main_thread()
        assert client.exit_code == 0


def test_leaving_a_sync_stream_aborts_the_run(tmp_path: Path) -> None:
    with SSEServer() as server:
        write_models(tmp_path / "agent", server.base_url)
        server.enqueue(stalled_reply())
        server.enqueue(text_reply("next"))
        with SyncClient(_options(tmp_path, model=MODEL)) as client:
            for event in client.stream("hang"):
                if event.type == "message_update":
                    break
            t0 = time.monotonic()
            while 0 not in server.cancelled:
                assert time.monotonic() - t0 < 2, "the model server never saw the stream cancelled"
                time.sleep(0.02)
            assert client.run("again").text == "next"


def test_a_killed_host_raises_at_once(tmp_path: Path) -> None:
    opts = _options(tmp_path, provider="faux")
    FauxScript(tmp_path / "faux.jsonl").push({"content": "word " * 400, "chunkDelayMs": 50})
    client = SyncClient(opts)
    try:
        with pytest.raises(HostExited) as caught:
            for event in client.stream("slow"):
                if event.type == "message_update" and "killed" not in locals():
                    os.kill(client.proc.pid, signal.SIGKILL)
                    killed = time.monotonic()
        assert time.monotonic() - killed < 2
        assert caught.value.status == -signal.SIGKILL
    finally:
        client.close()
