"""A real HTTP server on 127.0.0.1 serving scripted SSE responses (reusable in end-to-end tests).

    with SSEServer() as server:
        server.enqueue(anthropic_frames([...]))          # a list of chunks = a 200 SSE response
        server.enqueue(Reply(status=529, body='{"type":"error"}'))
        server.enqueue(Reply(chunks=[...], drop_after=2))  # connection dropped after 2 chunks
        server.enqueue(Reply(stall_before_headers=True))   # never answers
        ... server.base_url ... server.requests[0].body ...

It runs in a daemon thread, so it serves in-process async tests and subprocesses alike. Responses
are served FIFO, one per request; with an empty queue a request gets ``500 no response queued``.
"""

from __future__ import annotations

import json
import selectors
import socket
import socketserver
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ssl

Chunk = str | bytes | tuple[float, str | bytes]
"""A chunk, or ``(delay_seconds_before_it, chunk)``."""


@dataclass
class Reply:
    """One scripted response."""

    chunks: list[Chunk] = field(default_factory=list)
    status: int = 200
    body: str | None = None
    """For error replies: the whole body (sent with a content-length). An error status with
    ``chunks`` and no body streams the chunks instead."""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = None
    drop_after: int | None = None
    """Close the socket abruptly after this many chunks (no terminating chunk)."""
    stall_after: int | None = None
    """Send this many chunks, then hang until the server stops (or the client leaves)."""
    stall_before_headers: bool = False
    """Hang before sending the status line."""


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    """Lower-cased header names."""
    body: Any
    """Parsed JSON body (or the raw text when it is not JSON)."""


def sse_frame(data: Any, event: str | None = None) -> str:
    """One SSE frame; ``data`` that is not a string is JSON-encoded."""
    text = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n"


def anthropic_frames(events: list[dict[str, Any]]) -> list[str]:
    """Anthropic SSE: ``event: <type>`` + ``data: <json>`` per event."""
    return [sse_frame(e, e["type"]) for e in events]


def openai_chat_frames(chunks: list[dict[str, Any]], done: bool = True) -> list[str]:
    """Chat Completions SSE: ``data: <json>`` frames, then ``data: [DONE]``."""
    frames = [sse_frame(c) for c in chunks]
    return [*frames, "data: [DONE]\n\n"] if done else frames


def responses_frames(events: list[dict[str, Any]]) -> list[str]:
    """Responses API SSE: ``event: <type>`` + ``data: <json>`` (with ``sequence_number``)."""
    return [sse_frame({**e, "sequence_number": i}, e["type"]) for i, e in enumerate(events)]


def pieces(data: bytes, size: int) -> list[bytes]:
    """``data`` cut into writes of ``size`` bytes (chunk boundaries anywhere, even inside UTF-8)."""
    return [data[i : i + size] for i in range(0, len(data), size)]


def recorded_stream(path: Path, size: int) -> Reply:
    """A 200 ``text/event-stream`` reply with the bytes of a recorded stream, ``size`` per write."""
    return Reply(chunks=list(pieces(path.read_bytes(), size)))


def recorded_error(status: int, path: Path, headers: dict[str, str] | None = None) -> Reply:
    """An HTTP error reply whose body is the recorded file, byte for byte."""
    return Reply(status=status, body=path.read_bytes().decode("utf-8"), headers=dict(headers or {}))


class ServingThread:
    """Serve a ``socketserver`` server in a daemon thread until :meth:`stop`.

    ``serve_forever`` sees a shutdown request only at its next poll, so every stop used to wait up
    to the poll interval (0.05 s here, 0.5 s by default) and a test run stops hundreds of servers.
    This thread sleeps in ``select`` on the listening socket and a wake-up socket: ``stop``
    returns as soon as the thread has read the wake-up byte.
    """

    def __init__(self, server: socketserver.BaseServer) -> None:
        self.server = server
        self._wake_r, self._wake_w = socket.socketpair()
        self._thread: threading.Thread | None = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self.server, selectors.EVENT_READ)
            selector.register(self._wake_r, selectors.EVENT_READ)
            while True:
                ready = selector.select()
                if any(key.fileobj is self._wake_r for key, _ in ready):
                    return
                self.server.handle_request()  # the listening socket is readable: accept at once

    def stop(self) -> None:
        """Stop accepting and close the listening socket; handlers still running finish on their own."""
        if self._thread is None:
            return
        self._wake_w.send(b"x")
        self._thread.join()
        self._thread = None
        self.server.server_close()
        self._wake_r.close()
        self._wake_w.close()


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients aborting mid-request are part of the tests, not failures


class SSEServer:
    """Scripted SSE server; use as a context manager or call :meth:`start`/:meth:`stop`."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[RecordedRequest] = []
        self.cancelled: list[int] = []
        """Indexes (into ``requests``) of the requests whose client left before the reply ended:
        a stalled stream it closed, or a write that found the connection gone."""
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._serving: ServingThread | None = None

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self, tls: ssl.SSLContext | None = None) -> SSEServer:
        """Listen on a free loopback port (speaking TLS with ``tls``, a server-side context) and
        serve in a thread of its own."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Real streaming APIs flush each event at once; with Nagle on, small frames wait for
            # the client's delayed ACK (~40 ms stalls that have nothing to do with the client).
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                server._handle(self)

            do_GET = do_POST

        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        if tls is not None:  # before the serving thread looks at the socket (wrapping replaces it)
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
        self._serving = ServingThread(self._httpd)
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._serving is not None:
            self._serving.stop()

    def __enter__(self) -> SSEServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    # -- scripting --------------------------------------------------------------------------------
    def enqueue(self, reply: Reply | list[Chunk]) -> None:
        """Queue a response: a :class:`Reply` or a plain list of chunks (a 200 SSE stream)."""
        with self._lock:
            self.replies.append(reply if isinstance(reply, Reply) else Reply(chunks=list(reply)))

    @property
    def last_request(self) -> RecordedRequest:
        return self.requests[-1]

    # -- serving ----------------------------------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("content-length") or 0)
        raw = h.rfile.read(length).decode("utf-8", errors="replace") if length else ""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        with self._lock:
            self.requests.append(RecordedRequest(h.command, h.path, {k.lower(): v for k, v in h.headers.items()}, body))
            index = len(self.requests) - 1
            reply = self.replies.popleft() if self.replies else Reply(status=500, body="no response queued")
        if reply.stall_before_headers:
            self._stall(h, index)
            return
        if reply.body is not None or (reply.status >= 400 and not reply.chunks):
            data = (reply.body or "").encode()
            h.send_response(reply.status)
            h.send_header("content-type", reply.content_type or "application/json")
            h.send_header("content-length", str(len(data)))
            for k, v in reply.headers.items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(data)
            h.wfile.flush()
            return
        h.send_response(reply.status)
        h.send_header("content-type", reply.content_type or "text/event-stream")
        h.send_header("cache-control", "no-cache")
        h.send_header("transfer-encoding", "chunked")
        for k, v in reply.headers.items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.flush()
        try:
            for i, chunk in enumerate(reply.chunks):
                if reply.drop_after is not None and i >= reply.drop_after:
                    self._drop(h)
                    return
                if reply.stall_after is not None and i >= reply.stall_after:
                    self._stall(h, index)
                    return
                delay, payload = chunk if isinstance(chunk, tuple) else (0.0, chunk)
                if delay and self._stopping.wait(delay):
                    return
                data = payload.encode() if isinstance(payload, str) else payload
                h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                h.wfile.flush()
            if reply.drop_after is not None and reply.drop_after >= len(reply.chunks):
                self._drop(h)
                return
            if reply.stall_after is not None:
                self._stall(h, index)
                return
            h.wfile.write(b"0\r\n\r\n")
            h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self._left(index)  # the client went away (abort)

    def _drop(self, h: BaseHTTPRequestHandler) -> None:
        h.close_connection = True
        try:
            h.wfile.flush()
            h.connection.shutdown(2)
        except OSError:
            pass

    def _left(self, index: int) -> None:
        with self._lock:
            self.cancelled.append(index)

    def _stall(self, h: BaseHTTPRequestHandler, index: int) -> None:
        # Hang until the server stops or the client disconnects (poll the socket for EOF).
        import select

        h.close_connection = True
        while not self._stopping.is_set():
            readable, _, _ = select.select([h.connection], [], [], 0.05)
            if readable:
                try:
                    if not h.connection.recv(1, 2):  # MSG_PEEK: b"" = client closed
                        self._left(index)
                        return
                except OSError:
                    self._left(index)
                    return
                time.sleep(0.05)


def make_certificates(directory: Path, common_name: str, subject_alt_name: str) -> dict[str, Path]:
    """A throwaway CA and a server certificate for ``subject_alt_name`` (``IP:127.0.0.1``,
    ``DNS:vendor.example``) signed by it, made with the openssl CLI in ``directory``:
    ``{"ca", "cert", "key"}`` paths. For TLS tests that trust the CA through SSL_CERT_FILE."""
    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=atomic-host test CA", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign")  # fmt: skip
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr",
        "-subj", f"/CN={common_name}")  # fmt: skip
    (directory / "leaf.ext").write_text(
        f"subjectAltName={subject_alt_name}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\nauthorityKeyIdentifier=keyid\n"
    )
    run("x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "leaf.pem", "-days", "2", "-extfile", "leaf.ext")  # fmt: skip
    return {"ca": directory / "ca.pem", "cert": directory / "leaf.pem", "key": directory / "leaf.key"}
