"""A fresh host's first prompt: spawn ``atomic --mode rpc`` on a local OpenAI-chat model, answer
one ``get_state``, wait for the warm-up thread, then time prompt → first ``text_delta``.

    python bench/first_prompt.py [--hosts 9] [--python PYTHON ...]

Each ``--python`` is an interpreter whose ``-m atomic_host`` is started (default: this one), e.g.
the venv of a main checkout against the venv of a branch; the hosts take turns. Prints the median
and every sample per interpreter. A steady-state prompt costs a few ms (bench/agent_run.py); the
first one of a process also builds what a run needs once (the HTTP client and its TLS context, the
tools' schemas, the provider's stream module), which is what this measures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import agent_run  # (the scripted SSE server process and its 200-delta reply)

from atomic_host.client import RpcClient
from atomic_host.testing import FauxScript, host_env

WARM_UP_S = 0.6
"""Pause after the first get_state: the warm-up thread has finished its imports by then."""


def _first_delta(event: dict) -> bool:
    return event["type"] == "message_update" and event["assistantMessageEvent"]["type"] == "text_delta"


async def first_prompt_ms(python: str, base_url: str) -> float:
    """Prompt → first text_delta of a host started just before (after one get_state)."""
    with tempfile.TemporaryDirectory(prefix="atomic-first-prompt-") as tmp:
        root = Path(tmp)
        (root / "agent").mkdir()
        (root / "work").mkdir()
        providers = {"local": {"baseUrl": base_url, "api": "openai-completions", "apiKey": "dummy",
                               "models": [{"id": "m1"}]}}  # fmt: skip
        (root / "agent" / "models.json").write_text(json.dumps({"providers": providers}))
        env = host_env(root / "agent", FauxScript(root / "faux.jsonl").path, root / "faux-log.jsonl", None)
        client = RpcClient(
            ["--model", "local/m1", "--no-session"],
            command=[python, "-m", "atomic_host", "--mode", "rpc"],
            cwd=str(root / "work"),
            env=env,
        )
        await client.start()
        try:
            await client.call("get_state")
            await asyncio.sleep(WARM_UP_S)
            n0 = len(client.events)
            start = time.perf_counter()
            await client.prompt("hello")
            await client.wait_for_event(_first_delta, after=n0)
            elapsed = (time.perf_counter() - start) * 1000
            await client.wait_for_event("agent_end", after=n0)
        finally:
            await client.close()
        return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=9, help="fresh hosts per interpreter (default 9)")
    parser.add_argument("--python", action="append", help="interpreter to start the host with (repeatable)")
    ns = parser.parse_args()
    pythons = ns.python or [sys.executable]
    server = agent_run.ServerProcess(ns.hosts * len(pythons))
    samples: dict[str, list[float]] = {p: [] for p in pythons}
    try:
        for _ in range(ns.hosts):
            for python in pythons:
                samples[python].append(await first_prompt_ms(python, server.base_url))
    finally:
        server.close()
    for python, times in samples.items():
        shown = ", ".join(f"{t:.1f}" for t in times)
        print(f"{python}: first prompt -> first text_delta, median {statistics.median(times):.1f} ms ({shown})")


if __name__ == "__main__":
    asyncio.run(main())
