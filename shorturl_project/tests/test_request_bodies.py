"""The server front (shorturl_project/bodies.py) on a real granian, around a WSGI app that tells
what it received (bodies_app.py, beside it): bodies are read before a thread is taken, under the
deadline, the rate, the size cap and the memory bound; the app sees what granian's own WSGI
interface gave it. Small limits, so that each case takes a second or two; the deployment-shaped
cases with the defaults are in e2e/test_slow_bodies.py."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GRACE = 1.0
MIN_RATE = 2000
MAX_BYTES = 20_000
BUFFER_BYTES = 30_000


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """granian serving the echo app behind BufferedBodies, ONE thread."""
    port = _free_port()
    log = tmp_path_factory.mktemp("bodies") / "bodies.log"
    env = os.environ | {
        "BODIES_THREADS": "1",
        "BODIES_MAX_BYTES": str(MAX_BYTES),
        "BODIES_GRACE": str(GRACE),
        "BODIES_MIN_RATE": str(MIN_RATE),
        "BODIES_BUFFER_BYTES": str(BUFFER_BYTES),
        "BODIES_LOG": str(log),
    }
    argv = [sys.executable, "-m", "granian", "--interface", "rsgi", "--no-ws", "--factory"]
    argv += [
        "--port",
        str(port),
        "--log-level",
        "warning",
        "shorturl_project.tests.bodies_app:make_app",
    ]
    proc = subprocess.Popen(argv, cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("granian did not start") from None
                time.sleep(0.1)
        yield port, log
    finally:
        proc.terminate()
        proc.wait(10)


def _raw(port: int, head: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(head)
    return sock


def _answer(sock: socket.socket) -> tuple[int, dict, bytes]:
    response = http.client.HTTPResponse(sock)
    response.begin()
    return response.status, dict(response.getheaders()), response.read()


def _post_head(path: str, length: int | None, extra: str = "") -> bytes:
    framing = f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    return f"POST {path} HTTP/1.1\r\nHost: test\r\n{framing}\r\n{extra}\r\n".encode()


def _get(port: int, path: str, headers: dict | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_slow_bodies_take_no_thread_and_are_answered_408(server):
    """Three clients trickling bodies at a server with ONE thread: a GET is answered at once,
    and each trickler gets 408 once the grace is over."""
    port, _ = server
    senders = [_raw(port, _post_head("/echo", 1000) + b"x") for _ in range(3)]
    started = time.monotonic()
    status, _ = _get(port, "/echo")
    assert status == 200
    assert time.monotonic() - started < GRACE  # answered while every trickler is held
    for sock in senders:
        with sock:
            status, headers, body = _answer(sock)
            assert status == 408
            assert headers["connection"] == "close"
            assert b"too slowly" in body
    assert GRACE <= time.monotonic() - started < GRACE + 3


def test_a_body_sent_at_the_minimum_rate_is_not_cut_off(server):
    """6,000 bytes at 1.3x the minimum rate take 2.3 s: well past the 1-s grace, but never
    behind the rate, so the app gets the whole body."""
    port, _ = server
    size, piece = 6000, 200
    with _raw(port, _post_head("/echo", size)) as sock:
        started = time.monotonic()
        for sent in range(0, size, piece):
            # Keep ahead of grace + received / rate, with a margin for a busy machine.
            time.sleep(max(0.0, started + sent / (MIN_RATE * 1.3) - time.monotonic()))
            sock.sendall(b"y" * piece)
        status, _, body = _answer(sock)
    assert time.monotonic() - started > GRACE  # the grace alone would have cut it off
    assert status == 200
    assert json.loads(body)["body"] == "y" * size


def test_a_chunked_body_reaches_the_app_with_its_length(server):
    port, _ = server
    with _raw(port, _post_head("/echo", None, "Content-Type: text/plain\r\n")) as sock:
        sock.sendall(b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
        status, _, body = _answer(sock)
    seen = json.loads(body)
    assert status == 200
    assert (seen["body"], seen["CONTENT_LENGTH"], seen["CONTENT_TYPE"]) == (
        "hello world",
        "11",
        "text/plain",
    )


def test_bodies_over_the_cap_are_refused(server):
    """A Content-Length over the cap: 413 at once, JSON on API paths, a page otherwise; a
    chunked body is refused once it passes the cap."""
    port, _ = server
    with _raw(port, _post_head("/api/v1/links/", MAX_BYTES + 1)) as sock:
        status, headers, body = _answer(sock)
    assert status == 413
    assert headers["content-type"] == "application/json"
    assert json.loads(body) == {
        "detail": "The request body is too large. At most 20,000 bytes are accepted."
    }
    with _raw(port, _post_head("/accounts/login/", MAX_BYTES + 1)) as sock:
        status, headers, body = _answer(sock)
    assert (status, headers["content-type"]) == (413, "text/html; charset=utf-8")
    assert b"<h1>The request body is too large.</h1>" in body
    with _raw(port, _post_head("/yourls-api.php", None)) as sock:
        chunk = b"z" * 4000
        try:
            for _ in range(MAX_BYTES // len(chunk) + 2):
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        except OSError:
            pass  # the server may have answered and closed already
        status, _, body = _answer(sock)
    assert status == 413
    assert "too large" in json.loads(body)["detail"]


def test_bodies_held_together_are_bounded(server):
    """Two bodies being read hold 2 x 16,000 bytes: past the process's 30,000, the one that
    crosses the bound is answered 503; the other still reaches the app."""
    port, _ = server
    size = 16_000
    first = _raw(port, _post_head("/echo", size) + b"a" * (size - 1))
    time.sleep(0.2)
    with _raw(port, _post_head("/echo", size) + b"b" * size) as second:
        status, headers, body = _answer(second)
    assert status == 503
    assert headers["retry-after"] == "5"
    with first:
        first.sendall(b"a")
        status, _, body = _answer(first)
    assert (status, len(json.loads(body)["body"])) == (200, size)


def test_a_body_cut_short_never_reaches_the_app(server):
    """A client that announces 1,000 bytes, sends 10 and stops sending: 400, and the app is
    never called with the 10."""
    port, log = server
    before = log.read_text() if log.exists() else ""
    with _raw(port, _post_head("/echo", 1000) + b"0123456789") as sock:
        sock.shutdown(socket.SHUT_WR)
        status, _, _ = _answer(sock)
    assert status == 400
    assert (log.read_text() if log.exists() else "") == before


def test_the_app_sees_what_granian_wsgi_gives_it(server):
    """Repeated headers joined as granian's WSGI joins them (cookies with ";"), the client's
    address without its port, a percent-encoded UTF-8 path as a WSGI (latin-1) string, the
    query string untouched."""
    port, _ = server
    head = (
        "GET /caf%C3%A9?q=a%20b&x=1 HTTP/1.1\r\nHost: test\r\nX-Multi: one\r\nX-Multi: two\r\n"
        "Cookie: a=1\r\nCookie: b=2\r\n\r\n"
    )
    with _raw(port, head.encode()) as sock:
        status, _, body = _answer(sock)
    seen = json.loads(body)
    assert status == 200
    assert seen["PATH_INFO"].encode("latin-1").decode("utf-8") == "/café"
    assert seen["QUERY_STRING"] == "q=a%20b&x=1"
    assert seen["REMOTE_ADDR"] == "127.0.0.1"
    assert (seen["HTTP_X_MULTI"], seen["HTTP_COOKIE"], seen["HTTP_HOST"]) == (
        "one,two",
        "a=1;b=2",
        "test",
    )
    assert seen["CONTENT_LENGTH"] is None  # no body: nothing announced


def test_a_streaming_response_arrives_whole(server):
    port, _ = server
    status, body = _get(port, "/stream")
    assert status == 200
    assert body == b"".join(f"line {number}\n".encode() for number in range(1000))
