"""A compaction backup is written whole or not at all (issue 24): on a full disk no truncated
``.compact.bak`` (before: the first 4 KB of it) and no temp file stays beside the session."""

from __future__ import annotations

import os
import resource
from pathlib import Path

from shared_helpers import chat, host, stored

LONG_PROMPT = "\n".join(f"requirement {i}: keep the widget number {i} working" for i in range(1, 301))


async def test_a_compaction_on_a_full_disk_leaves_no_partial_backup(tmp_path: Path) -> None:
    # the faux provider's request log (which the limit would fail first) goes nowhere
    async with host(tmp_path, "a", env={"ATOMIC_FAUX_LOG": os.devnull}) as a:
        c = a.client
        await chat(a, LONG_PROMPT, "now the second thing")
        owner = await c.call("get_state")
        path = Path(owner["sessionLocation"])
        before = stored(str(path))
        assert path.stat().st_size > 3 * 4096
        resource.prlimit(c.proc.pid, resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
        try:
            a.faux.push("1,5\n9,12")
            response = await c.request({"type": "compact"})
        finally:
            resource.prlimit(c.proc.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        assert response["success"] is False and "File too large" in response["error"]
        assert sorted(os.listdir(path.parent)) == [path.name]  # no backup, whole or in part, no temp file
        assert stored(str(path)) == before
        a.faux.push("1,5\n9,12")
        result = await c.call("compact")  # with room again: a whole backup
        backup = Path(result["backupPath"])
        assert backup.read_bytes() == b"".join(path.read_bytes().splitlines(keepends=True)[:-1])
        assert backup.stat().st_mode & 0o777 == 0o600  # the whole session: as private as its file
        assert sorted(os.listdir(path.parent)) == sorted([path.name, backup.name])
