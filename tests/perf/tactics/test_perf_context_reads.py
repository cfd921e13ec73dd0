"""How often and where the context files (AGENTS.md, CLAUDE.md) are read: the stat cache and the
off-loop read of a big file (``engine/system_prompt.py``). They count ``_read`` calls, so they pin
the tactic, not what the model is told (tests/unit/core/test_core_system_prompt.py): see README.md."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from atomic_host.engine import system_prompt


async def test_context_files_are_read_again_only_when_their_stat_changes(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(system_prompt, "RACY_NS", 0)  # trust every stat (the racy rule has its own test)
    reads: list[str] = []
    real = system_prompt._read
    monkeypatch.setattr(system_prompt, "_read", lambda path: reads.append(path) or real(path))
    agent_dir, cwd = tmp_path / "agent", tmp_path / "work"
    agent_dir.mkdir()
    cwd.mkdir()
    path = cwd / "AGENTS.md"
    path.write_text("one")
    os.utime(path, (1_600_000_000, 1_600_000_000))
    assert await system_prompt.load_context_files(agent_dir, str(cwd)) == [(str(path), "one")]
    assert await system_prompt.load_context_files(agent_dir, str(cwd)) == [(str(path), "one")]
    assert reads == [str(path)]
    path.write_text("two")
    assert await system_prompt.load_context_files(agent_dir, str(cwd)) == [(str(path), "two")]
    assert await system_prompt.load_context_files(agent_dir, str(cwd)) == [(str(path), "two")]
    assert reads == [str(path)] * 2
    path.unlink()
    (cwd / "CLAUDE.md").write_text("three")
    assert await system_prompt.load_context_files(agent_dir, str(cwd)) == [(str(cwd / "CLAUDE.md"), "three")]


async def test_a_recently_changed_context_file_is_read_every_time(tmp_path: Path, monkeypatch: Any) -> None:
    """Racy: an edit in the same timestamp tick as the stat keeps the stat equal, so a file
    changed less than RACY_NS ago is never served from memory."""
    reads: list[str] = []
    real = system_prompt._read
    monkeypatch.setattr(system_prompt, "_read", lambda path: reads.append(path) or real(path))
    (tmp_path / "w").mkdir()
    path = tmp_path / "w" / "AGENTS.md"
    path.write_text("one")
    for _ in range(3):
        assert await system_prompt.load_context_files(tmp_path / "agent", str(tmp_path / "w")) == [(str(path), "one")]
    assert reads == [str(path)] * 3


async def test_a_big_changed_context_file_is_read_off_the_event_loop(tmp_path: Path, monkeypatch: Any) -> None:
    threads: list[int] = []
    real = system_prompt._read
    monkeypatch.setattr(system_prompt, "_read", lambda path: threads.append(threading.get_ident()) or real(path))
    (tmp_path / ".git").mkdir()  # the project root: the search goes up to it
    (tmp_path / "CLAUDE.md").write_text("small")
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "AGENTS.md").write_text("y" * (system_prompt.INLINE_READ_BYTES + 1))
    found = await system_prompt.load_context_files(tmp_path / "agent", str(tmp_path / "w"))
    assert [Path(p).name for p, _ in found] == ["CLAUDE.md", "AGENTS.md"]
    loop_thread = threading.get_ident()
    assert threads[0] == loop_thread and threads[1] != loop_thread  # the small one inline, the big one not
