from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from atomic_host.kit.shell import run_shell


def dead(pid: int) -> bool:
    """Gone, or a zombie nobody reaped yet (containers may have no init reaping orphans)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def group_gone(pgid: int) -> bool:
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return True
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return False
    return True


async def test_output_exit_code_and_sanitising(work: Path) -> None:
    chunks: list[tuple[str, str]] = []
    r = await run_shell(
        "printf 'a\\033[31mred\\033[0m\\r\\n'; echo err >&2; printf '\\xff\\n'; exit 3",
        str(work),
        session_id="s",
        on_chunk=lambda ch, t: chunks.append((ch, t)),
    )
    assert r.exit_code == 3 and not r.cancelled and not r.timed_out and not r.truncated
    assert "ared\n" in r.output and "err\n" in r.output and "\ufffd\n" in r.output
    assert "\x1b" not in r.output and "\r" not in r.output
    assert {ch for ch, _ in chunks} == {"stdout", "stderr"}
    assert r.full_output_path is None
    assert r.to_wire()["exitCode"] == 3


async def test_utf8_never_split_across_reads(work: Path) -> None:
    # 200k two-byte characters arrive in many pipe reads; none may be mangled.
    code = "import sys; sys.stdout.write('é' * 200000)"
    r = await run_shell(f'{sys.executable} -c "{code}"', str(work), session_id="s")
    assert "\ufffd" not in r.output and set(r.output) == {"é"}


async def test_escape_split_across_reads(work: Path) -> None:
    code = (
        "import sys,time; sys.stdout.write('x\\x1b[3'); sys.stdout.flush(); time.sleep(0.2); sys.stdout.write('1my\\n')"
    )
    r = await run_shell(f'{sys.executable} -c "{code}"', str(work), session_id="s")
    assert r.output == "xy\n"


async def test_tail_truncation_and_full_output_file(work: Path) -> None:
    r = await run_shell("seq 1 10000", str(work), session_id="sess")
    assert r.truncated and r.truncation is not None
    assert r.truncation.first_line == 7001 and r.truncation.last_line == 10000
    assert r.output.startswith("7001\n") and r.output.rstrip().endswith("10000")
    assert r.full_output_path and Path(r.full_output_path).name.startswith("atomic-bash-")
    full = Path(r.full_output_path)
    assert stat.S_IMODE(full.stat().st_mode) == 0o600
    assert full.read_text() == "".join(f"{i}\n" for i in range(1, 10001))
    assert full.parent.name == "sess"


async def test_file_written_once_over_50k_even_if_not_truncated_by_lines(work: Path) -> None:
    r = await run_shell("head -c 60000 /dev/zero | tr '\\0' x", str(work), session_id="s")
    assert r.truncated and r.full_output_path and Path(r.full_output_path).stat().st_size == 60000


async def test_no_file_when_temp_dir_refused(work: Path) -> None:
    r = await run_shell("seq 1 10000", str(work), session_id="s", temp_dir=lambda: None)
    assert r.truncated and r.full_output_path is None


async def test_timeout_kills_process_group(work: Path) -> None:
    pids: list[int] = []

    def grab(_ch: str, t: str) -> None:
        pids.extend(int(x) for x in t.split())

    start = time.monotonic()
    r = await run_shell(
        "sleep 1000 & echo $!; sleep 1000 & echo $!; echo $$; wait",
        str(work),
        session_id="s",
        timeout=0.5,
        on_chunk=grab,
        kill_grace=0.5,
    )
    assert r.timed_out and r.exit_code is None and not r.cancelled
    assert time.monotonic() - start < 3
    assert len(pids) == 3
    await asyncio.sleep(0.05)
    assert all(dead(p) for p in pids)
    assert group_gone(pids[2])


async def test_abort_kills_process_group_even_if_term_ignored(work: Path) -> None:
    sig = asyncio.Event()
    pids: list[int] = []

    def grab(_ch: str, t: str) -> None:
        pids.extend(int(x) for x in t.split())
        if len(pids) == 2:
            sig.set()

    r = await run_shell(
        "trap '' TERM; sleep 1000 & echo $!; echo $$; wait",
        str(work),
        session_id="s",
        signal=sig,
        on_chunk=grab,
        kill_grace=0.3,
    )
    assert r.cancelled and r.exit_code is None
    assert "exitCode" not in r.to_wire() and r.to_wire()["cancelled"] is True
    assert all(dead(p) for p in pids)
    assert group_gone(pids[1])


async def test_background_child_does_not_hang_normal_exit(work: Path) -> None:
    start = time.monotonic()
    r = await run_shell("sleep 5 & echo started", str(work), session_id="s")
    assert r.exit_code == 0 and r.output == "started\n"
    assert time.monotonic() - start < 2


async def test_twenty_megabytes_fast_and_flat(work: Path) -> None:
    # Measured in a fresh interpreter so the peak RSS belongs to this run alone. VmHWM, not
    # ru_maxrss: Linux carries the forking parent's peak (pytest's) into ru_maxrss across exec.
    script = (
        "import asyncio, re, time, json\n"
        "from atomic_host.kit.shell import run_shell\n"
        "async def main():\n"
        "    n = [0]\n"
        "    t = time.perf_counter()\n"
        "    r = await run_shell(\"head -c 20000000 /dev/zero | tr '\\\\0' a | fold -w 100\", '.', "
        "session_id='big', on_chunk=lambda c, s: n.__setitem__(0, n[0] + len(s)))\n"
        "    dt = time.perf_counter() - t\n"
        "    hwm = int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
        "    print(json.dumps({'dt': dt, 'rss_kb': hwm,\n"
        "        'streamed': n[0], 'out': len(r.output), 'path': r.full_output_path,\n"
        "        'total': r.truncation.total_lines}))\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=work, capture_output=True, text=True, check=True)
    import json

    info = json.loads(out.stdout)
    assert info["streamed"] == 20_199_999  # fold adds no final newline
    assert info["dt"] < 1.0, info
    assert info["rss_kb"] < 80_000, info  # a 20 MB output held in memory would be far above this
    assert info["total"] == 200_000 and info["out"] <= 50 * 1024
    assert Path(info["path"]).stat().st_size == 20_199_999


async def test_missing_cwd_raises(work: Path) -> None:
    with pytest.raises(OSError):
        await run_shell("true", str(work / "nope"), session_id="s")
