"""The ``postgres`` store's configuration and connection (issue 26): the URL from settings
``database.url`` (``ATOMIC_DATABASE_URL`` wins), its password never in anything the host writes,
clear errors when there is no database or it cannot be reached, and a connection the server
dropped is made again (the lock taken again) for the next write."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pg_helpers import free_port
from pgs_helpers import chat, entries, rows, user_texts

from atomic_host.testing import host_env, start_host

pytestmark = pytest.mark.slow

PASSWORD = "hunter2-not-for-logs"


def _start(tmp_path: Path, settings: dict[str, Any], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    (agent / "settings.json").write_text(__import__("json").dumps(settings))
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "atomic_host", "--mode", "rpc", "--provider", "faux"],
        input="", capture_output=True, text=True, timeout=60, cwd=work,
        env=host_env(agent, tmp_path / "faux.jsonl", tmp_path / "faux-log.jsonl", env),
    )  # fmt: skip


async def test_the_url_from_settings_and_its_password_never_written(postgres_server: Any, tmp_path: Path) -> None:
    url = postgres_server.fresh_url().replace("atomic@", f"atomic:{PASSWORD}@")  # trust auth ignores it
    settings = {"sessionStore": "postgres", "database": {"url": url}}
    err = (tmp_path / "host.err").open("wb")
    async with start_host(base=tmp_path, settings=settings, stderr=err.fileno()) as host:
        await chat(host, f"my database password is {PASSWORD}")
        state = await host.client.get_state()
        session_id = state["sessionId"]
        assert state["sessionLocation"].startswith("postgres://atomic@127.0.0.1:")
        host.assert_protocol_lines()
        stdout = "\n".join(host.client.lines)
    err.close()
    assert PASSWORD not in stdout
    assert PASSWORD not in (tmp_path / "host.err").read_text()
    stored = str(rows(url, "SELECT header, first_message FROM atomic_sessions")) + str(entries(url, session_id))
    assert "my database password is" in stored and PASSWORD not in stored
    assert "[REDACTED:ATOMIC_DATABASE_URL]" in stored


def test_no_database_and_an_unreachable_one_are_clear_errors(tmp_path: Path) -> None:
    done = _start(tmp_path, {"sessionStore": "postgres"})
    assert done.returncode == 1 and done.stdout == ""
    assert 'The "postgres" session store needs a database: set ATOMIC_DATABASE_URL' in done.stderr
    url = f"postgresql://atomic:{PASSWORD}@127.0.0.1:{free_port()}/nowhere"
    done = _start(tmp_path, {"sessionStore": "postgres"}, {"ATOMIC_DATABASE_URL": url})
    assert done.returncode == 1 and done.stdout == ""
    assert "Could not connect to the session database postgresql://atomic:***@127.0.0.1:" in done.stderr
    assert PASSWORD not in done.stderr


async def test_a_dropped_connection_is_made_again_for_the_next_write(pg_url: str, tmp_path: Path) -> None:
    async with start_host("--session-store", "postgres", base=tmp_path, env={"ATOMIC_DATABASE_URL": pg_url}) as host:
        c = host.client
        await chat(host, "before")
        session_id = (await c.get_state())["sessionId"]
        assert c.proc is not None
        killed = rows(pg_url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE %s",
                      f"atomic pid {c.proc.pid} %")  # fmt: skip
        assert killed == [(True,)]
        first = await c.request({"type": "set_session_name", "name": "lost"})
        assert first["success"] is False and "Session database" in first["error"]  # said, not swallowed
        await chat(host, "after")  # reconnected, the lock taken again, the sequence continued
        assert user_texts(entries(pg_url, session_id)) == ["before", "after"]
        assert (await c.get_state()).get("sessionName") is None
        host.assert_protocol_lines()
