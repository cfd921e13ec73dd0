"""kit/_fast/http1.py's plain response heads read as h11 reads them.

``_plain_head`` takes a response head without h11 when it is plain; whenever it does, h11 (the
client of a POST) must read the same bytes as the same final response: status, version, reason,
fields (lower-case names and as sent) and the bytes after the head. What it declines is read by
h11 as before (``test_prov_http1.py`` holds the whole pool to httpx on hostile server bytes).
"""

from __future__ import annotations

import h11
from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_host.kit._fast.http1 import MAX_INCOMPLETE, _plain_head


def _h11_head(data: bytes) -> tuple[object, bytes] | None:
    """h11's final response to a POST read from ``data`` and what follows it, or None (it needs
    more data, or refuses the bytes)."""
    conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_INCOMPLETE)
    conn.send(h11.Request(method=b"POST", target=b"/v1/chat", headers=[(b"host", b"x"), (b"content-length", b"0")]))
    conn.receive_data(data)
    try:
        event = conn.next_event()
    except h11.RemoteProtocolError:
        return None
    if not isinstance(event, h11.Response):
        return None
    return event, conn.trailing_data[0]


def _same_as_h11(data: bytes) -> bool:
    """Whether ``_plain_head`` took the head (and then agreed with h11 on everything)."""
    plain = _plain_head(data)
    if plain is None:
        return False
    head, rest = plain
    reference = _h11_head(data)
    assert reference is not None, data
    event, h11_rest = reference
    assert head.status_code == event.status_code  # type: ignore[attr-defined]
    assert head.http_version == event.http_version  # type: ignore[attr-defined]
    assert head.reason == bytes(event.reason)  # type: ignore[attr-defined]
    assert list(head.headers) == list(event.headers)  # type: ignore[attr-defined]
    assert head.headers.raw_items() == event.headers.raw_items()  # type: ignore[attr-defined]
    assert rest == h11_rest
    return True


TOKEN = st.text("abcxyzABCXYZ019-!#$%&'*+.^_`|~", min_size=1, max_size=8)
VISIBLE = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=6)
NAME = st.one_of(
    *[TOKEN] * 6,
    st.sampled_from(["Content-Length", "content-length", "Transfer-Encoding", "transfer-encoding", "Connection",
                     "Content-Type"]),
    st.sampled_from(["sp ace", "", "na:me", "caf\u00e9", " x", "\tx"]),
)  # fmt: skip
VALUE = st.one_of(
    *[st.builds(" ".join, st.lists(VISIBLE, max_size=3))] * 6,
    st.builds("\t \t".join, st.lists(VISIBLE, max_size=3)),
    st.sampled_from(["chunked", "CHUNKED", "ChunKed", "12", "007", "0", "close", "keep-alive",
                     "text/event-stream; charset=utf-8"]),
    st.sampled_from(["gzip, chunked", "5, 5", "5,6", "-1", "", " 12 ", "\t1", "12345678901234567890123", "1" * 18,
                     "1" * 19]),
    st.text(st.characters(min_codepoint=0, max_codepoint=255), max_size=10),
)  # fmt: skip
PLAIN_VALUE = st.one_of(
    st.builds(" ".join, st.lists(VISIBLE, max_size=3)),
    st.builds("\t \t".join, st.lists(VISIBLE, max_size=3)),
    st.sampled_from(["chunked", "12", "close", "keep-alive", "text/event-stream; charset=utf-8", "5, 5"]),
)
EOL = st.sampled_from(["\r\n"] * 30 + ["\n", "\r", "\r\r\n", " \r\n"])
STATUS = st.sampled_from(
    ["HTTP/1.1 200 OK"] * 5 + ["HTTP/1.1 200", "HTTP/1.1 200 ", "HTTP/1.0 200 OK", "HTTP/1.1 404 Not Found",
     "HTTP/1.1 500 Internal Server Error", "HTTP/1.1 429 Too  Many\tRequests", "HTTP/1.1 204 No Content",
     "HTTP/1.1 599 x", "HTTP/1.1 100 Continue", "HTTP/1.1 101 Switching", "HTTP/1.1 199 x", "HTTP/1.1 600 x",
     "HTTP/2 200", "HTTP/2.0 200 OK", "HTTP/1.1 20 OK", "HTTP/1.1  200 OK", "http/1.1 200 OK",
     "HTTP/1.1 200 \u00e9t\u00e9", "HTTP/1.1 200 O\x01K", ""]
)  # fmt: skip


@st.composite
def heads(draw: st.DrawFn) -> bytes:
    out = draw(STATUS) + draw(EOL)
    for _ in range(draw(st.integers(0, 4))):
        colon = draw(st.sampled_from([":", ": ", ":\t", ":  \t"] * 5 + [" :", "", "::"]))
        out += draw(NAME) + colon + draw(VALUE) + draw(st.sampled_from(["", " ", "\t"])) + draw(EOL)
    out += draw(st.sampled_from(["\r\n"] * 20 + ["\n", "", "\r"]))
    return out.encode("latin-1") + draw(st.binary(max_size=12))


@settings(max_examples=600, deadline=None)
@given(data=heads())
def test_a_head_read_without_h11_is_read_as_h11_reads_it(data: bytes) -> None:
    _same_as_h11(data)


@st.composite
def plain_heads(draw: st.DrawFn) -> bytes:
    """Heads ``_plain_head`` must take: every part plain, one framing header at most."""
    status = draw(st.sampled_from(["HTTP/1.1", "HTTP/1.0"])) + " " + str(draw(st.integers(200, 599)))
    status += draw(st.sampled_from(["", " ", " OK", " Not Found", " a  b ~!"]))
    lines = [
        draw(TOKEN) + draw(st.sampled_from([":", ": ", ":\t "])) + draw(PLAIN_VALUE)
        + draw(st.sampled_from(["", " ", "\t "]))
        for _ in range(draw(st.integers(0, 6)))
    ]  # fmt: skip
    framing = draw(st.sampled_from([[], ["Content-Length: 12"], ["content-length:0"], ["Transfer-Encoding: Chunked"]]))
    if framing:
        lines.insert(draw(st.integers(0, len(lines))), framing[0])
    return "\r\n".join([status, *lines, "", ""]).encode() + draw(st.binary(max_size=12))


@settings(max_examples=300, deadline=None)
@given(data=plain_heads())
def test_plain_heads_are_read_without_h11_as_h11_reads_them(data: bytes) -> None:
    assert _same_as_h11(data), data


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=80))
def test_any_bytes_read_without_h11_are_read_as_h11_reads_them(data: bytes) -> None:
    _same_as_h11(b"HTTP/1.1 200 OK\r\n" + data)


def test_the_heads_providers_send_are_read_without_h11() -> None:
    for data in (
        b"HTTP/1.1 200 OK\r\nServer: BaseHTTP/0.6 Python/3.11.7\r\nDate: Fri, 04 Dec 2026 04:10:05 GMT\r\n"
        b"content-type: text/event-stream\r\ncache-control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\na5\r\ndata",
        b"HTTP/1.1 200 OK\r\ndate: Fri, 04 Dec 2026 04:10:05 GMT\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
        b"transfer-encoding: chunked\r\nconnection: keep-alive\r\nopenai-processing-ms: 93\r\n"
        b"x-request-id: req_0123456789abcdef\r\nstrict-transport-security: max-age=31536000; includeSubDomains\r\n"
        b"set-cookie: __cf_bm=a.b-c; path=/; expires=Fri, 04-Dec-26 04:40:05 GMT; domain=.api.openai.com; HttpOnly\r\n"
        b"\r\n",
        b"HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n",
        b"HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\ncontent-length: 12\r\n"
        b"retry-after: 3\r\n\r\n{\"error\":1}",
        b"HTTP/1.1 200\r\n\r\n",
    ):
        assert _same_as_h11(data), data


def test_heads_h11_joins_checks_or_refuses_are_left_to_it() -> None:
    for data in (
        b"HTTP/1.1 200 OK\r\ncontent-length: 5, 5\r\n\r\n",  # h11 joins equal values
        b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\ncontent-length: 5\r\n\r\n",  # and drops the repeat
        b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\n",  # conflicting
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\n",  # refused
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ntransfer-encoding: chunked\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nx: a\r\n folded\r\n\r\n",  # obs-fold: h11 unfolds it
        b"HTTP/1.1 200 OK\nx: a\n\n",  # bare LF line ends
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n",  # an interim response first
        b"HTTP/1.1 200 OK\r\nx: caf\xc3\xa9\r\n\r\n",  # obs-text in a value
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n",  # not all there yet
        b"",
    ):
        assert _plain_head(data) is None, data
