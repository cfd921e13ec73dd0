from __future__ import annotations

import asyncio
import itertools
import os
import time
from pathlib import Path

from tools_helpers import call, call_err, make_ctx, text_of

from atomic_host.contract.tools import ToolContext, ToolResult


def dead(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


async def test_bash_ok_and_empty(ctx: ToolContext, work: Path) -> None:
    r = await call("bash", ctx, command="echo hi; pwd")
    assert not r.is_error and text_of(r) == f"hi\n{work}\n"
    assert r.details and r.details["exitCode"] == 0 and r.details["timeoutSeconds"] == 300
    assert text_of(await call("bash", ctx, command="true")) == "(no output)"


async def test_bash_exit_code_is_error(ctx: ToolContext) -> None:
    r = await call("bash", ctx, command="echo oops >&2; exit 7")
    assert r.is_error and text_of(r) == "oops\n\nCommand exited with code 7"
    assert r.details and r.details["exitCode"] == 7


async def test_bash_cwd_env_and_prefix(work: Path) -> None:
    (work / "sub").mkdir()
    ctx = make_ctx(work, settings={"shellCommandPrefix": "export PREFIXED=yes"})
    r = await call("bash", ctx, command="echo $PREFIXED $FOO; basename $PWD", cwd="sub", env={"FOO": "bar"})
    assert text_of(r) == "yes bar\nsub\n"
    assert "does not exist" in await call_err("bash", ctx, command="true", cwd="missing")


async def test_bash_timeout_validation(ctx: ToolContext) -> None:
    for bad in (0, -1, 3601):
        assert "timeout must be" in await call_err("bash", ctx, command="true", timeout=bad)
    r = await call("bash", ctx, command="true", timeout=0.2)
    assert r.details and r.details["timeoutSeconds"] == 1


async def test_bash_timeout_message(ctx: ToolContext) -> None:
    start = time.monotonic()
    r = await call("bash", ctx, command="echo start; sleep 30", timeout=1)
    assert r.is_error and text_of(r) == "start\n\nCommand timed out after 1 seconds"
    assert time.monotonic() - start < 4
    assert r.details and "exitCode" not in r.details


async def test_bash_streams_throttled_updates(work: Path) -> None:
    updates: list[ToolResult] = []
    stamps: list[float] = []

    def on_update(r: ToolResult) -> None:
        updates.append(r)
        stamps.append(time.monotonic())

    ctx = make_ctx(work, on_update=on_update)
    cmd = "for i in $(seq 1 20); do echo line$i; sleep 0.02; done"
    r = await call("bash", ctx, command=cmd)
    assert text_of(r).endswith("line20\n")
    assert 2 <= len(updates) < 20  # coalesced, not one per line
    texts = [text_of(u) for u in updates]
    assert all(texts[i + 1].startswith(texts[i]) for i in range(len(texts) - 1))  # accumulated
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    assert min(gaps) >= 0.04


async def test_bash_truncation_note_and_full_output(ctx: ToolContext) -> None:
    r = await call("bash", ctx, command="seq 1 5000")
    text = text_of(r)
    assert text.startswith("2001\n")
    assert r.details and r.details["fullOutputPath"]
    path = r.details["fullOutputPath"]
    assert text.endswith(f"[Showing lines 2001-5000 of 5000. Full output: {path}]")
    assert Path(path).read_text().count("\n") == 5000
    assert Path(path).parent.name == "sess-1"


async def test_bash_abort_kills_group(work: Path) -> None:
    ctx = make_ctx(work)
    pids: list[int] = []

    def on_update(r: ToolResult) -> None:
        pids[:] = [int(x) for x in text_of(r).split()]
        if len(pids) >= 2:
            ctx.signal.set()

    ctx.on_update = on_update
    r = await call("bash", ctx, command="sleep 1000 & echo $!; sleep 1000 & echo $!; wait")
    assert r.is_error and text_of(r).endswith("Command aborted")
    await asyncio.sleep(0.05)
    assert len(pids) == 2 and all(dead(p) for p in pids)


async def test_background_and_kill(ctx: ToolContext) -> None:
    r = await call("bash", ctx, command="echo ready; sleep 1000 & wait", background=True)
    assert r.details and r.details["id"] == "bg-1"
    log = Path(r.details["logPath"])
    pid = r.details["pid"]
    for _ in range(100):
        if log.exists() and "ready" in log.read_text():
            break
        await asyncio.sleep(0.02)
    assert log.read_text() == "ready\n" and oct(log.stat().st_mode & 0o777) == "0o600"
    r2 = await call("bash", ctx, command="exit 0", background=True)
    assert r2.details and r2.details["id"] == "bg-2"
    listing = text_of(await call("kill", ctx))
    assert "bg-1" in listing and "running" in listing and "bg-2" in listing
    # Find the sleep grandchild so we can prove the whole group goes.
    children = [
        int(p)
        for p in os.listdir("/proc")
        if p.isdigit() and Path(f"/proc/{p}/stat").exists() and _pgid(int(p)) == pid and int(p) != pid
    ]
    r = await call("kill", ctx, id="bg-1")
    assert text_of(r).startswith("Stopped bg-1")
    await asyncio.sleep(0.05)
    assert dead(pid) and children and all(dead(c) for c in children)
    assert "bg-1" not in text_of(await call("kill", ctx))
    assert "No background process 'bg-9'" in await call_err("kill", ctx, id="bg-9")
    assert "had already exited" in text_of(await call("kill", ctx, id="bg-2"))
    assert text_of(await call("kill", ctx)) == "No background processes."


def _pgid(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[2])
    except (OSError, IndexError, ValueError):
        return -1
