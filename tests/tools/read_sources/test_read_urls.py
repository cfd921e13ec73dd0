"""read on URLs through the real host, against a local HTTP server: HTML to markdown, redirects,
private addresses refused unless allowed, credentials kept from other hosts, endless streams bounded."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from docmakers import pdf_bytes
from read_helpers import abort_while_reading, read

from atomic_host.testing import start_host

pytestmark = pytest.mark.slow  # a local HTTP server per test

PAGE = b"""<!doctype html><html><head><title>Release notes</title><style>body{color:red}</style>
<script>var secret = "not text";</script></head><body>
<nav><a href="/">Home</a></nav>
<h1>Version 2.0</h1><p>Adds <b>archive</b> reading and <a href="/docs">docs</a>.</p>
<ul><li>zip</li><li>tar</li></ul>
<table><tr><th>kind</th><th>library</th></tr><tr><td>PDF</td><td>pypdfium2</td></tr></table>
</body></html>"""


class Handler(BaseHTTPRequestHandler):
    seen: list[tuple[str, str | None, str]] = []  # (path, Authorization, Host)

    def log_message(self, *_args: object) -> None:
        pass

    def do_GET(self) -> None:
        Handler.seen.append((self.path, self.headers.get("Authorization"), self.headers.get("Host", "")))
        port = self.server.server_address[1]
        if self.path == "/page.html":
            self._send(200, "text/html; charset=utf-8", PAGE)
        elif self.path == "/notes.txt":
            self._send(200, "text/plain", "".join(f"note {i}\n" for i in range(1, 11)).encode())
        elif self.path == "/redirect":
            self._redirect("/page.html")
        elif self.path == "/loop":
            self._redirect("/loop")
        elif self.path == "/away":  # same server, another host name: another origin
            self._redirect(f"http://localhost:{port}/page.html")
        elif self.path == "/report":  # a PDF, known by its type (no .pdf in the URL)
            self._send(200, "application/pdf", pdf_bytes(["From the web", "Second page"]))
        elif self.path == "/missing":
            self._send(404, "text/plain", b"no such page")
        elif self.path == "/slow":
            self._endless(b"x", 0.2)
        elif self.path == "/firehose":
            self._endless(b"y" * 65536, 0)
        else:
            self._send(404, "text/plain", b"?")

    def _send(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, where: str) -> None:
        self.send_response(302)
        self.send_header("Location", where)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _endless(self, chunk: bytes, pause: float) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        try:
            while True:
                self.wfile.write(chunk)
                self.wfile.flush()
                if pause:
                    time.sleep(pause)
        except OSError:
            pass


@pytest.fixture
def server() -> Iterator[str]:
    Handler.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


async def test_html_text_redirects_and_credentials(tmp_path: Path, server: str) -> None:
    settings = {"read": {"allowPrivateUrls": True}}
    async with start_host(base=tmp_path / "h", settings=settings) as host:
        r = await read(
            host,
            f"http://{server}/page.html",
            f"http://{server}/redirect",
            f"http://{server}/notes.txt:3-4",
            f"http://{server}/missing",
            f"http://{server}/loop",
            f"http://user:s3cret@{server}/away",
            f"http://{server}/report:2",
        )
        host.assert_protocol_lines()
        ends = [e for e in host.client.events if e.get("type") == "tool_execution_end"]
    page = r[0]["text"]
    assert page.startswith(f"[http://{server}/page.html] (HTTP 200)\n# Release notes\n\n")
    assert "# Version 2.0" in page and "Adds **archive** reading and [docs](/docs)." in page
    assert "- zip\n- tar" in page and "| PDF | pypdfium2 |" in page
    assert "secret" not in page and "color:red" not in page
    assert r[1]["text"].startswith(f"[http://{server}/redirect] (HTTP 200, redirected to http://{server}/page.html)\n")
    assert "# Version 2.0" in r[1]["text"]
    assert r[2]["text"] == (
        f"[http://{server}/notes.txt] (HTTP 200)\nnote 3\nnote 4\n\n[Showing lines 3-4 of 10. Continue with offset=5.]"
    )
    assert r[3]["isError"] and r[3]["text"] == f"http://{server}/missing answered HTTP 404: no such page"
    assert r[4]["isError"] and r[4]["text"] == f"http://{server}/loop: more than 5 redirects; stopped"
    assert "# Version 2.0" in r[5]["text"] and r[5]["text"].startswith(f"[http://***@{server}/away]")
    assert r[6]["text"] == f"[http://{server}/report] (PDF, 2 pages)\n--- page 2 ---\nSecond page"
    # the credentials went to the first host only, never to the host it redirected to
    first_hop = [auth for path, auth, _ in Handler.seen if path == "/away"]
    assert first_hop == ["Basic dXNlcjpzM2NyZXQ="]  # user:s3cret
    second_hop = [(path, auth) for path, auth, host_header in Handler.seen if host_header.startswith("localhost:")]
    assert second_hop == [("/page.html", None)]
    assert ends and not [e for e in ends if "s3cret" in str(e["result"])]  # the result never repeats it


async def test_private_addresses_refused_unless_allowed(tmp_path: Path, server: str) -> None:
    async with start_host(base=tmp_path / "h") as host:
        r = await read(host, f"http://{server}/page.html", "http://localhost:1/x", "http://[::1]:1/", "ftp://x/y")
    hint = 'Allow such reads with the setting "read": {"allowPrivateUrls": true} or ATOMIC_ALLOW_PRIVATE_URL_READS=1.'
    assert r[0]["isError"] and r[0]["text"] == (
        f"Refusing to read http://{server}/page.html: 127.0.0.1 is a private or loopback address (127.0.0.1). {hint}"
    )
    assert r[1]["isError"] and "localhost is a private or loopback address" in r[1]["text"]
    assert r[2]["isError"] and "::1 is a private or loopback address" in r[2]["text"]
    assert r[3]["isError"] and r[3]["text"].startswith("Unknown scheme ftp://")
    assert not [p for p, _, _ in Handler.seen]  # nothing was fetched
    async with start_host(base=tmp_path / "h2", env={"ATOMIC_ALLOW_PRIVATE_URL_READS": "1"}) as host:
        r = await read(host, f"http://{server}/notes.txt")
    assert r[0]["text"].startswith(f"[http://{server}/notes.txt] (HTTP 200)\nnote 1\n")


async def test_endless_streams_stop_at_size_time_and_abort(tmp_path: Path, server: str) -> None:
    settings = {"read": {"allowPrivateUrls": True, "timeoutSeconds": 1.5}}
    async with start_host(base=tmp_path / "h", settings=settings) as host:
        started = time.monotonic()
        r = await read(host, f"http://{server}/slow", f"http://{server}/firehose")
        elapsed = time.monotonic() - started
    assert r[0]["isError"] and r[0]["text"] == f"Reading http://{server}/slow took longer than 1.5 s; stopped"
    assert r[1]["isError"] and r[1]["text"] == f"http://{server}/firehose sent more than 10 MiB; stopped reading it"
    assert elapsed < 15

    async with start_host(base=tmp_path / "h2", settings={"read": {"allowPrivateUrls": True}}) as host:
        end, answered = await abort_while_reading(host, f"http://{server}/slow")
    assert answered < 5  # the stream never ends; a loaded machine adds seconds
    assert end["isError"] and end["result"]["content"][0]["text"] == "Read aborted"
