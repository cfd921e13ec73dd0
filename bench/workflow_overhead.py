"""Bench: what workflows cost (issue 11), through the real ``atomic --mode rpc`` and the faux provider.

    python bench/workflow_overhead.py [stages] [runs]

Prints medians of:
- startup: spawn → first ``get_state`` answer, with the workflows plugin and with it disabled
  (``disabledPlugins``), a workflow file present (dbos must not be imported at startup);
- time to start a run: ``/workflow`` sent → the first stage's model request, cold (dbos imported
  and launched on first use) and warm (a second run in the same host);
- per-stage overhead: a ``stages``-stage workflow against ``stages`` bare prompts in the same host,
  (workflow − bare) / stages. Target: under 50 ms a stage on SQLite.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from atomic_host.testing import read_jsonl, start_host  # noqa: E402

QUIET = {"sessionSummary": {"enabled": False}, "retry": {"enabled": False}}


def definition(stages: int) -> str:
    parts = []
    for i in range(stages):
        prev = f" after {{stages.s{i - 1}.output}}" if i else ""
        parts.append(f'[[stages]]\nname = "s{i}"\nprompt = "Stage {i} of {{input}}{prev}"\n')
    return "\n".join(parts)


def calls(log: Path) -> int:
    return len(read_jsonl(log)) if log.exists() else 0


async def wait_calls(log: Path, n: int, timeout: float = 60) -> float:
    deadline = time.perf_counter() + timeout
    while calls(log) < n:
        if time.perf_counter() > deadline:
            raise TimeoutError(f"{n} model calls not seen")
        await asyncio.sleep(0.002)
    return time.perf_counter()


async def run_end(client: Any, after: int) -> None:
    await client.wait_for_event(
        lambda e: e.get("type") == "workflow_run_update" and e.get("status") in ("completed", "failed"),
        after=after,
        timeout=120,
    )


async def startup(disabled: bool, base: Path) -> float:
    settings = {**QUIET, "disabledPlugins": ["builtin_plugins.workflows"] if disabled else []}
    t0 = time.perf_counter()
    async with start_host(base=base, settings=settings) as host:
        await host.client.call("get_state")
        return time.perf_counter() - t0


async def one_round(stages: int, base: Path) -> dict[str, float]:
    wf_dir = base / "agent" / "workflows"
    wf_dir.mkdir(parents=True, exist_ok=True)
    (wf_dir / "bench.toml").write_text(definition(stages))
    (wf_dir / "one.toml").write_text(definition(1))
    out: dict[str, float] = {}
    async with start_host(base=base, settings=QUIET) as host:
        c = host.client
        for _ in range(2 * stages + 2 + stages):
            host.faux.push("ok")
        for label in ("cold", "warm"):
            before = calls(host.faux_log)
            mark = len(c.events)
            t0 = time.perf_counter()
            await c.call("prompt", message="/workflow one x")
            out[f"start_{label}"] = await wait_calls(host.faux_log, before + 1) - t0
            await run_end(c, mark)
        mark = len(c.events)
        t0 = time.perf_counter()
        await c.call("prompt", message="/workflow bench x")
        await run_end(c, mark)
        workflow = time.perf_counter() - t0
        t0 = time.perf_counter()
        for i in range(stages):
            await c.prompt_and_wait(f"bare {i}")
        bare = time.perf_counter() - t0
        out["per_stage"] = (workflow - bare) / stages
        out["workflow_stage"] = workflow / stages
        out["bare_stage"] = bare / stages
    return out


async def main() -> None:
    stages = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "s" / "agent" / "workflows").mkdir(parents=True)
        (root / "s" / "agent" / "workflows" / "one.toml").write_text(definition(1))
        on = [await startup(False, root / "s") for _ in range(runs + 1)][1:]
        off = [await startup(True, root / "s") for _ in range(runs + 1)][1:]
        rounds = [await one_round(stages, root / f"r{i}") for i in range(runs)]

    def med(key: str) -> float:
        return statistics.median(r[key] for r in rounds) * 1000

    print(f"startup to first answer: workflows on {statistics.median(on) * 1000:.0f} ms, "
          f"off {statistics.median(off) * 1000:.0f} ms (median of {runs})")  # fmt: skip
    print(f"start a run -> first stage request: cold {med('start_cold'):.0f} ms, warm {med('start_warm'):.1f} ms")
    print(f"{stages}-stage workflow: {med('workflow_stage'):.1f} ms a stage; bare prompt {med('bare_stage'):.1f} ms")
    print(f"per-stage overhead over a bare agent run: {med('per_stage'):.1f} ms (target < 50 ms on SQLite)")


if __name__ == "__main__":
    asyncio.run(main())
