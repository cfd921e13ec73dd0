"""The host widens its stdout pipe to 1 MiB (Linux): a 3 MB response then crosses it in 3
write/read rounds instead of ~45 (each a wake-up of both processes)."""

from __future__ import annotations

import fcntl
from pathlib import Path

import pytest

from atomic_host.testing import start_host

F_GETPIPE_SZ = getattr(fcntl, "F_GETPIPE_SZ", 1032)
MAX = Path("/proc/sys/fs/pipe-max-size")


@pytest.mark.skipif(
    not MAX.exists() or int(MAX.read_text()) < 1 << 20,
    reason="F_SETPIPE_SZ to 1 MiB needs Linux and pipe-max-size ≥ 1 MiB",
)
async def test_stdout_pipe_is_one_mebibyte_and_big_responses_arrive_whole() -> None:
    async with start_host() as host:
        c = host.client
        await c.get_state()
        fd = c.proc.stdout._transport.get_extra_info("pipe").fileno()
        assert fcntl.fcntl(fd, F_GETPIPE_SZ) == 1 << 20
        text = "é" * 1_500_000  # 3 MB of UTF-8 in one line, through the widened pipe
        host.faux.push(text)
        result = await c.prompt_and_wait("long")
        assert result.text == text
