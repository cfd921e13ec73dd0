"""A full disk fails the run loudly in every store (issue 24): the prompt ends with an error
assistant message ``Could not save the session: …`` (docs/host.md), nothing half-written stays,
and once there is room again the session goes on where the store left it.

Two ways to fill the disk: a small tmpfs filled to the last byte (when this process may mount
one: root), and the file-size limit of the host process (``RLIMIT_FSIZE``), which fails writes
the same way (EFBIG instead of ENOSPC) wherever the tests run.
"""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from shared_helpers import FILE_STORES, chat, host, last_reply, stored, user_texts

from atomic_host.testing import Host


@contextlib.contextmanager
def _tmpfs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(directory: Path) -> Path:
    """Fill the file system of ``directory`` to the last byte; the filler file (delete it to free)."""
    filler = directory / "filler"
    with filler.open("wb", buffering=0) as f:
        for size in (1 << 16, 1 << 12, 1 << 8, 1):
            with contextlib.suppress(OSError):
                while True:
                    f.write(b"\0" * size)
    return filler


@contextlib.contextmanager
def _full_disk(how: str, h: Host, agent_dir: Path, location: str) -> Iterator[None]:
    """The host's writes fail until the block ends."""
    if how == "tmpfs":
        filler = _fill(agent_dir)
        try:
            yield
        finally:
            filler.unlink()
        return
    files = [p for p in Path(location.removeprefix("sqlite:").rpartition("#")[0] or location).parent.iterdir()]
    limit = max(p.stat().st_size for p in files)  # no file may grow: the next write fails with EFBIG
    resource.prlimit(h.client.proc.pid, resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    try:
        yield
    finally:
        resource.prlimit(h.client.proc.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


@pytest.mark.parametrize("how", ["file-size limit", "tmpfs"])
@pytest.mark.parametrize("store", FILE_STORES)
async def test_a_full_disk_fails_the_prompt_loudly_and_the_session_goes_on_after(
    tmp_path: Path, store: tuple[str, ...], how: str
) -> None:
    agent_dir = tmp_path / "agent"
    with contextlib.ExitStack() as stack:
        if how == "tmpfs":
            agent_dir = stack.enter_context(_tmpfs(tmp_path / "disk", "4m")) / "agent"
        async with host(tmp_path, "a", *store, agent_dir=agent_dir) as a:
            await chat(a, "before the disk filled")
            owner = await a.client.call("get_state")
            before = stored(owner["sessionLocation"])
            big = "x" * 300_000  # more than the WAL or the file has room for
            with _full_disk(how, a, agent_dir, owner["sessionLocation"]):
                a.faux.push("lost reply")
                events = await a.client.prompt_and_wait(f"while full {big}")
                reply = last_reply(events)
                assert reply["stopReason"] == "error"
                assert reply["errorMessage"].startswith("Could not save the session: "), reply["errorMessage"]
                agent_end = next(e for e in events if e["type"] == "agent_end")
                assert agent_end["messages"] == [reply]
                name = await a.client.request({"type": "set_session_name", "name": "no room " + big})
                assert name["success"] is False and name["error"]
                assert "while full" not in str(await a.client.get_messages())  # memory agrees with the store
            assert stored(owner["sessionLocation"]) == before  # nothing half-written
            assert not [p.name for p in agent_dir.rglob("*") if p.name.endswith(".tmp")]
            await chat(a, "after space came back")
            entries = stored(owner["sessionLocation"])
            assert user_texts(entries) == ["before the disk filled", "after space came back"]
            ids = {e["id"] for e in entries}
            assert all(e.get("parentId") in ids or e.get("parentId") is None for e in entries)  # one tree
            assert a.client.proc.returncode is None
        if how == "tmpfs":
            os.sync()
