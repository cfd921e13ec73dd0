"""``export_html`` before a conversation answers ``Nothing to export yet - start a conversation
first`` (semantics §7) and writes nothing; once the session is saved it exports."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_host.client import RpcError
from atomic_host.testing import start_host

NOTHING = "Nothing to export yet - start a conversation first"


async def _export_error(host, out: Path) -> str:
    with pytest.raises(RpcError) as info:
        await host.client.call("export_html", outputPath=str(out))
    return str(info.value)


async def test_export_of_a_session_without_a_conversation_is_refused() -> None:
    async with start_host() as host:
        c = host.client
        out = host.cwd / "out.html"
        assert NOTHING in await _export_error(host, out)  # a new session: model and level entries only
        await c.call("set_session_name", name="named but empty")
        await c.call("bash", command="echo hi")  # a direct bash result is no conversation either
        assert NOTHING in await _export_error(host, out)
        assert not out.exists() and not list(host.cwd.glob("*.html"))
        host.faux.push("hello")
        await c.prompt_and_wait("hi")
        assert await c.call("export_html", outputPath=str(out)) == {"path": str(out)}
        assert "hello" in out.read_text()


async def test_in_memory_session_is_refused_first() -> None:
    async with start_host("--no-session") as host:
        assert "Cannot export in-memory session to HTML" in await _export_error(host, host.cwd / "x.html")
