"""Bench: prompt → agent_end for a 200-delta reply streamed by a local SSE server (OpenAI chat format).

    python bench/agent_run.py [runs] [--with-secrets]

``--with-secrets`` gives the host three credentials to mask (a models.json key and two provider env
vars), so every event pays for masking; without it the host knows none. ``--first-delta`` runs only
the prompt → first ``text_delta`` phase (below) and prints every sample.

Prints medians: the whole run as seen by an RPC client, the server's own streaming time (the same
SSE body consumed by a bare httpx client), their difference = host overhead per run, and the CPU
time the host process spent per run (all its threads, from ``/proc/<pid>/task/*/schedstat``; on a
loaded machine the wall times move with the load, this much less).

Then prompt → first ``text_delta``: the server sends the role chunk and the first content chunk,
then waits :data:`STALL_S` before the rest, so the host's CPU from the prompt to the first delta
is measured alone (read after the delta arrived and the host went back to waiting on the
network), with the wall time from writing the prompt to reading that delta's line.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from atomic_host import testing_sse as sse  # noqa: E402
from atomic_host.testing import start_host  # noqa: E402

DELTAS = 200
STALL_S = 0.25
"""First-delta phase: the server's pause after the first content chunk."""
SETTLE_S = 0.1
"""First-delta phase: how long after the first delta the host's CPU is read (it is idle by then)."""
WITH_SECRETS = "--with-secrets" in sys.argv
FIRST_ONLY = "--first-delta" in sys.argv
BENCH_SECRETS = {"OPENAI_API_KEY": "sk-proj-bench-Lq8Zx2Wm7Pv4Nk1Rt9", "ANTHROPIC_API_KEY": "sk-ant-api03-bench-Hd6Yc3"}


def reply(stall_s: float = 0.0) -> list[Any]:
    def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
        choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
        return {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m1",
            "choices": choices,
            **extra,
        }

    frames: list[Any] = sse.openai_chat_frames(
        [
            chunk({"role": "assistant", "content": ""}),
            *[chunk({"content": f"tok{i} "}) for i in range(DELTAS)],
            chunk({}, finish="stop"),
            chunk(None, usage={"prompt_tokens": 50, "completion_tokens": DELTAS, "total_tokens": 50 + DELTAS}),
        ]
    )
    if stall_s:  # frames[1] is the first content chunk: the pause comes after it
        frames[2] = (stall_s, frames[2])
    return frames


async def raw_stream_ms(server: Any, runs: int) -> list[float]:
    """The server's own time: POST and read the whole SSE body with a bare httpx client."""
    import httpx

    out = []
    async with httpx.AsyncClient() as client:
        for _ in range(runs):
            server.enqueue(reply())
            t0 = time.perf_counter()
            async with client.stream("POST", f"{server.base_url}/chat/completions", json={"stream": True}) as r:
                async for _line in r.aiter_lines():
                    pass
            out.append((time.perf_counter() - t0) * 1000)
    return out


def cpu_ms(pid: int) -> float:
    """CPU time of every thread of process ``pid`` so far (Linux), in ms."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            total += int(f.read().split()[0])
    return total / 1e6


def write_calls(pid: int) -> int:
    """``write``/``writev`` calls of process ``pid`` so far (Linux ``/proc/<pid>/io`` ``syscw``):
    its stdout lines (socket sends are not counted; ``--no-session`` writes no session file)."""
    with open(f"/proc/{pid}/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("syscw:"))


@contextlib.asynccontextmanager
async def local_model_host(server: Any) -> AsyncIterator[Any]:
    """``atomic --mode rpc`` on the model ``local/m1`` of ``server`` (a models.json provider), no
    session file; with ``--with-secrets`` its key and the env keys are credentials to mask."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "agent").mkdir()
        key = "sk-local-bench-Vb5Qm9Xz3Kw7" if WITH_SECRETS else "dummy"
        providers = {"local": {"baseUrl": server.base_url, "api": "openai-completions", "apiKey": key,
                               "models": [{"id": "m1"}]}}  # fmt: skip
        (root / "agent" / "models.json").write_text(json.dumps({"providers": providers}))
        env = BENCH_SECRETS if WITH_SECRETS else None
        async with start_host("--model", "local/m1", "--no-session", base=root, env=env) as host:
            yield host


async def host_run_ms(server: Any, runs: int) -> tuple[list[float], list[float], list[int]]:
    """(prompt → agent_end wall times, host CPU per run, host write calls per run)."""
    out, cpu, writes = [], [], []
    async with local_model_host(server) as host:
        client = host.client
        assert client.proc is not None
        pid = client.proc.pid
        for i in range(runs + 2):  # two warm-up runs (imports, connection pool)
            server.enqueue(reply())
            n0 = len(client.events)
            c0, w0 = cpu_ms(pid), write_calls(pid)
            t0 = time.perf_counter()
            await client.prompt(f"run {i}")
            end = await client.wait_for_event("agent_end", after=n0)
            elapsed = (time.perf_counter() - t0) * 1000
            await client.wait_for_idle(after=n0)
            used, wrote = cpu_ms(pid) - c0, write_calls(pid) - w0
            await client.call("new_session")
            deltas = sum(
                1 for e in client.events[n0:]
                if e["type"] == "message_update" and e["assistantMessageEvent"]["type"] == "text_delta"
            )  # fmt: skip
            assert deltas == DELTAS, deltas
            assert end["messages"][-1]["stopReason"] == "stop"
            if i >= 2:
                out.append(elapsed)
                cpu.append(used)
                writes.append(wrote)
    return out, cpu, writes


async def first_delta_run(server: Any, runs: int) -> tuple[list[float], list[float], list[int]]:
    """(prompt → first text_delta wall times, host CPU from the prompt to that delta, host write
    calls until then) against a server that pauses after the first delta's chunk (see the module
    docstring)."""
    wall, cpu, writes = [], [], []
    async with local_model_host(server) as host:
        client = host.client
        assert client.proc is not None
        pid = client.proc.pid
        for i in range(runs + 2):  # two warm-up runs
            await asyncio.sleep(SETTLE_S)
            n0 = len(client.events)
            c0, w0 = cpu_ms(pid), write_calls(pid)
            t0 = time.perf_counter()
            await client.prompt(f"run {i}")
            await client.wait_for_event(
                lambda e: e["type"] == "message_update" and e["assistantMessageEvent"]["type"] == "text_delta",
                after=n0,
            )
            elapsed = (time.perf_counter() - t0) * 1000
            await asyncio.sleep(SETTLE_S)
            used, wrote = cpu_ms(pid) - c0, write_calls(pid) - w0
            await client.wait_for_event("agent_end", after=n0)
            await client.wait_for_idle(after=n0)
            await client.call("new_session")
            if i >= 2:
                wall.append(elapsed)
                cpu.append(used)
                writes.append(wrote)
    return wall, cpu, writes


async def faux_run_ms(runs: int) -> tuple[list[float], int]:
    """The same run through the RPC host with the in-process faux provider: no HTTP at all, so
    this is the host's own cost (prompt pipeline, loop, events, stdout) plus the client's parsing."""
    text = " ".join(f"tok{i}" for i in range(640))  # faux streams 3-5 tokens per delta: ~200 deltas
    out, deltas = [], 0
    async with start_host("--no-session", env=BENCH_SECRETS if WITH_SECRETS else None) as host:
        client = host.client
        for i in range(runs + 2):
            host.faux.push(text)
            n0 = len(client.events)
            t0 = time.perf_counter()
            await client.prompt(f"run {i}")
            await client.wait_for_event("agent_end", after=n0)
            elapsed = (time.perf_counter() - t0) * 1000
            await client.wait_for_idle(after=n0)
            deltas = sum(
                1 for e in client.events[n0:]
                if e["type"] == "message_update" and e["assistantMessageEvent"]["type"] == "text_delta"
            )  # fmt: skip
            if i >= 2:
                out.append(elapsed)
    return out, deltas


class ServerProcess:
    """The SSE server in a process of its own, so the timed client never competes with it for the
    GIL; every reply is queued up front (``enqueue`` is then a no-op)."""

    def __init__(self, replies: int, stall_s: float = 0.0) -> None:
        import subprocess

        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(replies), str(stall_s)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().decode().strip()

    def enqueue(self, _reply: Any) -> None:
        pass

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def serve(replies: int, stall_s: float) -> None:
    with sse.SSEServer() as server:
        for _ in range(replies):
            server.enqueue(reply(stall_s))
        print(server.base_url, flush=True)
        sys.stdin.read()  # until the bench closes our stdin


async def main() -> None:
    args = [a for a in sys.argv[1:] if a not in ("--with-secrets", "--first-delta")]
    runs = int(args[0]) if args else 20
    if FIRST_ONLY:
        await print_first_delta(runs)
        return
    server = ServerProcess(2 * runs + 2)
    try:
        raw = await raw_stream_ms(server, runs)
        full, cpu, writes = await host_run_ms(server, runs)
    finally:
        server.close()
    raw_med, full_med = statistics.median(raw), statistics.median(full)
    print(f"{'metric (n=' + str(runs) + ')':<44}{'median ms':>10}{'min ms':>10}")
    print(f"{'server stream alone (bare httpx)':<44}{raw_med:>10.2f}{min(raw):>10.2f}")
    print(f"{'prompt -> agent_end via host (200 deltas)':<44}{full_med:>10.2f}{min(full):>10.2f}")
    print(f"{'host overhead per run':<44}{full_med - raw_med:>10.2f}{min(full) - min(raw):>10.2f}")
    print(f"{'host CPU per run (all threads)':<44}{statistics.median(cpu):>10.2f}{min(cpu):>10.2f}")
    print(f"{'host write calls per run (count)':<44}{statistics.median(writes):>10.0f}{min(writes):>10.0f}")
    faux, deltas = await faux_run_ms(runs)
    label = f"same via faux, no HTTP ({deltas} deltas)"
    print(f"{label:<44}{statistics.median(faux):>10.2f}{min(faux):>10.2f}")
    await print_first_delta(runs)


async def print_first_delta(runs: int) -> None:
    server = ServerProcess(runs + 2, STALL_S)
    try:
        wall, cpu, writes = await first_delta_run(server, runs)
    finally:
        server.close()
    print(f"{'prompt -> first text_delta (wall)':<44}{statistics.median(wall):>10.2f}{min(wall):>10.2f}")
    print(f"{'host CPU prompt -> first text_delta':<44}{statistics.median(cpu):>10.2f}{min(cpu):>10.2f}")
    print(f"{'host write calls to first text_delta':<44}{statistics.median(writes):>10.0f}{min(writes):>10.0f}")
    if FIRST_ONLY:
        print("cpu samples:", " ".join(f"{c:.2f}" for c in sorted(cpu)))


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "--serve":
        serve(int(sys.argv[2]), float(sys.argv[3]))
    else:
        asyncio.run(main())
