"""``import_session`` never loses an entry (issue 24), in one host and across hosts.

A file whose session the store does not hold is copied in; the same session holding what the file
holds is opened; a file that continues the stored session brings its newer entries in (a write:
refused while another host holds the session); anything else — an older copy, a copy that went
another way — becomes a new session with a new id, and the stored one stays as it was. Before, an
older copy replaced the stored session (JSONL and SQLite in one host, JSONL across hosts, where the
writing host then failed with ``[Errno 17] File exists`` and the importing one wrote into its session).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from shared_helpers import (
    STORES,
    chat,
    host,
    last_reply,
    more_turns,
    snapshot,
    stderr_of,
    stored,
    stored_header,
    user_texts,
)

from atomic_host.testing import host_env

TURNS = [f"turn {i}" for i in range(1, 8)]


def _texts(messages: list[dict[str, object]]) -> list[str]:
    out = []
    for m in messages:
        if m["role"] == "user":
            content = m["content"]
            out.append(content if isinstance(content, str) else content[0]["text"])  # type: ignore[index]
    return out


async def _sessions(h: object) -> list[str]:
    return sorted(s["id"] for s in (await h.client.call("list_sessions"))["sessions"])  # type: ignore[attr-defined]


@pytest.mark.parametrize("store", STORES)
async def test_importing_an_older_copy_makes_a_new_session_and_keeps_the_newer_entries(
    tmp_path: Path, store: tuple[str, ...]
) -> None:
    async with host(tmp_path, "a", *store) as a:
        await chat(a, *TURNS[:2])
        original = await a.client.call("get_state")
        older = snapshot(original["sessionLocation"], tmp_path / "backup")
        await chat(a, *TURNS[2:4])
        assert await a.client.call("import_session", inputPath=str(older)) == {"cancelled": False}
        copy = await a.client.call("get_state")
        assert copy["sessionId"] != original["sessionId"]
        assert _texts(await a.client.get_messages()) == TURNS[:2]  # what the file holds
        assert user_texts(stored(copy["sessionLocation"])) == TURNS[:2]
        assert stored_header(copy["sessionLocation"])["parentSession"] == original["sessionLocation"]
        assert user_texts(stored(original["sessionLocation"])) == TURNS[:4]  # nothing lost
        assert await _sessions(a) == sorted([original["sessionId"], copy["sessionId"]])
        await chat(a, "on the copy")
        assert user_texts(stored(copy["sessionLocation"])) == [*TURNS[:2], "on the copy"]
        assert user_texts(stored(original["sessionLocation"])) == TURNS[:4]
        # back to the original: all four turns, writable
        assert await a.client.call("switch_session", sessionId=original["sessionId"]) == {"cancelled": False}
        assert _texts(await a.client.get_messages()) == TURNS[:4]
        await chat(a, TURNS[4])
        assert user_texts(stored(original["sessionLocation"])) == TURNS[:5]
    log = stderr_of(tmp_path, "a")
    assert f"holds session {original['sessionId']}, which this store holds with other entries (" in log
    assert "entries the file does not have" in log
    assert f"imported as a new session {copy['sessionId']}" in log


@pytest.mark.parametrize("store", STORES)
async def test_importing_the_same_copy_opens_it_and_a_newer_copy_brings_its_new_entries(
    tmp_path: Path, store: tuple[str, ...]
) -> None:
    async with host(tmp_path, "x", *store, agent_dir=tmp_path / "elsewhere", elsewhere=True) as x:  # another machine
        await chat(x, *TURNS[:2])
        theirs = await x.client.call("get_state")
        two = snapshot(theirs["sessionLocation"], tmp_path / "two", elsewhere=True)
        await chat(x, *TURNS[2:4])
        four = snapshot(theirs["sessionLocation"], tmp_path / "four", elsewhere=True)
    async with host(tmp_path, "a", *store) as a:
        for _ in range(2):  # the second import of the same file changes nothing
            assert await a.client.call("import_session", inputPath=str(two)) == {"cancelled": False}
            mine = await a.client.call("get_state")
            assert mine["sessionId"] == theirs["sessionId"]
            assert user_texts(stored(mine["sessionLocation"])) == TURNS[:2]
            assert await _sessions(a) == [theirs["sessionId"]]
        assert await a.client.call("import_session", inputPath=str(four)) == {"cancelled": False}
        assert (await a.client.call("get_state"))["sessionId"] == theirs["sessionId"]
        assert stored(mine["sessionLocation"]) == json_records(four)
        assert _texts(await a.client.get_messages()) == TURNS[:4]
        assert await _sessions(a) == [theirs["sessionId"]]
        await chat(a, TURNS[4])
        assert user_texts(stored(mine["sessionLocation"])) == TURNS[:5]
        # the older file again, now: a new session, the stored one keeps its five turns
        assert await a.client.call("import_session", inputPath=str(two)) == {"cancelled": False}
        assert (await a.client.call("get_state"))["sessionId"] != theirs["sessionId"]
        assert user_texts(stored(mine["sessionLocation"])) == TURNS[:5]


def json_records(path: Path) -> list[dict[str, object]]:
    """The entries of a JSONL file (after its header)."""
    return [json.loads(line) for line in path.read_text().splitlines()][1:]


async def test_a_file_name_another_session_holds_is_not_replaced(tmp_path: Path) -> None:
    async with host(tmp_path, "a") as a:
        await chat(a, TURNS[0])
        mine = await a.client.call("get_state")
        path = Path(mine["sessionLocation"])
        before = path.read_bytes()
        other = json.loads(before.split(b"\n", 1)[0]) | {"id": "another-session"}
        entries = more_turns({"id": None}, 2)
        stranger = tmp_path / "stranger" / path.name  # the same file name, another session
        stranger.parent.mkdir()
        stranger.write_text("".join(json.dumps(r) + "\n" for r in [other, *entries]))
        assert await a.client.call("import_session", inputPath=str(stranger)) == {"cancelled": False}
        imported = await a.client.call("get_state")
        assert imported["sessionId"] == "another-session"
        assert Path(imported["sessionLocation"]) != path and Path(imported["sessionLocation"]).parent == path.parent
        assert path.read_bytes() == before
        assert Path(imported["sessionLocation"]).read_bytes() == stranger.read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("store", STORES)
async def test_an_import_never_writes_a_session_another_host_is_writing(
    tmp_path: Path, store: tuple[str, ...]
) -> None:
    async with host(tmp_path, "a", *store) as a:
        await chat(a, *TURNS[:3])
        owner = await a.client.call("get_state")
        older = snapshot(owner["sessionLocation"], tmp_path / "older")
        await chat(a, *TURNS[3:5])  # acknowledged, fsynced
        async with host(tmp_path, "b", *store) as b:
            # an older copy: a new session of B's own, A's untouched
            assert await b.client.call("import_session", inputPath=str(older)) == {"cancelled": False}
            copy = await b.client.call("get_state")
            assert copy["sessionId"] != owner["sessionId"]
            await chat(b, "from b")
            assert user_texts(stored(copy["sessionLocation"])) == [*TURNS[:3], "from b"]
            assert last_reply(await chat(a, TURNS[5]))["stopReason"] == "stop"
            assert user_texts(stored(owner["sessionLocation"])) == TURNS[:6]
            # the same copy: B opens A's session and may read it, not write it
            same = snapshot(owner["sessionLocation"], tmp_path / "same")
            assert await b.client.call("import_session", inputPath=str(same)) == {"cancelled": False}
            assert (await b.client.call("get_state"))["sessionId"] == owner["sessionId"]
            reply = last_reply(await chat(b, "b writes into a's session"))
            assert reply["stopReason"] == "error"
            assert "open for writing in another atomic process" in reply["errorMessage"]
            # a newer copy would be a write into A's session: refused
            later = more_turns(stored(owner["sessionLocation"])[-1], 2)
            newer = snapshot(owner["sessionLocation"], tmp_path / "newer", later)
            response = await b.client.request({"type": "import_session", "inputPath": str(newer)})
            assert response["success"] is False
            assert response["error"].startswith("Session is open for writing in another atomic process: ")
            assert last_reply(await chat(a, TURNS[6]))["stopReason"] == "stop"
        assert user_texts(stored(owner["sessionLocation"])) == TURNS[:7]  # everything A acknowledged


@pytest.mark.slow
@pytest.mark.parametrize("store", STORES)
async def test_imports_racing_a_writing_host_and_kill_9_lose_nothing_acknowledged(
    tmp_path: Path, store: tuple[str, ...]
) -> None:
    """Host B imports an older copy again and again while host A writes turn after turn; A is
    killed (SIGKILL) at a random moment. Every turn A acknowledged is in its session; each of B's
    imports is a session holding exactly the copy. Then host C brings a newer copy (400 more entries)
    into A's session and is killed at a random moment of it: what the store holds is then a prefix
    of that file, never less than A's acknowledged turns, and importing it again completes it."""
    rng = random.Random()
    async with host(tmp_path, "a", *store, killed=True) as a:
        await chat(a, "turn 0")
        owner = await a.client.call("get_state")
        older = snapshot(owner["sessionLocation"], tmp_path / "older")
        acknowledged = ["turn 0"]
        async with host(tmp_path, "b", *store) as b:

            async def imports() -> list[str]:
                made = []
                for _ in range(6):
                    assert await b.client.call("import_session", inputPath=str(older)) == {"cancelled": False}
                    made.append((await b.client.call("get_state"))["sessionLocation"])
                return made

            racing = asyncio.ensure_future(imports())
            pid = a.client.proc.pid
            killer = asyncio.get_running_loop().call_later(rng.uniform(0.2, 1.5), os.kill, pid, signal.SIGKILL)
            try:
                for turn in range(1, 1000):  # until the kill
                    a.faux.push(f"re: turn {turn}")
                    events = await a.client.prompt_and_wait(f"turn {turn}", timeout=10)
                    if last_reply(events)["stopReason"] != "stop":
                        break
                    acknowledged.append(f"turn {turn}")
            except Exception:  # the host died under the prompt: that turn was not acknowledged
                pass
            killer.cancel()
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            await a.client.proc.wait()
            made = await racing
        texts = user_texts(stored(owner["sessionLocation"]))
        assert texts[: len(acknowledged)] == acknowledged and len(texts) <= len(acknowledged) + 1
        for location in made:
            assert location != owner["sessionLocation"]
            assert stored(location) == json_records(older)
        # a newer copy into the session A left, C killed in the middle of it
        later = more_turns(stored(owner["sessionLocation"])[-1], 400)
        newer = snapshot(owner["sessionLocation"], tmp_path / "newer", later)
        wanted = json_records(newer)
        async with host(tmp_path, "c", *store, killed=True) as c:
            pending = asyncio.ensure_future(c.client.request({"type": "import_session", "inputPath": str(newer)}))
            start = len(stored(owner["sessionLocation"]))
            while len(stored(owner["sessionLocation"])) == start and not pending.done():
                await asyncio.sleep(0.002)  # the import has begun to append
            await asyncio.sleep(rng.uniform(0, 0.05))
            os.kill(c.client.proc.pid, signal.SIGKILL)
            await c.client.proc.wait()
            pending.cancel()
        held = stored(owner["sessionLocation"])
        assert held == wanted[: len(held)] and user_texts(held)[: len(acknowledged)] == acknowledged
        async with host(tmp_path, "d", *store) as d:
            assert await d.client.call("import_session", inputPath=str(newer)) == {"cancelled": False}
            assert (await d.client.call("get_state"))["sessionId"] == owner["sessionId"]
        assert stored(owner["sessionLocation"]) == wanted



def _atomic_cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``atomic sessions …`` once, on the agent dir the hosts of ``root`` share."""
    env = host_env(root / "agent", root / "cli-faux.jsonl", root / "cli-faux-log.jsonl")
    return subprocess.run(
        [sys.executable, "-m", "atomic_host", "sessions", *args, "--agent-dir", str(root / "agent")],
        cwd=root / "work", env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


@pytest.mark.slow
async def test_the_sessions_command_never_loses_entries_or_writes_a_held_session(tmp_path: Path) -> None:
    async with host(tmp_path, "a") as a:
        await chat(a, *TURNS[:2])
        owner = await a.client.call("get_state")
        older = snapshot(owner["sessionLocation"], tmp_path / "older")
        await chat(a, *TURNS[2:4])
        copied = _atomic_cli(tmp_path, "import")  # every JSONL session into sessions.db
        assert copied.returncode == 0, copied.stderr
        in_db = f"sqlite:{tmp_path / 'agent' / 'sessions.db'}#{owner['sessionId']}"
        assert user_texts(stored(in_db)) == TURNS[:4]
        # an older file into the database: a new session there, the stored one keeps its turns
        again = _atomic_cli(tmp_path, "import", str(older))
        assert again.returncode == 0, again.stderr
        assert "imported as a new session" in again.stderr
        assert user_texts(stored(in_db)) == TURNS[:4]
        # the database's sessions back over the JSONL files: A's is held, so it is not replaced
        back = _atomic_cli(tmp_path, "export", "--overwrite")
        assert back.returncode == 1
        assert "Session is open for writing in another atomic process" in back.stderr
        assert last_reply(await chat(a, TURNS[4]))["stopReason"] == "stop"
        assert user_texts(stored(owner["sessionLocation"])) == TURNS[:5]
